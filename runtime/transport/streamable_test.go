package transport

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// streamableFixture is a StreamableServer on 127.0.0.1 in front of an
// mcp.Server with an echo tool and a tool that waits for its release.
type streamableFixture struct {
	server  *mcp.Server
	url     string
	client  *http.Client
	release chan struct{} // closing it ends every "wait" call
	waiting chan struct{} // a "wait" call started
}

func newStreamableFixture(t *testing.T) *streamableFixture {
	t.Helper()
	f := &streamableFixture{release: make(chan struct{}), waiting: make(chan struct{}, 16)}
	f.server = mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	mcp.AddTool(f.server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ Text string }) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(f.server, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		f.waiting <- struct{}{}
		select {
		case <-f.release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
	})
	h := NewStreamableServer(f.server, StreamableOptions{EventStore: mcp.NewMemoryEventStore(nil), Retry: time.Second})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body *Body
		if r.Method == http.MethodPost {
			data, err := io.ReadAll(r.Body)
			if err == nil {
				body, err = DecodeBody(data)
			}
			if err != nil {
				http.Error(w, "malformed payload: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		h.Serve(w, r, "", body)
	}))
	tr := &http.Transport{}
	f.client, f.url = &http.Client{Transport: tr}, srv.URL
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		tr.CloseIdleConnections()
	})
	return f
}

