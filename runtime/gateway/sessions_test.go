package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/runtime"
)

// The MCP sessions a gateway serves over HTTP, in both profiles: capped in
// all and per chat, a new session taking the place of the one that waited
// longest, a session whose client never goes on after initialize closed
// after a short grace (transport.SessionPool). And JSON-RPC ids, which go
// back exactly as they came.

// rawInit sends an initialize that no request follows and returns the
// status and the session id.
func rawInit(t testing.TB, client *http.Client, url string) (int, string, string) {
	t.Helper()
	code, header, body := rawMCP(t, client, "POST", url, initBody)
	return code, header.Get(sessionHeader), body
}

// A flood of initializes that never go on (more than the cap) does not
// lock out a client that comes after, nor close a session that was
// initialized before. It used to be that every initialize beyond
// --max-sessions got 503 until the flood's sessions were idle for 30m.
func TestGatewaySessionFloodDoesNotLockOut(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir(), MaxSessions: 8, SessionIdleTimeout: 30 * time.Minute})
	base, client := httpGateway(t, gw)
	before := connectHTTP(t, client, base+"/chats/good/mcp")
	for i := range 40 {
		if code, _, body := rawInit(t, client, base+"/chats/flood/mcp"); code != 200 {
			t.Fatalf("initialize %d of the flood: %d %s", i, code, body)
		}
	}
	listNames(t, connectHTTP(t, client, base+"/chats/good/mcp"))
	listNames(t, connectHTTP(t, client, base+"/chats/flood/mcp"))
	listNames(t, before)
}

// The same for the craftbot profile, whose sessions used to be neither
// capped nor expired.
func TestCraftbotSessionFloodDoesNotLockOut(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	cb := newTestCraftbot(t, cbPlan(false, cbStdio("fs", "-tools", "echo")), marker, runtime.CraftbotOptions{})
	srv := httptest.NewServer(cb.Handler(CraftbotHTTPOptions{MaxSessions: 8, MaxSessionsPerChat: 4, SessionIdleTimeout: 30 * time.Minute}))
	t.Cleanup(srv.Close)
	t.Cleanup(cb.CloseSessions)
	client := srv.Client()
	before := connectHTTP(t, client, srv.URL+"/mcp")
	for i := range 40 {
		path := []string{"/mcp", "/chats/a/mcp", "/chats/b/mcp"}[i%3]
		if code, _, body := rawInit(t, client, srv.URL+path); code != 200 {
			t.Fatalf("initialize %d of the flood: %d %s", i, code, body)
		}
	}
	if n := cbSessions(cb); n > 8 {
		t.Errorf("%d sessions open, cap 8", n)
	}
	for _, path := range []string{"/mcp", "/chats/a/mcp", "/chats/c/mcp"} {
		cs := connectHTTP(t, client, srv.URL+path)
		if got := callText(t, cs, "mcp_fs_echo", "hi"); got != "hi" {
			t.Errorf("%s after the flood: %q", path, got)
		}
	}
	if err := before.Ping(context.Background(), nil); err != nil {
		t.Errorf("the session initialized before the flood: %v", err)
	}
}

// cbSessions counts the MCP sessions cb serves.
func cbSessions(cb *Craftbot) int {
	n := 0
	for range cb.srv.Sessions() {
		n++
	}
	return n
}

// callText calls tool with {"text": text} and returns the result's text.
func callText(t testing.TB, cs *mcp.ClientSession, tool, text string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return resultText(res)
}

// A session whose client sends nothing after the answer to its initialize
// closes after the grace (on the host's clock), long before the idle
// timeout; one whose client went on does not.
func TestGatewayUninitializedSessionExpires(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	clock := clocktest.New()
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker), Clock: clock})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir(), SessionIdleTimeout: 30 * time.Minute})
	base, client := httpGateway(t, gw)
	url := base + "/chats/c/mcp"
	good := connectHTTP(t, client, url)
	code, sid, body := rawInit(t, client, url)
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %q %s", code, sid, body)
	}
	// Both sessions' waits are armed once their requests ended.
	eventually(t, "two session timers", func() bool { return clock.Pending() == 2 })
	clock.Advance(10 * time.Second)
	if code, _, body := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeader, sid); code != http.StatusNotFound {
		t.Errorf("a session 10s after an initialize nothing followed: %d %s, want 404", code, body)
	}
	if err := good.Ping(context.Background(), nil); err != nil {
		t.Errorf("the session whose client went on: %v", err)
	}
}

