package remoteset

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clock"
	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

// Tests of a set of remote servers on its own (Set), as `mcpc
// remote list` and `mcpc tools` use it; remote_test.go has them in a chat.

const testScope = "chat-1"

// notOpening is a sealed value of the right shape that opens for no entry.
const notOpening = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="

// newRemoteSet returns a set of remote servers of its own for workspace ws
// and testScope, on clock c (nil: the real clock), with patient dialing;
// mod changes its options. The test closes it.
func newRemoteSet(t *testing.T, ws string, c clock.Clock, mod func(*Options)) *Set {
	t.Helper()
	opts := Options{Secret: remoteSecret, Dial: patientDial}
	if mod != nil {
		mod(&opts)
	}
	if c == nil {
		c = clock.Real{}
	}
	m, err := New(ws, testScope, opts, Hooks{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func list(t *testing.T, m *Set) *Listing {
	t.Helper()
	l, err := m.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func visible(l *Listing) string {
	var out []string
	for _, tool := range l.Tools {
		out = append(out, tool.Name)
	}
	return strings.Join(out, ",")
}

func statusOf(l *Listing, name string) ServerStatus {
	for _, s := range l.Servers {
		if s.Name == name {
			return s
		}
	}
	return ServerStatus{}
}

func resultJSON(r *mcp.CallToolResult) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func TestRemoteServersConnectsListsAndCalls(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: remoteCanary})
	wiki := remotetest.Start(t, remotetest.Options{Transport: "sse", Tools: []string{"a.b"}})
	bearerKey, _ := remote.Bearer(remoteCanary)
	addRemote(t, ws, testScope, remote.Server{Name: "notes", URL: notes.URL + "?key=q", Tools: []string{"echo", "whoami", "fail", "missing"}}, bearerKey)
	addRemote(t, ws, testScope, remote.Server{Name: "wiki", URL: wiki.URL}, remote.Headers{"X-Team": "team-" + remoteCanary})
	m := newRemoteSet(t, ws, nil, nil)
	m.Start()
	l := list(t, m)
	if got := visible(l); got != "notes__echo,notes__fail,notes__whoami,wiki__a_b,wiki__drop,wiki__echo,wiki__fail,wiki__slow,wiki__whoami" {
		t.Errorf("tools %s", got)
	}
	ns, wsStatus := statusOf(l, "notes"), statusOf(l, "wiki")
	if ns.State != "connected · 3 tools" || ns.Connected != "http" || ns.URL != strings.TrimSuffix(notes.URL, "?key=q") || strings.Join(ns.HeaderNames, ",") != "Authorization" || strings.Join(ns.Missing, ",") != "missing" {
		t.Errorf("notes %+v", ns)
	}
	if wsStatus.State != "connected · 6 tools" || wsStatus.Connected != "sse" || wsStatus.Allowlist != nil || wsStatus.ServerVersion != "1.2.3" {
		t.Errorf("wiki %+v", wsStatus)
	}
	var warned bool
	for _, w := range l.Warnings {
		warned = warned || w.Rule == rules.RemoteToolMissing.ID && strings.Contains(w.Message, `"missing"`)
	}
	if !warned || l.PromptSection() != "" {
		t.Errorf("warnings %v, prompt %q", l.Warnings, l.PromptSection())
	}
	for _, tool := range l.Tools {
		if tool.Name == "wiki__a_b" && (tool.ServerTool != "a.b" || tool.Server != "wiki" || tool.Def.Name != "wiki__a_b" || tool.Def.Description != "test tool a.b") {
			t.Errorf("%+v", tool)
		}
	}

	res, err := m.Call(context.Background(), "notes__echo", map[string]any{"text": "hello"})
	if err != nil || resultJSON(res) != `{"content":[{"type":"text","text":"hello"}]}` {
		t.Fatalf("echo: %v %s", err, resultJSON(res))
	}
	// A server that echoes the key: header values and the credential after
	// Bearer are redacted in text and structured content.
	for _, name := range []string{"notes__whoami", "wiki__whoami"} {
		res, err = m.Call(context.Background(), name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out := resultJSON(res); strings.Contains(out, "CANARY") || !strings.Contains(out, "[REDACTED]") {
			t.Errorf("%s: %s", name, out)
		}
	}
	_, err = m.Call(context.Background(), "notes__fail", map[string]any{"text": "x"})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != CallServerError || strings.Contains(err.Error(), "CANARY") || !strings.Contains(err.Error(), "remote server notes: ") || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("fail: %v", err)
	}
	if m.Redact("Bearer "+remoteCanary) != "[REDACTED]" || m.Redact(remoteCanary) != "[REDACTED]" || m.Redact("team-"+remoteCanary) != "[REDACTED]" {
		t.Error("Redact")
	}
	if _, err := m.Call(context.Background(), "notes__slow", nil); err == nil {
		t.Error("a tool outside the allowlist was called")
	}
	if notes.Calls("fail") != 1 || notes.Calls("slow") != 0 {
		t.Errorf("calls: fail %d, slow %d", notes.Calls("fail"), notes.Calls("slow"))
	}
}

func TestRemoteServersFirstListingWaitsAndShowsReasons(t *testing.T) {
	ws := t.TempDir()
	good := remotetest.Start(t, remotetest.Options{Transport: "http"})
	locked := remotetest.Start(t, remotetest.Options{Transport: "http", Token: remoteCanary})
	meet := newRendezvous()
	p, q := meet.server(t), meet.server(t)
	addRemote(t, ws, testScope, remote.Server{Name: "good", URL: good.URL}, remote.Headers{})
	addRemote(t, ws, testScope, remote.Server{Name: "p", URL: p}, remote.Headers{})
	addRemote(t, ws, testScope, remote.Server{Name: "locked", URL: locked.URL}, remote.Headers{"Authorization": "Bearer wrong-" + remoteCanary})
	addRemote(t, ws, testScope, remote.Server{Name: "gone", URL: remotetest.Refused(t)}, remote.Headers{})
	addRemote(t, ws, testScope, remote.Server{Name: "q", URL: q}, remote.Headers{})
	m := newRemoteSet(t, ws, clocktest.New(), nil)
	m.Start()
	st, _, _ := m.Status()
	if len(st) != 5 || st[1].State != "connecting" || st[4].State != "connecting" {
		t.Fatalf("right after Start: %v", st)
	}
	// p and q answer only once both were asked: had the connects run one
	// after the other, the listing would wait for ever.
	close(meet.open)
	l := list(t, m)
	want := map[string]string{
		"good":   "connected · 5 tools",
		"p":      "connected · 5 tools",
		"q":      "connected · 5 tools",
		"locked": "unavailable: 401 (Unauthorized)",
		"gone":   "unavailable: connection refused",
	}
	for name, w := range want {
		if got := statusOf(l, name).State; got != w {
			t.Errorf("%s: %q, want %q", name, got, w)
		}
	}
	if !strings.HasPrefix(visible(l), "good__drop,good__echo,good__fail,good__slow,good__whoami,p__drop,") {
		t.Errorf("tools %s", visible(l))
	}
	p2 := l.PromptSection()
	if !strings.Contains(p2, "- locked is unavailable: 401 (Unauthorized)\n") || strings.Contains(p2, "CANARY") {
		t.Errorf("prompt section:\n%s", p2)
	}
	if _, err := m.Call(context.Background(), "locked__echo", nil); err == nil {
		t.Error("a tool of an unavailable server was called")
	}
}

// rendezvous holds every request to its servers until it is opened and
// each of them has received one: servers that are only ever asked one after
// the other never answer.
type rendezvous struct {
	open chan struct{} // closed by the test
	all  chan struct{} // closed once every server was asked

	mu               sync.Mutex
	members, arrived int
}

func newRendezvous() *rendezvous {
	return &rendezvous{open: make(chan struct{}), all: make(chan struct{})}
}

// server starts one more server of the rendezvous (before any is asked)
// and returns its URL.
func (r *rendezvous) server(t *testing.T) string {
	t.Helper()
	r.mu.Lock()
	r.members++
	r.mu.Unlock()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	var once sync.Once
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		once.Do(r.arrive)
		for _, wait := range []chan struct{}{r.open, r.all} {
			select {
			case <-wait:
			case <-req.Context().Done():
				return
			}
		}
		srv.HTTP.Config.Handler.ServeHTTP(w, req)
	}))
	t.Cleanup(held.Close)
	return held.URL + "/mcp"
}

