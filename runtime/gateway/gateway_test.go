package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// connectInMemory serves chat through gw and returns a client session on
// it, closed at the end of the test.
func connectInMemory(t *testing.T, gw *Gateway, chat *runtime.Chat, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- gw.ServeTransport(context.Background(), chat, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		<-served
	})
	return cs
}

var listNames = testservers.ToolNames

var resultText = testservers.TextOf

// The gateway serves the agent-visible tools, calls them with the server's
// own names, and reports failures as MCP errors or error results.
func TestGatewayOverTransport(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	s := testServer("srv", "-tools", "echo,crash,fail,x.y")
	s.ToolPrefix = "s_"
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	cs := connectInMemory(t, gw, chat, nil)
	ctx := context.Background()

	if got, want := listNames(t, cs), []string{"s_crash", "s_echo", "s_fail", "s_x_y"}; !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError || resultText(res) != "hello" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_x_y"}); err != nil || resultText(res) != "x.y" {
		t.Errorf("x.y is called by its own name: %v %v", err, res)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, `unknown tool "nope"`) {
		t.Errorf("unknown tool: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_fail", Arguments: map[string]any{"text": "boom"}})
	if !errors.As(err, &we) || !strings.Contains(we.Message, "failed: boom") {
		t.Errorf("server error: %v", err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_crash", Arguments: map[string]any{"code": 4}})
	want := "MCP server srv exited (4): testserver: crashing with code 4. It restarts on the next call; its state was lost."
	if err != nil || !res.IsError || resultText(res) != want {
		t.Errorf("crash: %v %q", err, resultText(res))
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"text": "again"}}); err != nil || resultText(res) != "again" {
		t.Errorf("after crash: %v", err)
	}
}

// Tools that a discovery retry adds reach connected clients through
// notifications/tools/list_changed.
func TestGatewayToolsChangedNotification(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	late := testServer("late", "-tools", "late_tool")
	late.Command = bin
	clock := clocktest.New()
	h := newTestHost(t, testPlan(testServer("ok", "-tools", "echo"), late), runtime.HostOptions{Env: testEnv(marker), Clock: clock})
	gw := NewGateway(h, GatewayOptions{})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	// Discover before the client connects: its server then starts with the
	// tools, and the only notification it can get is the retry's.
	if _, err := chat.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 10)
	cs := connectInMemory(t, gw, chat, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("tools %v", got)
	}
	if err := os.Symlink(testBin, bin); err != nil {
		t.Fatal(err)
	}
	// The SDK sends a notification 10ms after a change: wait longer. (This
	// wait can only miss a wrong notification on a slow machine, never fail
	// a right one.)
	select {
	case <-changed:
		t.Fatal("notifications/tools/list_changed before any change")
	case <-time.After(100 * time.Millisecond):
	}
	clock.Advance(runtime.DefaultDiscoveryRetry)
	listNames(t, cs) // starts the retry
	testservers.Recv(t, "notifications/tools/list_changed after the retry", changed)
	if d := h.Status().Servers[1]; d.State != "ok" || d.Discoveries != 2 {
		t.Errorf("notified before the retry finished: %+v", d)
	}
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo", "late_tool"}) {
		t.Errorf("tools after the retry %v", got)
	}
}

// httpGateway serves gw on 127.0.0.1 and returns its base URL and an HTTP
// client; both are shut down at the end of the test.
func httpGateway(t testing.TB, gw *Gateway) (string, *http.Client) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gw}
	go srv.Serve(ln)
	// Enough idle connections for many concurrent clients: the default of 2
	// per host would redial TCP for most requests.
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	client := &http.Client{Transport: tr}
	t.Cleanup(func() {
		gw.Close()
		srv.Close()
		tr.CloseIdleConnections()
	})
	return "http://" + ln.Addr().String(), client
}

func connectHTTP(t testing.TB, client *http.Client, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	// The gateway answers notifications/initialized at once and handles it
	// after; it handles a session's messages in order, so once a ping is
	// answered that handling is over (a test that then waits for the
	// gateway to be quiet sees no request come after).
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return cs
}

// do sends an HTTP request and returns the status and the body.
func do(t testing.TB, client *http.Client, method, url, token string) (int, string) {
	t.Helper()
	return send(t, client, method, url, token, nil)
}