// The same for the craftbot profile, on the Craftbot's clock.
func TestCraftbotUninitializedSessionExpires(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	clock := clocktest.New()
	cb := newTestCraftbot(t, cbPlan(false, cbStdio("fs", "-tools", "echo")), marker, runtime.CraftbotOptions{Clock: clock})
	srv := httptest.NewServer(cb.Handler(CraftbotHTTPOptions{SessionIdleTimeout: 30 * time.Minute}))
	t.Cleanup(srv.Close)
	t.Cleanup(cb.CloseSessions)
	client := srv.Client()
	good := connectHTTP(t, client, srv.URL+"/mcp")
	code, sid, body := rawInit(t, client, srv.URL+"/mcp")
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %q %s", code, sid, body)
	}
	eventually(t, "two session timers", func() bool { return clock.Pending() == 2 })
	clock.Advance(10 * time.Second)
	if code, _, body := rawMCP(t, client, "POST", srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, sessionHeader, sid); code != http.StatusNotFound {
		t.Errorf("a session 10s after an initialize nothing followed: %d %s, want 404", code, body)
	}
	if err := good.Ping(context.Background(), nil); err != nil {
		t.Errorf("the session whose client went on: %v", err)
	}
	// The ping's request ended: the idle wait starts again.
	eventually(t, "the session's idle wait", func() bool { return clock.Pending() == 1 })
	clock.Advance(30 * time.Minute)
	if err := good.Ping(context.Background(), nil); err == nil {
		t.Error("a session idle for 30m still answers")
	}
}

// At MaxSessions a new session takes the place of the longest idle one,
// whose client gets 404; at MaxSessionsPerChat, of the chat's longest idle
// one, however long another chat's session has been idle.
func TestGatewaySessionCapsCloseLongestIdle(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir(), MaxSessions: 4, MaxSessionsPerChat: 2})
	base, client := httpGateway(t, gw)
	ping := func(cs *mcp.ClientSession) error { return cs.Ping(context.Background(), nil) }
	// A request's answer reaches the client before the gateway counts the
	// request out (and, for an initialize, before it takes the session in
	// as one it may close): a session whose request is still counted in is
	// busy, and never closed for a new one. Each new session comes once
	// every earlier request is counted out.
	connect := func(chat string) *mcp.ClientSession {
		eventually(t, "no request in flight", gw.pool.Quiet)
		return connectHTTP(t, client, base+"/chats/"+chat+"/mcp")
	}
	b1 := connect("b") // idle longest of all
	a1 := connect("a")
	a2 := connect("a")
	if err := ping(a1); err != nil { // a2 is now a's longest idle
		t.Fatal(err)
	}
	a3 := connect("a")
	if err := ping(a2); err == nil {
		t.Error("chat a's longest idle session still answers after a third one came (per chat cap 2)")
	}
	// In this order: a1, a3, b1 from the longest idle.
	for i, cs := range []*mcp.ClientSession{a1, a3, b1} {
		if err := ping(cs); err != nil {
			t.Errorf("%s: %v", []string{"a1", "a3", "b1"}[i], err)
		}
	}
	c1 := connect("c") // 4 open
	if err := ping(a1); err != nil {
		t.Fatal(err)
	}
	connect("d") // the global cap: a3 was idle longest
	if err := ping(a3); err == nil {
		t.Error("the longest idle session still answers after a fifth one came (cap 4)")
	}
	for i, cs := range []*mcp.ClientSession{a1, b1, c1} {
		if err := ping(cs); err != nil {
			t.Errorf("%s: %v", []string{"a1", "b1", "c1"}[i], err)
		}
	}
}