func (r *rendezvous) arrive() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.arrived++
	if r.arrived == r.members {
		close(r.all)
	}
}

// A server that never answers is unavailable "no answer within" the
// handshake timeout, in the listing and in the prompt section.
func TestRemoteServersHandshakeTimeout(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	addRemote(t, ws, testScope, remote.Server{Name: "never", URL: remotetest.NeverAnswers(t)}, remote.Headers{})
	m := newRemoteSet(t, ws, clocktest.New(), func(o *Options) { o.Dial.HandshakeTimeout = 400 * time.Millisecond })
	m.Start()
	l := list(t, m)
	if got := statusOf(l, "never").State; got != "unavailable: no answer within 400ms" {
		t.Errorf("never: %q", got)
	}
	if p := l.PromptSection(); !strings.Contains(p, "- never is unavailable: no answer within 400ms\n") {
		t.Errorf("prompt section:\n%s", p)
	}
	if _, err := m.Call(context.Background(), "never__echo", nil); err == nil {
		t.Error("a tool of an unavailable server was called")
	}
}

// An unreachable server is retried before later listings, 1, 2, 4, 8, 15
// minutes after each failure (a settable clock), and comes back when it
// answers.
func TestRemoteServersRetrySchedule(t *testing.T) {
	ws := t.TempDir()
	// A port where nothing listens yet; the server starts there later.
	l0, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l0.Addr().String()
	l0.Close()
	addRemote(t, ws, testScope, remote.Server{Name: "late", URL: "http://" + addr + "/mcp"}, remote.Headers{})
	c := clocktest.New()
	m := newRemoteSet(t, ws, c, nil)
	attempts := func() int { return m.failuresOf("late") }

	l := list(t, m)
	if s := statusOf(l, "late"); s.State != "unavailable: connection refused" || !s.RetryAt.Equal(c.Now().Add(time.Minute)) {
		t.Fatalf("%+v", s)
	}
	var delays []time.Duration
	for i := 0; i < 6; i++ {
		before := attempts()
		next := statusOf(list(t, m), "late").RetryAt
		if attempts() != before {
			t.Fatalf("retried before its time")
		}
		delay := next.Sub(c.Now())
		delays = append(delays, delay)
		c.Advance(delay - time.Second)
		list(t, m)
		if attempts() != before {
			t.Fatalf("retried a second early")
		}
		c.Advance(time.Second)
		list(t, m)
		if attempts() != before+1 {
			t.Fatalf("not retried when due (attempt %d)", i)
		}
	}
	var got []string
	for _, d := range delays {
		got = append(got, d.String())
	}
	if strings.Join(got, " ") != "1m0s 2m0s 4m0s 8m0s 15m0s 15m0s" {
		t.Errorf("delays %v", got)
	}

	// The server comes up: the next due retry connects.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	late := httptest.NewUnstartedServer(srv.HTTP.Config.Handler)
	late.Listener.Close()
	late.Listener = ln
	late.Start()
	defer late.Close()
	if s := statusOf(list(t, m), "late"); s.Phase != Unavailable {
		t.Fatalf("retried before its time: %v", s)
	}
	c.Advance(15 * time.Minute)
	l = list(t, m)
	if s := statusOf(l, "late"); s.State != "connected · 5 tools" || visible(l) == "" {
		t.Errorf("after the server came up: %v", s)
	}
}