// send is do with a request body (nil: none).
func send(t testing.TB, client *http.Client, method, url, token string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Over HTTP each /chats/{id}/mcp is a chat with its own processes and its
// workspace under the root; the admin endpoints show and control them.
func TestGatewayHTTP(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := filepath.Join(t.TempDir(), "chats")
	s := testServer("srv", "-tools", "echo,env,slow", "-pidfile", "server.pid", "-spawn-child", "-child-pidfile", "child.pid")
	s.Env = map[string]*string{"SECRET": ptr("${env:API_TOKEN}")}
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker, "API_TOKEN="+canaryToken)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root})
	base, client := httpGateway(t, gw)
	ctx := context.Background()

	a := connectHTTP(t, client, base+"/chats/alpha/mcp")
	b := connectHTTP(t, client, base+"/chats/beta_2/mcp")
	for _, cs := range []*mcp.ClientSession{a, b} {
		if got := listNames(t, cs); !slices.Equal(got, []string{"echo", "env", "slow"}) {
			t.Fatalf("tools %v", got)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "env", Arguments: map[string]any{"name": "SECRET"}})
		if err != nil || resultText(res) != "[REDACTED]" {
			t.Fatalf("env: %v %q", err, resultText(res))
		}
	}
	pa := readPid(t, filepath.Join(root, "alpha", "server.pid"))
	pb := readPid(t, filepath.Join(root, "beta_2", "server.pid"))
	ca := readPid(t, filepath.Join(root, "alpha", "child.pid"))
	if pa == pb {
		t.Fatal("two chats share a process")
	}

	code, body := do(t, client, "GET", base+"/status", "")
	var st runtime.HostStatus
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("status %d %s", code, body)
	}
	if len(st.Chats) != 2 || st.Chats[0].ID != "alpha" || st.Chats[0].Servers[0].State != runtime.StateRunning ||
		st.Chats[0].Servers[0].Tools != 3 || st.Servers[0].State != "ok" || st.Servers[0].Discoveries != 1 {
		t.Errorf("status %s", body)
	}
	if strings.Contains(body, canaryToken) {
		t.Errorf("status leaks the secret: %s", body)
	}

	if code, body := do(t, client, "POST", base+"/chats/alpha/servers/srv/restart", ""); code != 200 {
		t.Errorf("restart: %d %s", code, body)
	}
	if !processGone(pa) || !processGone(ca) || processGone(pb) {
		t.Errorf("restart of alpha/srv: alpha gone %v (child %v), beta gone %v", processGone(pa), processGone(ca), processGone(pb))
	}
	if code, body := do(t, client, "POST", base+"/chats/alpha/servers/nope/restart", ""); code != 404 || !strings.Contains(body, `no MCP server \"nope\"`) {
		t.Errorf("restart of an unknown server: %d %s", code, body)
	}
	if code, _ := do(t, client, "POST", base+"/chats/unknown/reset", ""); code != 404 {
		t.Errorf("reset of an unknown chat: %d", code)
	}
	if code, _ := do(t, client, "GET", base+"/chats/beta_2/reset", ""); code != 405 {
		t.Errorf("GET reset: %d", code)
	}
	if code, body := do(t, client, "POST", base+"/chats/beta_2/reset", ""); code != 200 {
		t.Errorf("reset: %d %s", code, body)
	}
	if !processGone(pb) {
		t.Error("reset left beta's process")
	}
	// The chats still work, with new processes.
	for _, cs := range []*mcp.ClientSession{a, b} {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "back"}}); err != nil || resultText(res) != "back" {
			t.Errorf("after reset: %v", err)
		}
	}
}

// A chat id that is not [A-Za-z0-9_-]{1,64} is refused with 400, and
// nothing is created on disk.
func TestGatewayRejectsBadChatIDs(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := filepath.Join(t.TempDir(), "chats")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root})
	base, client := httpGateway(t, gw)
	long := strings.Repeat("a", 65)
	for _, path := range []string{
		"/chats/a%2Fb/mcp", "/chats/a/b/mcp", "/chats/../mcp", "/chats/..%2F..%2Fetc/mcp", "/chats/%2E%2E/mcp",
		"/chats/a.b/mcp", "/chats/a%20b/mcp", "/chats//mcp", "/chats/" + long + "/mcp", "/chats/%zz/mcp",
		"/chats/caf%C3%A9/mcp", "/chats/a%00/mcp", "/chats/../reset", "/chats/x%2Fy/servers/srv/restart",
	} {
		req, _ := http.NewRequest("POST", base+"/x", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.URL.Opaque = "//" + req.URL.Host + path // sent as is, not cleaned by the client
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// net/http itself refuses a malformed escape such as %zz with 400.
		if resp.StatusCode != 400 || !strings.Contains(string(b), "invalid chat id") && !strings.Contains(path, "%zz") {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("bad ids created %v", entries)
	}
	if got := gw.ChatIDs(); len(got) != 0 {
		t.Errorf("bad ids created chats %v", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), "etc")); err == nil {
		t.Error("a path outside the root was created")
	}
	// A good id of the maximum length works.
	cs := connectHTTP(t, client, base+"/chats/"+long[:64]+"/mcp")
	listNames(t, cs)
	if _, err := os.Stat(filepath.Join(root, long[:64])); err != nil {
		t.Errorf("workspace of a good id: %v", err)
	}
}