// A session with a call in flight is never closed for a new one: when
// every session is busy, the initialize gets 503, naming the limit.
func TestGatewaySessionCapSparesBusySessions(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	calls := filepath.Join(t.TempDir(), "calls")
	s := testServer("srv", "-tools", "echo,slow", "-call-log", calls)
	s.CallTimeoutSeconds = 7200
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir(), MaxSessions: 1})
	base, client := httpGateway(t, gw)
	busy := connectHTTP(t, client, base+"/chats/a/mcp")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := busy.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600000}})
		done <- err
	}()
	// The server has the call: the gateway counted it before it passed it
	// on (a request of the handshake that is still ending would make the
	// pool look busy too early).
	eventually(t, "the slow call runs", func() bool {
		b, _ := os.ReadFile(calls)
		return strings.Contains(string(b), "slow")
	})
	// The slow call's own request may end (its client may leave): the
	// call keeps the session busy still.
	code, _, body := rawInit(t, client, base+"/chats/b/mcp")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "maximum of 1 MCP sessions open (--max-sessions) and every one has a request in flight") {
		t.Errorf("an initialize while the only session is busy: %d %s", code, body)
	}
	cancel()
	<-done
	gatewayQuiet(t, gw)
	listNames(t, connectHTTP(t, client, base+"/chats/b/mcp"))
	if err := busy.Ping(context.Background(), nil); err == nil {
		t.Error("the session that was busy still answers after a new one took its place")
	}
}

// idCases are JSON-RPC ids that the SDK's jsonrpc.ID does not hold byte for
// byte: it made 1.5 into 1 and 18446744073709551616 into
// -9223372036854775808.
var idCases = []string{`1.5`, `1e3`, `18446744073709551616`, `-0`, `"a\u00e9"`, `12345678901234567890123`, `9007199254740993`, `"\u0000mcpc-raw-id:1"`}

// answerWithID reports whether a response carries id as sent.
func answerWithID(answer, id string) bool {
	return strings.Contains(answer, `{"jsonrpc":"2.0","id":`+id+`,`)
}

// Over stdio, a response carries its request's id as it came.
func TestGatewayIDsRoundTripStdio(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(noLeaks(t))})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", t.TempDir())
	send := stdioLines(t, gw, chat)
	init := strings.Replace(initBody, `"id":7`, `"id":1.5`, 1)
	if answer := send(init); !answerWithID(answer, `1.5`) {
		t.Errorf("initialize with id 1.5: %s", answer)
	}
	for _, id := range idCases {
		if answer := send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`); !answerWithID(answer, id) {
			t.Errorf("ping with id %s: %s", id, answer)
		}
		if answer := send(`{"jsonrpc":"2.0","id":` + id + `,"method":"nope/nope"}`); !answerWithID(answer, id) {
			t.Errorf("an unknown method with id %s: %s", id, answer)
		}
	}
}

// Over HTTP, in both profiles, too.
func TestGatewayIDsRoundTripHTTP(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir()})
	base, client := httpGateway(t, gw)
	checkIDsOverHTTP(t, client, base+"/chats/c/mcp")
}

func TestCraftbotIDsRoundTripHTTP(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	cb := newTestCraftbot(t, cbPlan(false, cbStdio("fs", "-tools", "echo")), marker, runtime.CraftbotOptions{})
	srv := httptest.NewServer(cb.Handler(CraftbotHTTPOptions{}))
	t.Cleanup(srv.Close)
	t.Cleanup(cb.CloseSessions)
	checkIDsOverHTTP(t, srv.Client(), srv.URL+"/mcp")
}

func checkIDsOverHTTP(t *testing.T, client *http.Client, url string) {
	t.Helper()
	code, header, answer := rawMCP(t, client, "POST", url, strings.Replace(initBody, `"id":7`, `"id":1e3`, 1))
	sid := header.Get(sessionHeader)
	if code != 200 || sid == "" || !answerWithID(answer, `1e3`) {
		t.Fatalf("initialize with id 1e3: %d %s", code, answer)
	}
	rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHeader, sid)
	for _, id := range idCases {
		if _, _, answer := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`, sessionHeader, sid); !answerWithID(answer, id) {
			t.Errorf("ping with id %s: %s", id, answer)
		}
		if _, _, answer := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","id":`+id+`,"method":"nope/nope"}`, sessionHeader, sid); !answerWithID(answer, id) {
			t.Errorf("an unknown method with id %s: %s", id, answer)
		}
	}
}