// failuresOf is how many failed attempts the server has behind it since
// its last success (a test helper).
func (m *Set) failuresOf(name string) int {
	n := -1
	m.withServer(name, func(s *server) { n = s.failures })
	return n
}

// withServer runs f on the server called name, under the server's lock (a
// test helper); not at all when there is none. The set's lock is not held
// meanwhile: a server takes it under its own (background).
func (m *Set) withServer(name string, f func(s *server)) {
	m.mu.Lock()
	servers := append([]*server(nil), m.servers...)
	m.mu.Unlock()
	for _, s := range servers {
		if s.entry.Name == name {
			s.mu.Lock()
			defer s.mu.Unlock()
			f(s)
			return
		}
	}
}

// A call that fails in the transport is not retried; it drops the
// connection and the next call reconnects.
func TestRemoteServersTransportFailureDropsTheConnection(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			ws := t.TempDir()
			srv := remotetest.Start(t, remotetest.Options{Transport: transport})
			addRemote(t, ws, testScope, remote.Server{Name: "s", URL: srv.URL, Transport: transport}, remote.Headers{})
			m := newRemoteSet(t, ws, nil, nil)
			list(t, m)
			// The server counts a handshake when it has handled the
			// client's notifications/initialized, which over sse may come
			// after the client's first listing.
			eventually(t, "the handshake", func() bool { return srv.Initialized.Load() == 1 })
			_, err := m.Call(context.Background(), "s__drop", nil)
			var ce *CallError
			if !errors.As(err, &ce) || ce.Kind != CallUnavailable || !strings.Contains(err.Error(), "the next call reconnects") || !strings.Contains(err.Error(), "not retried") {
				t.Fatalf("drop: %v", err)
			}
			res, err := m.Call(context.Background(), "s__echo", map[string]any{"text": "again"})
			if err != nil || !strings.Contains(resultJSON(res), "again") {
				t.Fatalf("after the drop: %v", err)
			}
			eventually(t, "a reconnect", func() bool { return srv.Initialized.Load() == 2 })
			// The reconnected connection is used again, not replaced.
			m.Call(context.Background(), "s__echo", map[string]any{"text": "x"})
			if srv.Initialized.Load() != 2 {
				t.Errorf("handshakes %d", srv.Initialized.Load())
			}
			// A retry of the failed call would have reached the server
			// before the calls that followed it.
			if srv.Calls("drop") != 1 {
				t.Errorf("drop was called %d times: a failed call is never retried", srv.Calls("drop"))
			}
		})
	}
}