// post sends one body; sid may be "".
func (f *streamableFixture) post(t *testing.T, ctx context.Context, sid, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// request sends a request without a body, as GET or DELETE do.
func (f *streamableFixture) request(t *testing.T, ctx context.Context, method, sid string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, f.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// initialize opens a session and returns its id.
func (f *streamableFixture) initialize(t *testing.T) string {
	t.Helper()
	resp := f.post(t, context.Background(), "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	defer resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	if ev := nextMessage(t, bufio.NewReader(resp.Body)); !strings.Contains(ev.data, `"serverInfo"`) {
		t.Fatalf("initialize answered %q", ev.data)
	}
	resp = f.post(t, context.Background(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d, want 202", resp.StatusCode)
	}
	return sid
}

type sseEvent struct{ name, id, data string }

// nextEvent reads one SSE event; io.EOF at the end of the stream.
func nextEvent(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	seen := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				return ev, nil
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.name, seen = value, true
		case "id":
			ev.id, seen = value, true
		case "data":
			ev.data, seen = value, true
		}
	}
}

// nextMessage reads up to the next "message" event.
func nextMessage(t *testing.T, r *bufio.Reader) sseEvent {
	t.Helper()
	for {
		ev, err := nextEvent(r)
		if err != nil {
			t.Fatalf("the stream ended before a message: %v", err)
		}
		if ev.name == "message" {
			return ev
		}
	}
}

// A POST of a call is answered with an SSE stream that starts with the
// retry hint and a priming event, and carries the answer; the session
// takes notifications with 202; DELETE ends it, and the session id is
// then unknown (404) to every method.
func TestStreamableSessionLifecycle(t *testing.T) {
	noLeaks(t)
	f := newStreamableFixture(t)
	sid := f.initialize(t)

	resp := f.post(t, context.Background(), sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"Text":"hi"}}}`)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("call: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	text := string(raw)
	if !strings.HasPrefix(text, "retry: 1000\n\nevent: prime\nid: ") || !strings.Contains(text, `"text":"hi"`) {
		t.Fatalf("call answered:\n%s", text)
	}

	if len(slicesOf(f.server.Sessions())) != 1 {
		t.Fatal("the server has no session")
	}
	resp = f.request(t, context.Background(), http.MethodDelete, sid)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d, want 204", resp.StatusCode)
	}
	if n := len(slicesOf(f.server.Sessions())); n != 0 {
		t.Fatalf("%d sessions after DELETE", n)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		var resp *http.Response
		if method == http.MethodPost {
			resp = f.post(t, context.Background(), sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		} else {
			resp = f.request(t, context.Background(), method, sid)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s to an ended session: %d, want 404", method, resp.StatusCode)
		}
	}
}

func slicesOf[T any](seq func(func(T) bool)) []T {
	var out []T
	for v := range seq {
		out = append(out, v)
	}
	return out
}

// What the transport refuses before the server sees it: a session that
// does not start with an initialize, the wrong media types, a POST with
// Last-Event-ID, a batch in a protocol version without batches, a call
// id already in flight; and a method it does not serve.
func TestStreamableRefusals(t *testing.T) {
	noLeaks(t)
	f := newStreamableFixture(t)
	sid := f.initialize(t)
	status := func(req *http.Request) int {
		t.Helper()
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	newPost := func(sid, body string) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		return req
	}
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	cases := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"no session, not an initialize", newPost("", ping), http.StatusBadRequest},
		{"text/plain body", func() *http.Request { r := newPost(sid, ping); r.Header.Set("Content-Type", "text/plain"); return r }(), http.StatusUnsupportedMediaType},
		{"Accept without SSE", func() *http.Request { r := newPost(sid, ping); r.Header.Set("Accept", "application/json"); return r }(), http.StatusBadRequest},
		{"POST with Last-Event-ID", func() *http.Request { r := newPost(sid, ping); r.Header.Set("Last-Event-ID", "1_0"); return r }(), http.StatusBadRequest},
		{"batch in 2025-11-25", newPost(sid, "["+ping+"]"), http.StatusBadRequest},
		{"PUT", func() *http.Request { r, _ := http.NewRequest(http.MethodPut, f.url, nil); return r }(), http.StatusMethodNotAllowed},
		{"GET without SSE in Accept", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, f.url, nil)
			r.Header.Set("Mcp-Session-Id", sid)
			return r
		}(), http.StatusBadRequest},
		{"GET with a malformed Last-Event-ID", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, f.url, nil)
			r.Header.Set("Mcp-Session-Id", sid)
			r.Header.Set("Accept", "text/event-stream")
			r.Header.Set("Last-Event-ID", "1_2_3")
			return r
		}(), http.StatusBadRequest},
		{"DELETE without a session", func() *http.Request { r, _ := http.NewRequest(http.MethodDelete, f.url, nil); return r }(), http.StatusBadRequest},
	}
	for _, c := range cases {
		if got := status(c.req); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}

	// A call id in flight on the session is refused for a second call.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := f.post(t, ctx, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	defer waiting.Body.Close()
	<-f.waiting
	dup := f.post(t, context.Background(), sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	body, _ := io.ReadAll(dup.Body)
	dup.Body.Close()
	if dup.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "duplicate in-flight request ID") {
		t.Errorf("a duplicate call id: %d %s", dup.StatusCode, body)
	}
	close(f.release)
	if ev := nextMessage(t, bufio.NewReader(waiting.Body)); !strings.Contains(ev.data, "released") {
		t.Errorf("the waiting call answered %q", ev.data)
	}

	// One id twice in one batch (a protocol version with batches) is
	// refused too: its second call would never be answered, and the
	// session would count a call in flight for good.
	batch := newPost(sid, "["+ping+","+strings.Replace(ping, "ping", "tools/list", 1)+"]")
	batch.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	resp, err := f.client.Do(batch)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "duplicate in-flight request ID 7") {
		t.Errorf("a batch with one id twice: %d %s", resp.StatusCode, body)
	}
}

// A notification the server sends outside any call (tools/list_changed)
// reaches the session's GET stream; a second GET stream is refused (409).
func TestStreamableGETStreamGetsServerNotifications(t *testing.T) {
	noLeaks(t)
	f := newStreamableFixture(t)
	sid := f.initialize(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := f.request(t, ctx, http.MethodGet, sid)
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", get.StatusCode)
	}
	r := bufio.NewReader(get.Body)
	// The stream's headers and its first bytes arrive before any event.
	if line, err := r.ReadString('\n'); err != nil || line != "retry: 1000\n" {
		t.Fatalf("GET stream starts with %q, %v", line, err)
	}
	second := f.request(t, context.Background(), http.MethodGet, sid)
	second.Body.Close()
	if second.StatusCode != http.StatusConflict {
		t.Errorf("a second GET stream: %d, want 409", second.StatusCode)
	}

	mcp.AddTool(f.server, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	ev := nextMessage(t, r)
	if !strings.Contains(ev.data, `"notifications/tools/list_changed"`) || ev.id == "" {
		t.Fatalf("GET stream got %+v", ev)
	}
}

// Calls POSTed at once on one session each get their own answer.
func TestStreamableConcurrentPOSTs(t *testing.T) {
	noLeaks(t)
	f := newStreamableFixture(t)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: f.client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("call %d", i)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"Text": want}})
			if err != nil {
				errs <- err
				return
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != want {
				errs <- fmt.Errorf("asked %q, got %q", want, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A client that goes away in the middle of a call leaves no goroutine of
// the request behind; the answer, written after it left, waits in the
// event store, and a GET with the Last-Event-ID of the priming event gets
// it.
func TestStreamableClientLeavesMidStream(t *testing.T) {
	noLeaks(t)
	f := newStreamableFixture(t)
	sid := f.initialize(t)
	ctx, cancel := context.WithCancel(context.Background())
	resp := f.post(t, ctx, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	<-f.waiting
	// The priming event comes before any answer, with the id to resume
	// from.
	prime, err := nextEvent(bufio.NewReader(resp.Body))
	if err != nil || prime.name != "prime" || prime.id == "" {
		t.Fatalf("first event %+v, %v", prime, err)
	}
	cancel()
	resp.Body.Close()
	close(f.release)

	// Until the server has seen the client leave, the stream is still
	// held (409), as a client that reconnects at once may find.
	var get *http.Response
	eventually(t, "the server lets go of the stream", func() bool {
		get = f.request(t, context.Background(), http.MethodGet, sid, "Last-Event-ID", prime.id)
		if get.StatusCode == http.StatusConflict {
			get.Body.Close()
			return false
		}
		return true
	})
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET with Last-Event-ID: %d", get.StatusCode)
	}
	ev := nextMessage(t, bufio.NewReader(get.Body))
	if !strings.Contains(ev.data, `"id":3`) || !strings.Contains(ev.data, "released") {
		t.Fatalf("replayed %+v", ev)
	}
}

// The retry hint and the priming event are flushed before the server
// has the call (a client takes an answer that has not started as a request
// never sent); an answer that ends the stream is not flushed on its own:
// the end of the response carries it.
func TestStreamableAnswerFlushesOnce(t *testing.T) {
	noLeaks(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	h := NewStreamableServer(server, StreamableOptions{EventStore: mcp.NewMemoryEventStore(nil), Retry: time.Second})
	defer h.Close()
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	w := &countingWriter{header: http.Header{}}
	body, err := DecodeBody([]byte(init))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.Serve(w, req, "", body)
	if w.flushes != 1 || w.writes != 2 {
		t.Errorf("%d writes and %d flushes for one answer, want 2 and 1", w.writes, w.flushes)
	}
	if w.flushedAt != len("retry: 1000\n\nevent: prime\nid: 1_0\ndata: \n\n") {
		t.Errorf("flushed %d bytes before the answer:\n%s", w.flushedAt, w.body.Bytes())
	}
	if !bytes.HasPrefix(w.body.Bytes(), []byte("retry: 1000\n\nevent: prime\n")) || !bytes.Contains(w.body.Bytes(), []byte(`"serverInfo"`)) {
		t.Errorf("answered:\n%s", w.body.Bytes())
	}
}

type countingWriter struct {
	header          http.Header
	body            bytes.Buffer
	writes, flushes int
	flushedAt       int // bytes written at the first flush
	status          int
}

func (w *countingWriter) Header() http.Header  { return w.header }
func (w *countingWriter) WriteHeader(code int) { w.status = code }
func (w *countingWriter) Write(b []byte) (int, error) {
	w.writes++
	return w.body.Write(b)
}
func (w *countingWriter) Flush() {
	if w.flushes == 0 {
		w.flushedAt = w.body.Len()
	}
	w.flushes++
}

// DecodeBody decodes what DecodeMessage decodes, one message or a batch,
// and never panics; an event id parses back to what it was made of.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		` [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[]`, `[`, `{"jsonrpc":"2.0","id":1,"result":{}}`, "\n", `[[[[`, `{"jsonrpc":"2.0","id":null,"method":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := DecodeBody(data)
		if err != nil {
			return
		}
		if len(body.Messages) == 0 {
			t.Fatalf("%q: no message and no error", data)
		}
		if !body.Batch {
			msg, err := DecodeMessage(bytes.TrimSpace(data))
			if err != nil {
				t.Fatalf("%q: DecodeBody took what DecodeMessage refuses: %v", data, err)
			}
			a, _ := jsonrpc.EncodeMessage(msg)
			b, _ := jsonrpc.EncodeMessage(body.Messages[0])
			if !bytes.Equal(a, b) {
				t.Fatalf("%q: %s, DecodeMessage %s", data, b, a)
			}
		}
		for _, msg := range body.Messages {
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				t.Fatalf("%q: a decoded message does not encode: %v", data, err)
			}
		}
	})
}

func FuzzParseEventID(f *testing.F) {
	for _, seed := range []string{"1_0", "_3", "a_b", "1_-1", "1_2_3", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, eid string) {
		id, idx, ok := parseEventID(eid)
		if !ok {
			return
		}
		if idx < 0 || strings.Contains(id, "_") {
			t.Fatalf("%q parsed to %q, %d", eid, id, idx)
		}
		if back, _, _ := parseEventID(id + "_" + fmt.Sprint(idx)); back != id {
			t.Fatalf("%q: %q does not round-trip", eid, id)
		}
	})
}
