package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// stdioLines serves chat over a line transport and returns a function that
// sends one line and returns the answer line. Notifications the gateway
// sends meanwhile (a tools/list_changed once a discovery registered the
// tools may come before or after an answer) are skipped: the protocol does
// not order them against responses.
func stdioLines(t *testing.T, gw *Gateway, chat *runtime.Chat) func(line string) string {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- gw.ServeTransport(context.Background(), chat, &transport.LineTransport{Reader: sr, Writer: sw})
	}()
	t.Cleanup(func() {
		// The server may be writing a notification nobody reads (a
		// list_changed after its tools were registered): close both ends
		// before waiting for it.
		cw.Close()
		cr.Close()
		<-served
	})
	rd := bufio.NewReader(cr)
	return func(line string) string {
		t.Helper()
		if _, err := io.WriteString(cw, line+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			answer, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("no answer to %s: %v", line, err)
			}
			var msg struct {
				Method string `json:"method"`
			}
			if json.Unmarshal([]byte(answer), &msg) == nil && strings.HasPrefix(msg.Method, "notifications/") {
				continue
			}
			return answer
		}
	}
}

// responseError decodes the error of a JSON-RPC response line (nil: none).
func responseError(t *testing.T, line string) *jsonrpc.Error {
	t.Helper()
	var resp struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("not a JSON-RPC response: %q", line)
	}
	return resp.Error
}

func initRequest(version string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
}

// A request before initialize gets a JSON-RPC error with a valid code. The
// go-sdk answered it with code 0, which no client can classify.
func TestGatewayRequestBeforeInitialize(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(noLeaks(t))})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", t.TempDir())
	send := stdioLines(t, gw, chat)

	for _, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo"}}`,
	} {
		e := responseError(t, send(req))
		if e == nil || e.Code != codeNotInitialized || !strings.Contains(e.Message, "initialization") {
			t.Errorf("%s before initialize: %+v, want code %d", req, e, codeNotInitialized)
		}
	}
	if e := responseError(t, send(initRequest("2025-06-18"))); e != nil {
		t.Fatalf("initialize: %v", e)
	}
	if e := responseError(t, send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)); e != nil {
		t.Errorf("tools/list after initialize: %v", e)
	}
	if e := responseError(t, send(`{"jsonrpc":"2.0","id":3,"method":"foo/bar"}`)); e == nil || e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("unknown method over stdio: %+v", e)
	}
}

// openSession opens an MCP session on url with raw requests and returns
// its id.
func openSession(t *testing.T, client *http.Client, url, version string) string {
	t.Helper()
	code, hdr, body := rawMCP(t, client, "POST", url, initRequest(version))
	sid := hdr.Get(sessionHeader)
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	if code, _, body := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeader, sid); code != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", code, body)
	}
	return sid
}

// Over HTTP an unknown method in a session is the JSON-RPC error -32601, as
// over stdio; the SDK answered a plain-text 400. A POST without a session
// id that is not an initialize gets 400 and opens no session, also for a
// chat that is served.
func TestGatewayHTTPUnknownMethodAndNoSession(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(noLeaks(t))})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: filepath.Join(t.TempDir(), "chats")})
	base, client := httpGateway(t, gw)
	url := base + "/chats/a/mcp"
	sid := openSession(t, client, url, "2025-06-18")

	code, hdr, body := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","id":"x","method":"foo/bar","params":{}}`, sessionHeader, sid)
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("unknown method: %d %s %q", code, hdr.Get("Content-Type"), body)
	}
	var resp jsonrpc.Response
	msg, err := jsonrpc.DecodeMessage([]byte(strings.TrimSpace(body)))
	if r, ok := msg.(*jsonrpc.Response); err == nil && ok {
		resp = *r
	}
	var werr *jsonrpc.Error
	if e, ok := resp.Error.(*jsonrpc.Error); ok {
		werr = e
	}
	if werr == nil || werr.Code != jsonrpc.CodeMethodNotFound || resp.ID != mustID("x") {
		t.Errorf("unknown method: %q", body)
	}
	// The session goes on.
	if code, _, body := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, sessionHeader, sid); code != http.StatusOK || !strings.Contains(body, `"echo"`) {
		t.Errorf("tools/list after it: %d %s", code, body)
	}

	before := len(slices.Collect(gw.chats["a"].server.Sessions()))
	for _, req := range []string{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":4,"method":"foo/bar"}`} {
		if code, _, body := rawMCP(t, client, "POST", url, req); code != http.StatusBadRequest || !strings.Contains(body, "initialize") {
			t.Errorf("%s without a session id: %d %s", req, code, body)
		}
	}
	if after := len(slices.Collect(gw.chats["a"].server.Sessions())); after != before {
		t.Errorf("POSTs without a session id opened sessions: %d, then %d", before, after)
	}
}

func mustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}

// A browser page of a foreign origin gets 403 on every endpoint (the
// DNS-rebinding rule); pages on loopback and clients without Origin pass.
func TestGatewayOrigin(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(noLeaks(t))})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: filepath.Join(t.TempDir(), "chats")})
	base, client := httpGateway(t, gw)
	url := base + "/chats/a/mcp"
	sid := openSession(t, client, url, "2025-06-18")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

	for _, origin := range []string{"http://evil.example", "https://evil.example:443", "null", "http://127.0.0.1.evil.example", "file://", "chrome-extension://abc"} {
		if code, _, body := rawMCP(t, client, "POST", url, list, sessionHeader, sid, "Origin", origin); code != http.StatusForbidden {
			t.Errorf("Origin %s on the MCP endpoint: %d %s", origin, code, body)
		}
		if code, _, body := rawMCP(t, client, "POST", base+"/chats/a/reset", "", "Origin", origin); code != http.StatusForbidden {
			t.Errorf("Origin %s on reset: %d %s", origin, code, body)
		}
		if code, _, body := rawMCP(t, client, "GET", base+"/status", "", "Origin", origin); code != http.StatusForbidden {
			t.Errorf("Origin %s on status: %d %s", origin, code, body)
		}
	}
	for _, origin := range []string{"", "http://localhost:3000", "http://127.0.0.1:8080", "https://[::1]:9000", "http://LOCALHOST"} {
		if code, _, body := rawMCP(t, client, "POST", url, list, sessionHeader, sid, "Origin", origin); code != http.StatusOK {
			t.Errorf("Origin %q on the MCP endpoint: %d %s", origin, code, body)
		}
		if code, _, body := rawMCP(t, client, "GET", base+"/status", "", "Origin", origin); code != http.StatusOK {
			t.Errorf("Origin %q on status: %d %s", origin, code, body)
		}
	}
}

// sseEvent is one event of an SSE answer.
type sseEvent struct{ id, name, data, retry string }

func parseSSE(body string) []sseEvent {
	var out []sseEvent
	for _, block := range strings.Split(body, "\n\n") {
		var e sseEvent
		for _, line := range strings.Split(block, "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimPrefix(v, " ")
			switch k {
			case "id":
				e.id = v
			case "event":
				e.name = v
			case "data":
				e.data += v
			case "retry":
				e.retry = v
			}
		}
		if e != (sseEvent{}) {
			out = append(out, e)
		}
	}
	return out
}

// SSE streams are resumable: events carry ids, a GET with Last-Event-ID
// replays what followed, and every SSE answer starts with a retry hint.
func TestGatewayResumableStreams(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(noLeaks(t))})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: filepath.Join(t.TempDir(), "chats")})
	base, client := httpGateway(t, gw)
	url := base + "/chats/a/mcp"
	const version = "2025-11-25" // priming events came with it
	sid := openSession(t, client, url, version)

	code, _, body := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, sessionHeader, sid, "MCP-Protocol-Version", version)
	if code != http.StatusOK {
		t.Fatalf("tools/list: %d %s", code, body)
	}
	events := parseSSE(body)
	if len(events) < 3 || events[0].retry != fmt.Sprint(sseRetry.Milliseconds()) {
		t.Fatalf("the answer does not start with the retry hint: %q", body)
	}
	prime, answer := events[1], events[len(events)-1]
	if prime.id == "" || answer.id == "" || !strings.Contains(answer.data, `"echo"`) {
		t.Fatalf("events without ids: %q", body)
	}
	// The client lost the stream after the priming event: it resumes.
	code, _, body = rawMCP(t, client, "GET", url, "", sessionHeader, sid, "MCP-Protocol-Version", version, "Last-Event-ID", prime.id)
	if code != http.StatusOK {
		t.Fatalf("GET with Last-Event-ID: %d %s", code, body)
	}
	replayed := parseSSE(body)
	if !slices.ContainsFunc(replayed, func(e sseEvent) bool { return e.id == answer.id && e.data == answer.data }) {
		t.Errorf("the resumed stream does not replay the answer %q: %q", answer.id, body)
	}
}