func TestRemoteServersCallTimeoutCancelsAndDrops(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, testScope, remote.Server{Name: "s", URL: srv.URL}, remote.Headers{})
	m := newRemoteSet(t, ws, nil, nil)
	if remote.CallTimeout != 120*time.Second {
		t.Fatal("the default call timeout is not 120s")
	}
	list(t, m)
	// A short timeout for the call that never ends, and only for it: the
	// calls that must succeed keep the patient one.
	m.opts.CallTimeout = 300 * time.Millisecond
	_, err := m.Call(context.Background(), "s__slow", map[string]any{"ms": 600000})
	m.opts.CallTimeout = testservers.Patient
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != CallTimeout || err.Error() != "remote server s: no answer within 300ms; the call was cancelled" {
		t.Fatalf("%v", err)
	}
	waitFor(t, func() bool { return srv.Cancelled("slow") == 1 })
	if srv.Calls("slow") != 1 {
		t.Errorf("calls %d", srv.Calls("slow"))
	}
	// The server still answers: the connection stays.
	if _, err := m.Call(context.Background(), "s__echo", map[string]any{"text": "x"}); err != nil || srv.Initialized.Load() != 1 {
		t.Errorf("after the timeout: %v, handshakes %d", err, srv.Initialized.Load())
	}
	// The caller cancels once the server runs the call: notifications/cancelled,
	// the connection stays.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		testservers.Await(t, func() bool { return srv.Calls("slow") == 2 })
		cancel()
	}()
	if _, err := m.Call(ctx, "s__slow", map[string]any{"ms": 600000}); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("cancelled: %v", err)
	}
	waitFor(t, func() bool { return srv.Cancelled("slow") == 2 })
	if srv.Initialized.Load() != 1 {
		t.Errorf("handshakes %d", srv.Initialized.Load())
	}
}