// With an admin token, the admin endpoints need it; MCP endpoints do not.
// Without one, admin requests must name a loopback host.
func TestGatewayAdminToken(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := t.TempDir()
	const token = "admin-CANARY-9f8e7d6c"
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker), Secrets: []string{token}})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root, AdminToken: token})
	base, client := httpGateway(t, gw)
	for _, tok := range []string{"", "wrong", token + "x"} {
		if code, body := do(t, client, "GET", base+"/status", tok); code != 401 || strings.Contains(body, token) {
			t.Errorf("token %q: %d %s", tok, code, body)
		}
	}
	if code, _ := do(t, client, "GET", base+"/status", token); code != 200 {
		t.Errorf("good token: %d", code)
	}
	listNames(t, connectHTTP(t, client, base+"/chats/c/mcp"))
	if code, _ := do(t, client, "POST", base+"/chats/c/reset", ""); code != 401 {
		t.Errorf("reset without token: %d", code)
	}
	if code, _ := do(t, client, "POST", base+"/chats/c/reset", token); code != 200 {
		t.Errorf("reset with token: %d", code)
	}

	open := NewGateway(h, GatewayOptions{WorkspaceRoot: root})
	base2, client2 := httpGateway(t, open)
	req, _ := http.NewRequest("GET", base2+"/status", nil)
	req.Host = "evil.example.com"
	resp, err := client2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("status with a foreign Host header: %d", resp.StatusCode)
	}
	if code, _ := do(t, client2, "GET", base2+"/status", ""); code != 200 {
		t.Errorf("loopback status: %d", code)
	}
}

// The real @modelcontextprotocol/server-everything behind the gateway,
// over Streamable HTTP: its tools, a call, and its environment filtered.
func TestGatewayServerEverything(t *testing.T) {
	t.Parallel()
	command, args := testservers.NeedEverything(t)
	marker := noLeaks(t)
	s := testServer("everything")
	s.Command, s.Args, s.ToolPrefix = command, args, "ev_"
	s.Env = map[string]*string{"FROM_REF": ptr("${env:SERVICE_API_KEY}")}
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker, "SERVICE_API_KEY="+canaryRef, "GITHUB_TOKEN="+canaryToken)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir()})
	base, client := httpGateway(t, gw)
	cs := connectHTTP(t, client, base+"/chats/e/mcp")
	names := listNames(t, cs)
	for _, want := range []string{"ev_echo", "ev_get-sum", "ev_get-env"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ev_get-sum", Arguments: map[string]any{"a": 2, "b": 40}})
	if err != nil || !strings.Contains(resultText(res), "42") {
		t.Errorf("get-sum: %v %q", err, resultText(res))
	}
	// A typed nil map goes out as "arguments": null; server-everything
	// validates arguments as an object, so the gateway must send {}.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ev_get-env", Arguments: map[string]any(nil)})
	if err != nil {
		t.Fatal(err)
	}
	env := resultText(res)
	if strings.Contains(env, canaryToken) || strings.Contains(env, canaryRef) || strings.Contains(env, "GITHUB_TOKEN") || strings.Contains(env, "SERVICE_API_KEY") {
		t.Errorf("server-everything's environment leaks: %s", env)
	}
	if !strings.Contains(env, `"FROM_REF": "[REDACTED]"`) || !strings.Contains(env, marker) {
		t.Errorf("server-everything's environment lacks FROM_REF or the marker: %s", env)
	}
	if st := h.Status(); st.Servers[0].ServerName == "" || !strings.Contains(fmt.Sprint(st), "ok") {
		t.Errorf("status %+v", st)
	}
}