// The gateway negotiates the same protocol versions over stdio and HTTP,
// and an HTTP request with another MCP-Protocol-Version gets 400 naming
// only the accepted ones. Over stdio the go-sdk's server also spoke the
// sessionless protocol (server/discover) that no chat over HTTP can.
func TestGatewayProtocolVersions(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(noLeaks(t))})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: filepath.Join(t.TempDir(), "chats")})
	base, client := httpGateway(t, gw)
	accepted := GatewayProtocolVersions()
	if slices.Contains(accepted, runtime.SessionlessVersion) || len(accepted) == 0 {
		t.Fatalf("accepted versions %v", accepted)
	}

	// Raw initialize requests: every version asked for gets the same answer.
	for i, asked := range append([]string{"1999-01-01", runtime.SessionlessVersion}, accepted...) {
		chat, _ := h.Chat(fmt.Sprintf("s%d", i), t.TempDir())
		overStdio := negotiated(t, stdioLines(t, gw, chat)(initRequest(asked)))
		code, _, body := rawMCP(t, client, "POST", fmt.Sprintf("%s/chats/h%d/mcp", base, i), initRequest(asked))
		events := parseSSE(body)
		if code != http.StatusOK || len(events) == 0 {
			t.Fatalf("initialize over HTTP: %d %s", code, body)
		}
		overHTTP := negotiated(t, events[len(events)-1].data)
		if overStdio != overHTTP || !slices.Contains(accepted, overStdio) {
			t.Errorf("asked for %s: %s over stdio, %s over HTTP", asked, overStdio, overHTTP)
		}
	}

	// The go-sdk's own client, which tries server/discover first.
	chat, _ := h.Chat("sdk", t.TempDir())
	viaStdio := connectInMemory(t, gw, chat, nil).InitializeResult().ProtocolVersion
	viaHTTP := connectHTTP(t, client, base+"/chats/sdkhttp/mcp").InitializeResult().ProtocolVersion
	if viaStdio != viaHTTP || viaStdio != accepted[0] {
		t.Errorf("the go-sdk client negotiates %s over stdio and %s over HTTP, want %s", viaStdio, viaHTTP, accepted[0])
	}

	sid := openSession(t, client, base+"/chats/v/mcp", accepted[0])
	for _, header := range []string{runtime.SessionlessVersion, "1999-01-01"} {
		code, _, body := rawMCP(t, client, "POST", base+"/chats/v/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, sessionHeader, sid, "MCP-Protocol-Version", header)
		if code != http.StatusBadRequest || !strings.Contains(body, strings.Join(accepted, ", ")) || strings.Contains(body, runtime.SessionlessVersion+",") || strings.Contains(body, ", "+runtime.SessionlessVersion) {
			t.Errorf("MCP-Protocol-Version %s: %d %s", header, code, body)
		}
	}
}

// negotiated is the protocol version of an initialize response.
func negotiated(t *testing.T, data string) string {
	t.Helper()
	var resp struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(data), &resp); err != nil || resp.Result.ProtocolVersion == "" {
		t.Fatalf("not an initialize result: %q", data)
	}
	return resp.Result.ProtocolVersion
}

// serverMethods is the go-sdk server's list: each of its methods, sent as
// its kind (a call, or a notification), reaches a session (whatever it
// answers), and without params only those that need them are refused;
// any other gets the SDK's plain-text 400, which the gateway replaces.
func TestServerMethodsAreTheSDKs(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	gwlike := http.NewServeMux()
	gwlike.Handle("/mcp", handler)
	base, client := httpGatewayHandler(t, gwlike)
	sid := openSession(t, client, base+"/mcp", "2025-06-18")
	refused := func(method string, call bool, params string) (bool, string) {
		id := ""
		if call {
			id = `"id":9,`
		}
		code, hdr, body := rawMCP(t, client, "POST", base+"/mcp", `{"jsonrpc":"2.0",`+id+`"method":"`+method+`"`+params+`}`, sessionHeader, sid)
		return code == http.StatusBadRequest && strings.HasPrefix(hdr.Get("Content-Type"), "text/plain"), body
	}
	for m, kind := range serverMethods {
		if m == "initialize" || m == "subscriptions/listen" {
			continue // they would start something else
		}
		call := kind&notification == 0
		if no, body := refused(m, call, `,"params":{}`); no {
			t.Errorf("the SDK does not take %s (call %v): %s", m, call, body)
		}
		if no, body := refused(m, call, ``); no != (kind&needsParams != 0) || (no && !strings.Contains(body, "missing required")) {
			t.Errorf("%s without params: refused %v (%s), the list says it needs params: %v", m, no, body, kind&needsParams != 0)
		}
		if no, _ := refused(m, !call, `,"params":{}`); !no {
			t.Errorf("the SDK takes %s as a call %v too", m, !call)
		}
	}
	if no, _ := refused("foo/bar", true, `,"params":{}`); !no {
		t.Error("the SDK handles foo/bar: its refusal of unknown methods changed")
	}
	if no, _ := refused("notifications/foo", false, ``); !no {
		t.Error("the SDK takes notifications/foo: its refusal of unknown notifications changed")
	}
}