// A server that stops answering altogether: the call times out, the ping
// after it fails, the connection is dropped and the next call reconnects.
func TestRemoteServersTimeoutOfADeadServerDrops(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, testScope, remote.Server{Name: "s", URL: srv.URL}, remote.Headers{})
	m := newRemoteSet(t, ws, nil, nil)
	list(t, m)
	// From now on the server accepts requests and never answers: the call
	// and the ping after it get short timeouts, which end them the same way
	// on any machine.
	srv.Hang.Store(true)
	m.opts.CallTimeout = 300 * time.Millisecond
	m.opts.Dial.ListTimeout = 300 * time.Millisecond
	if _, err := m.Call(context.Background(), "s__echo", map[string]any{"text": "x"}); err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("%v", err)
	}
	m.opts.CallTimeout = testservers.Patient
	waitFor(t, func() bool {
		dropped := false
		m.withServer("s", func(s *server) { dropped = s.conn == nil })
		return dropped
	})
	m.opts.Dial.ListTimeout = testservers.Patient
	srv.Hang.Store(false)
	if _, err := m.Call(context.Background(), "s__echo", map[string]any{"text": "x"}); err != nil || srv.Initialized.Load() != 2 {
		t.Errorf("after the drop: %v, handshakes %d", err, srv.Initialized.Load())
	}
}

// waitFor waits until cond holds (testservers.WaitUntil).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testservers.WaitUntil(t, "the condition holds", cond)
}

// Calls of one tool run one at a time; different tools run side by side.
func TestRemoteServersOneCallAtATimePerTool(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, testScope, remote.Server{Name: "a", URL: srv.URL}, remote.Headers{})
	addRemote(t, ws, testScope, remote.Server{Name: "b", URL: srv.URL}, remote.Headers{})
	m := newRemoteSet(t, ws, nil, nil)
	list(t, m)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Call(context.Background(), "a__slow", map[string]any{"ms": 150}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if srv.MaxRunning("slow") != 1 || srv.Calls("slow") != 3 {
		t.Errorf("one tool: at most %d at once, %d calls", srv.MaxRunning("slow"), srv.Calls("slow"))
	}
	// Two tools: both calls run at once, however long either takes to
	// arrive; they end when cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	for _, name := range []string{"a__slow", "b__slow"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Call(ctx, name, map[string]any{"ms": 600000})
		}()
	}
	testservers.WaitUntil(t, "two calls of slow run at once", func() bool { return srv.MaxRunning("slow") == 2 })
	cancel()
	wg.Wait()
	// The SDK sends notifications/cancelled after the call has returned;
	// closing the set before both reach the server would make its session's
	// DELETE wait for a call that never ends (5 s, then the test's cleanup).
	testservers.WaitUntil(t, "the server sees both calls cancelled", func() bool { return srv.Cancelled("slow") == 2 })
}

