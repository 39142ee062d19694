package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/runtime"
)

// initBody is a valid initialize request.
const initBody = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawMCP sends one request to an MCP endpoint with the headers a client
// sends (Accept, Content-Type), plus headers, and returns the status, the
// response headers and the body.
func rawMCP(t testing.TB, client *http.Client, method, url, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// gatewayQuiet waits until the gateway counts no request and no handler in
// flight. A request is counted out just after its answer is sent, so a
// test that advances the clock waits for that first: the idle waits start
// then.
func gatewayQuiet(t testing.TB, gw *Gateway) {
	t.Helper()
	eventually(t, "the gateway's requests end", func() bool {
		gw.mu.Lock()
		defer gw.mu.Unlock()
		for _, gc := range gw.chats {
			if gc.active > 0 {
				return false
			}
		}
		return gw.pool.Quiet()
	})
}

// Requests that are not a valid initialize create nothing: no chat, no
// workspace directory, no remote manager. It used to be that any request
// to /chats/{id}/mcp, even one answered 400, created all three for good.
func TestGatewayJunkCreatesNothing(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := filepath.Join(t.TempDir(), "chats")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker), Remote: &runtime.RemoteOptions{}})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root})
	base, client := httpGateway(t, gw)
	junk := []struct {
		method, body string
		headers      []string
		want         int
	}{
		{"GET", "", nil, 400},
		{"GET", "", []string{"Mcp-Session-Id", "ABCDEF"}, 404},
		{"DELETE", "", nil, 400},
		{"DELETE", "", []string{"Mcp-Session-Id", "ABCDEF"}, 404},
		{"PUT", "", nil, 405},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 400},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Mcp-Session-Id", "ABCDEF"}, 404},
		{"POST", `not json`, nil, 400},
		{"POST", `{"jsonrpc":"2.0","method":"initialize"}`, nil, 400}, // a notification
		// An initialize the SDK refuses: the chat it made is dropped again.
		{"POST", initBody, []string{"Accept", "text/html"}, 400},
		{"POST", strings.Replace(initBody, `"params":{`, `"params":{"capabilities":7,`, 1), nil, 200},
	}
	for i, j := range junk {
		for n := range 20 {
			code, _, body := rawMCP(t, client, j.method, fmt.Sprintf("%s/chats/junk%d_%d/mcp", base, i, n), j.body, j.headers...)
			if code != j.want {
				t.Errorf("%s %s %v: %d %s", j.method, j.body, j.headers, code, body)
			}
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("junk requests created %d directories", len(entries))
	}
	if ids := gw.ChatIDs(); len(ids) != 0 {
		t.Errorf("junk requests created chats %v", ids)
	}
	if st := h.Status(); len(st.Chats) != 0 {
		t.Errorf("the host has chats %v", st.Chats)
	}
	// A valid session creates its chat and workspace.
	listNames(t, connectHTTP(t, client, base+"/chats/real/mcp"))
	if ids := gw.ChatIDs(); !slices.Equal(ids, []string{"real"}) {
		t.Errorf("chats %v", ids)
	}
	if _, err := os.Stat(filepath.Join(root, "real")); err != nil {
		t.Error(err)
	}
}