// What the SDK's handler refuses before a session, the gateway answers in
// a session as over stdio, and as mcpc's own Streamable HTTP server did: an
// unknown notification, or a call's method sent as a notification, is
// accepted and dropped (202); a call without the params its method needs
// is the JSON-RPC error -32600. In both profiles; the session goes on.
func TestHTTPRefusalsBeforeSessionAsOverStdio(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: filepath.Join(t.TempDir(), "chats")})
	base, client := httpGateway(t, gw)
	cb := newTestCraftbot(t, cbPlan(false, cbStdio("fs", "-tools", "echo")), marker, runtime.CraftbotOptions{})
	cbSrv := httptest.NewServer(cb.Handler(CraftbotHTTPOptions{}))
	t.Cleanup(cbSrv.Close)
	t.Cleanup(cb.CloseSessions)
	for _, c := range []struct {
		url    string
		client *http.Client
	}{{base + "/chats/a/mcp", client}, {cbSrv.URL + "/mcp", cbSrv.Client()}} {
		sid := openSession(t, c.client, c.url, "2025-11-25")
		session := []string{sessionHeader, sid, "Mcp-Protocol-Version", "2025-11-25"}
		for _, body := range []string{`{"jsonrpc":"2.0","method":"notifications/foo"}`, `{"jsonrpc":"2.0","method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/progress"}`} {
			if code, _, text := rawMCP(t, c.client, "POST", c.url, body, session...); code != http.StatusAccepted {
				t.Errorf("%s: %s: %d %q, want 202", c.url, body, code, text)
			}
		}
		code, _, text := rawMCP(t, c.client, "POST", c.url, `{"jsonrpc":"2.0","id":1.5,"method":"tools/call"}`, session...)
		if code != http.StatusOK || !answerWithID(text, "1.5") || !strings.Contains(text, `"code":-32600`) || !strings.Contains(text, `missing required \"params\"`) {
			t.Errorf("%s: tools/call without params: %d %q", c.url, code, text)
		}
		if code, _, text := rawMCP(t, c.client, "POST", c.url, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, session...); code != http.StatusOK || !strings.Contains(text, `"result":{}`) {
			t.Errorf("%s: ping after: %d %q", c.url, code, text)
		}
	}
}

// httpGatewayHandler serves any handler on 127.0.0.1 for the test.
func httpGatewayHandler(t *testing.T, h http.Handler) (string, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, srv.Client()
}

// Downstream, a server that answered server/discover with -32601 once is
// not asked again by the same host: its later processes (a chat's, a
// restart's) start with initialize at once. A server that answers it is
// asked every time.
func TestDownstreamSkipsDiscoverOnceRefused(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	legacyLog, modernLog := filepath.Join(dir, "legacy.log"), filepath.Join(dir, "modern.log")
	legacy := testServer("legacy", "-no-discover", "-method-log", legacyLog)
	modern := testServer("modern", "-method-log", modernLog)
	modern.ToolPrefix = "m_"
	h := newTestHost(t, testPlan(legacy, modern), runtime.HostOptions{Env: testEnv(marker)})
	chat, err := h.Chat("c", filepath.Join(dir, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The discoveries first: a chat process started alongside a server's
	// first discovery (early.go) cannot know yet and asks too.
	if _, err := chat.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 { // discovery, then two processes of the chat
		for _, tool := range []string{"echo", "m_echo"} {
			if _, err := chat.Call(ctx, tool, map[string]any{"text": "hi"}); err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
		}
		for _, s := range []string{"legacy", "modern"} {
			if err := chat.Restart(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(log, method string) int {
		n := 0
		for _, l := range lines(t, log) {
			if l == method {
				n++
			}
		}
		return n
	}
	if d, i := count(legacyLog, "server/discover"), count(legacyLog, "initialize"); d != 1 || i != 3 {
		t.Errorf("the legacy server got %d server/discover and %d initialize over 3 processes, want 1 and 3:\n%s", d, i, strings.Join(lines(t, legacyLog), "\n"))
	}
	if d := count(modernLog, "server/discover"); d != 3 {
		t.Errorf("the modern server got %d server/discover over 3 processes, want 3", d)
	}
}