// Entries that are invalid or do not open are skipped, reported, and their
// servers are never contacted.
func TestRemoteServersSkipsEntriesThatDoNotOpen(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	good := remotetest.Start(t, remotetest.Options{Transport: "http"})
	evil := remotetest.Start(t, remotetest.Options{Transport: "http"})
	copied := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, testScope, remote.Server{Name: "good", URL: good.URL}, remote.Headers{"Authorization": "Bearer " + remoteCanary})
	addRemote(t, ws, "chat-other", remote.Server{Name: "copied", URL: copied.URL}, remote.Headers{})
	f, _ := remote.Load(ws)
	// The agent redirects good's entry to its own server, and writes an
	// entry of its own.
	data := strings.Replace(string(f.Data), good.URL, evil.URL, 1)
	data = strings.Replace(data, "\n  ]", ",\n    "+string(remote.RenderEntry(remote.Server{Name: "mine", URL: evil.URL, Transport: "auto", Auth: "headers"}, notOpening))+",\n    {\"name\": \"BAD\"}\n  ]", 1)
	if err := remote.WriteFile(ws, f.Data, []byte(data), true); err != nil {
		t.Fatal(err)
	}
	m := newRemoteSet(t, ws, nil, nil)
	l := list(t, m)
	if len(l.Servers) != 0 || len(l.Tools) != 0 || len(l.Skipped) != 4 {
		t.Fatalf("servers %v, skipped %v", l.Servers, l.Skipped)
	}
	for _, s := range l.Skipped[:3] {
		if s.Reason != remote.NotOpenReason {
			t.Errorf("%s: %s", s.Name, s.Reason)
		}
	}
	if l.Skipped[3].Name != "BAD" || l.Skipped[3].Reason == "" || strings.HasPrefix(l.Skipped[3].Reason, "servers[3]") {
		t.Errorf("%+v", l.Skipped[3])
	}
	if evil.Requests.Load() != 0 || copied.Requests.Load() != 0 || good.Requests.Load() != 0 {
		t.Errorf("requests: evil %d, copied %d, good %d", evil.Requests.Load(), copied.Requests.Load(), good.Requests.Load())
	}
	if p := l.PromptSection(); !strings.Contains(p, "- good in servers.json is skipped: does not open") {
		t.Errorf("prompt:\n%s", p)
	}
	// Without the secret nothing opens.
	m2 := newRemoteSet(t, ws, nil, func(o *Options) { o.Secret = "" })
	if l := list(t, m2); len(l.Skipped) != 4 || !strings.Contains(l.Skipped[0].Reason, "MCP_ENCRYPTION_SECRET") {
		t.Errorf("%v", l.Skipped)
	}
}

// servers.json is re-read before each listing: added servers connect,
// removed ones disconnect, unchanged ones keep their connection.
func TestRemoteServersReloadsServersJSON(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a := remotetest.Start(t, remotetest.Options{Transport: "http"})
	b := remotetest.Start(t, remotetest.Options{Transport: "http"})
	m := newRemoteSet(t, ws, nil, nil)
	if l := list(t, m); len(l.Servers) != 0 || l.FileProblem != "" {
		t.Fatalf("no file: %+v", l)
	}
	addRemote(t, ws, testScope, remote.Server{Name: "a", URL: a.URL}, remote.Headers{})
	if l := list(t, m); visible(l) != "a__drop,a__echo,a__fail,a__slow,a__whoami" {
		t.Fatalf("after add: %s", visible(l))
	}
	addRemote(t, ws, testScope, remote.Server{Name: "b", URL: b.URL, Tools: []string{"echo"}}, remote.Headers{})
	if l := list(t, m); visible(l) != "a__drop,a__echo,a__fail,a__slow,a__whoami,b__echo" {
		t.Fatalf("after the second add: %s", visible(l))
	}
	if a.Initialized.Load() != 1 {
		t.Errorf("a reconnected (%d handshakes) though its entry did not change", a.Initialized.Load())
	}
	f, _ := remote.Load(ws)
	data, _, _ := f.Without("a")
	remote.WriteFile(ws, f.Data, data, true)
	l := list(t, m)
	if visible(l) != "b__echo" {
		t.Fatalf("after remove: %s", visible(l))
	}
	if _, err := m.Call(context.Background(), "a__echo", nil); err == nil {
		t.Error("a removed server's tool was called")
	}
	f, _ = remote.Load(ws)
	remote.WriteFile(ws, f.Data, []byte("{broken"), true)
	if l := list(t, m); len(l.Tools) != 0 || !strings.Contains(l.FileProblem, "invalid JSON") {
		t.Errorf("broken file: %+v", l)
	}
}