// MaxChats: an initialize for one chat more gets 503 with a JSON-RPC error
// that names the limit, and the gateway logs it once; sessions of served
// chats are not refused, and an expired chat makes room.
func TestGatewayMaxChats(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := t.TempDir()
	clock := clocktest.New()
	logs := &logRecorder{}
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker), Clock: clock, Log: logs.log})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root, MaxChats: 2, ChatIdleTimeout: 30 * time.Minute})
	base, client := httpGateway(t, gw)
	a := connectHTTP(t, client, base+"/chats/a/mcp")
	connectHTTP(t, client, base+"/chats/b/mcp")
	for range 3 {
		code, _, body := rawMCP(t, client, "POST", base+"/chats/c/mcp", initBody)
		var resp struct {
			ID    int `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if code != 503 || json.Unmarshal([]byte(body), &resp) != nil || resp.ID != 7 || resp.Error.Code != -32000 ||
			!strings.Contains(resp.Error.Message, "maximum of 2 chats (--max-chats)") {
			t.Errorf("a third chat: %d %s", code, body)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "c")); err == nil {
		t.Error("a refused chat has a workspace")
	}
	if n := strings.Count(logs.text(), "maximum of 2 chats"); n != 1 {
		t.Errorf("the limit is logged %d times, want once:\n%s", n, logs.text())
	}
	// Another session of a served chat is no new chat.
	listNames(t, connectHTTP(t, client, base+"/chats/a/mcp"))
	listNames(t, a)
	gatewayQuiet(t, gw)
	clock.Advance(30 * time.Minute) // a and b expire
	if ids := gw.ChatIDs(); len(ids) != 0 {
		t.Fatalf("chats after 30m idle: %v", ids)
	}
	listNames(t, connectHTTP(t, client, base+"/chats/c/mcp"))
}

// A chat without requests for ChatIdleTimeout (on the host's clock) is
// closed: its sessions end, its processes stop, the gateway and the host
// forget it, its workspace stays. A call in flight keeps it; an
// initialize for its id later makes a new chat.
func TestGatewayChatIdleExpiry(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := t.TempDir()
	clock := clocktest.New()
	logs := &logRecorder{}
	s := testServer("srv", "-tools", "echo,slow", "-pidfile", "server.pid", "-spawn-child", "-child-pidfile", "child.pid", "-cancel-marker", "cancelled", "-call-log", "calls")
	s.CallTimeoutSeconds, s.IdleTimeoutSeconds = 7200, 0
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker), Clock: clock, Log: logs.log})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root, ChatIdleTimeout: 30 * time.Minute})
	base, client := httpGateway(t, gw)
	cs := connectHTTP(t, client, base+"/chats/x/mcp")
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	server := readPid(t, filepath.Join(root, "x", "server.pid"))
	child := readPid(t, filepath.Join(root, "x", "child.pid"))

	// A call in flight keeps the chat however long it takes.
	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600000}})
		done <- err
	}()
	eventually(t, "the slow call runs", func() bool {
		gw.mu.Lock()
		defer gw.mu.Unlock()
		gc := gw.chats["x"]
		return gc != nil && gc.active > 0
	})
	eventually(t, "the server has the slow call", func() bool { return len(lines(t, filepath.Join(root, "x", "calls"))) == 2 })
	clock.Advance(45 * time.Minute)
	if ids := gw.ChatIDs(); !slices.Equal(ids, []string{"x"}) {
		t.Fatalf("a chat with a call in flight expired: %v", ids)
	}
	cancel()
	<-done
	// The client's notifications/cancelled is a request of its own, sent
	// after the call returned: the idle wait starts after it.
	eventually(t, "the server sees notifications/cancelled", func() bool {
		_, err := os.Stat(filepath.Join(root, "x", "cancelled"))
		return err == nil
	})
	gatewayQuiet(t, gw) // the call's request, the cancellation's, and their handlers ended
	clock.Advance(29 * time.Minute)
	if ids := gw.ChatIDs(); !slices.Equal(ids, []string{"x"}) {
		t.Fatalf("expired before 30m: %v", ids)
	}
	clock.Advance(time.Minute)
	if ids := gw.ChatIDs(); len(ids) != 0 {
		t.Fatalf("chats after 30m idle: %v", ids)
	}
	if _, ok := h.FindChat("x"); ok {
		t.Error("the host still has the chat")
	}
	if !processGone(server) || !processGone(child) {
		t.Errorf("the expired chat's processes still run (server gone %v, child gone %v)", processGone(server), processGone(child))
	}
	if _, err := os.Stat(filepath.Join(root, "x")); err != nil {
		t.Errorf("the workspace is gone: %v", err)
	}
	if !strings.Contains(logs.text(), "chat x closed after 30m without requests") {
		t.Errorf("log:\n%s", logs.text())
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err == nil {
		t.Error("the expired chat's session still answers")
	}
	cs2 := connectHTTP(t, client, base+"/chats/x/mcp")
	if res, err := cs2.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "back"}}); err != nil || resultText(res) != "back" {
		t.Errorf("a new session for the id: %v", err)
	}
}

// A session without requests for SessionIdleTimeout is closed; the chat's
// other sessions go on.
func TestGatewaySessionIdleExpiry(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	clock := clocktest.New()
	s := testServer("srv", "-tools", "echo")
	s.IdleTimeoutSeconds = 0
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker), Clock: clock})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir(), SessionIdleTimeout: 10 * time.Minute})
	base, client := httpGateway(t, gw)
	ctx := context.Background()
	echo := func(cs *mcp.ClientSession) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		return err
	}
	a := connectHTTP(t, client, base+"/chats/c/mcp")
	b := connectHTTP(t, client, base+"/chats/c/mcp")
	if err := echo(a); err != nil {
		t.Fatal(err)
	}
	gatewayQuiet(t, gw)
	clock.Advance(6 * time.Minute)
	if err := echo(b); err != nil {
		t.Fatal(err)
	}
	gatewayQuiet(t, gw)
	clock.Advance(4 * time.Minute) // a: 10m idle; b: 4m
	if err := echo(a); err == nil {
		t.Error("a session idle for 10m still answers")
	}
	if err := echo(b); err != nil {
		t.Errorf("the other session: %v", err)
	}
	if ids := gw.ChatIDs(); !slices.Equal(ids, []string{"c"}) {
		t.Errorf("chats %v", ids)
	}
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// With an MCP token, /chats/{id}/mcp needs it (401 and WWW-Authenticate:
// Bearer otherwise; nothing is created); the admin endpoints keep theirs.
func TestGatewayMCPToken(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := t.TempDir()
	const token, admin = "mcp-CANARY-0123456789", "admin-CANARY-9876543210"
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker), Secrets: []string{token, admin}})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root, MCPToken: token, AdminToken: admin})
	base, client := httpGateway(t, gw)
	for _, hdr := range []string{"", "Bearer", "Bearer ", "Bearer wrong", "Bearer " + token + "x", "bearer " + token, token} {
		code, header, body := rawMCP(t, client, "POST", base+"/chats/c/mcp", initBody, "Authorization", hdr)
		if code != 401 || !strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") || strings.Contains(body, token) {
			t.Errorf("Authorization %q: %d %v %s", hdr, code, header, body)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("unauthorized requests created %v", entries)
	}
	authed := &http.Client{Transport: bearerTransport{token: token, next: client.Transport}}
	cs := connectHTTP(t, authed, base+"/chats/c/mcp")
	listNames(t, cs)
	if code, _ := do(t, client, "GET", base+"/status", token); code != 401 {
		t.Errorf("the MCP token opens the admin endpoints: %d", code)
	}
	if code, _ := do(t, client, "GET", base+"/status", admin); code != 200 {
		t.Errorf("status with the admin token: %d", code)
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}

// Request bodies that arrive too slowly are cut off: 300 connections that
// send their headers and then stall (or trickle a byte now and then) are
// answered 408 and closed once BodyTimeout has passed, and the gateway
// holds none of their descriptors after. They used to be held for as long
// as the client liked.
func TestGatewaySlowBodiesCutOff(t *testing.T) {
	marker := noLeaks(t)
	root := t.TempDir()
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root, BodyTimeout: 300 * time.Millisecond})
	base, _ := httpGateway(t, gw)
	addr := strings.TrimPrefix(base, "http://")
	const conns, tricklers = 300, 20
	before := openFDs(t)
	head := "POST /chats/slow/mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{"
	answers := make(chan string, conns)
	var clients []net.Conn
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		go func() {
			if i < tricklers {
				// A byte every 20ms: the body still cannot make the rate.
				go func() {
					for {
						time.Sleep(20 * time.Millisecond)
						if _, err := c.Write([]byte(" ")); err != nil {
							return
						}
					}
				}()
			}
			// Returns once the gateway closed the connection.
			b, _ := io.ReadAll(c)
			answers <- string(b)
		}()
	}
	t.Cleanup(func() {
		for _, c := range clients {
			c.Close()
		}
	})
	deadline := time.After(60 * time.Second) // fails a gateway that never cuts off
	for i := range conns {
		select {
		case a := <-answers:
			if !strings.HasPrefix(a, "HTTP/1.1 408") || !strings.Contains(a, "did not arrive in time") {
				t.Fatalf("answer %d: %.200q", i, a)
			}
		case <-deadline:
			t.Fatalf("%d of %d slow connections are still held open", conns-i, conns)
		}
	}
	// Every connection is closed on the gateway's side; the clients' ends
	// are still open, and count.
	after := openFDs(t)
	t.Logf("descriptors: %d before, %d with the %d client ends still open after the cut-off", before, after, conns)
	if held := after - before - conns; held > 10 {
		t.Errorf("%d descriptors more than before, beyond the clients' own %d", held, conns)
	}
	if ids := gw.ChatIDs(); len(ids) != 0 {
		t.Errorf("slow bodies created chats %v", ids)
	}
}

// GatewayOptions.ChatsChanged hears the number of chats served over HTTP
// at each chat added and each chat forgotten, in that order.
func TestGatewayChatsChanged(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	clock := clocktest.New()
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker), Clock: clock})
	var mu sync.Mutex
	var heard []int
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir(), ChatIdleTimeout: 30 * time.Minute,
		ChatsChanged: func(open int) {
			mu.Lock()
			heard = append(heard, open)
			mu.Unlock()
		}})
	base, client := httpGateway(t, gw)
	for _, id := range []string{"x", "y"} {
		connectHTTP(t, client, base+"/chats/"+id+"/mcp")
	}
	gatewayQuiet(t, gw)
	clock.Advance(31 * time.Minute) // both chats expire
	if ids := gw.ChatIDs(); len(ids) != 0 {
		t.Fatalf("chats after 31m idle: %v", ids)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(heard, []int{1, 2, 1, 0}) {
		t.Errorf("ChatsChanged heard %v, want [1 2 1 0]", heard)
	}
}