func TestRemoteServersNamesAgainstTakenNames(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http", Tools: []string{"x y", "x_y", strings.Repeat("long", 20)}})
	addRemote(t, ws, testScope, remote.Server{Name: "s", URL: srv.URL}, remote.Headers{})
	m := newRemoteSet(t, ws, nil, nil)
	l, err := m.List(context.Background(), func(name string) bool { return name == "s__echo" })
	if err != nil {
		t.Fatal(err)
	}
	want := "s__drop,s__fail,s__" + strings.Repeat("long", 20)[:45] + ",s__slow,s__whoami,s__x_y"
	if visible(l) != want {
		t.Errorf("tools\n %s\nwant\n %s", visible(l), want)
	}
	rules := map[string]int{}
	for _, w := range l.Warnings {
		rules[w.Rule]++
	}
	if rules["tool-name-collision"] != 2 || rules["tool-name-truncated"] != 1 {
		t.Errorf("warnings %v", l.Warnings)
	}
	if _, err := m.Call(context.Background(), "s__echo", nil); err == nil {
		t.Error("a tool skipped for its name was called")
	}
}

func TestRemoteServersClose(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "sse"})
	addRemote(t, ws, testScope, remote.Server{Name: "s", URL: srv.URL}, remote.Headers{})
	m := newRemoteSet(t, ws, nil, nil)
	list(t, m)
	m.Close()
	if _, err := m.Call(context.Background(), "s__echo", nil); err == nil {
		t.Error("call after Close")
	}
	if _, err := m.List(context.Background(), nil); err == nil {
		t.Error("list after Close")
	}
	if _, err := New(ws, "", Options{}, Hooks{}); err == nil {
		t.Error("no scope accepted")
	}
}

// Tool definitions are redacted in every string, input schemas included: a
// server can put the key it was sent in a default.
func TestRemoteToolSchemasRedacted(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	key := "CANARY-schema-3c2b1a"
	srv := remotetest.Start(t, remotetest.Options{Transport: "http", Tools: []string{"lookup"}, Schema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"key": map[string]any{"type": "string", "default": key, "examples": []any{"Bearer " + key}},
		},
	}})
	addRemote(t, ws, testScope, remote.Server{Name: "s", URL: srv.URL, Tools: []string{"lookup"}}, remote.Headers{"X-Key": key})
	m := newRemoteSet(t, ws, nil, nil)
	m.Start()
	l := list(t, m)
	if len(l.Tools) != 1 {
		t.Fatalf("tools %+v", l.Tools)
	}
	def, _ := json.Marshal(l.Tools[0].Def)
	if strings.Contains(string(def), key) || !strings.Contains(string(def), `"default":"[REDACTED]"`) || l.Tools[0].Def.Name != "s__lookup" {
		t.Errorf("definition %s", def)
	}
	// The tool as listed is kept as it is, to call it by its own name.
	if l.Tools[0].ServerTool != "lookup" {
		t.Errorf("tool %+v", l.Tools[0])
	}
}

// BenchmarkRemoteCallRereadsServersJSON measures what a remote call now
// pays first: reading an unchanged servers.json of 10 entries and
// comparing it with the one applied.
func BenchmarkRemoteCallRereadsServersJSON(b *testing.B) {
	ws := b.TempDir()
	a := remotetest.Start(b, remotetest.Options{Transport: "http"})
	for i := range 10 {
		addRemote(b, ws, "c", remote.Server{Name: "s" + string(rune('a'+i)), URL: a.URL, Tools: []string{"echo"}}, remote.Headers{})
	}
	m, err := New(ws, "c", Options{Secret: remoteSecret, Dial: patientDial}, Hooks{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if _, err := m.List(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if m.reload() {
			b.Fatal("servers.json did not change")
		}
	}
}
