package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plandiff"
	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// cbStdio is a craftbot plan's stdio server running the Go test server.
func cbStdio(name string, args ...string) plan.Server {
	return plan.Server{Name: name, Transport: "stdio", Command: testBin, Args: args, Enabled: true,
		Env: map[string]*string{}, StartupTimeoutSeconds: patientSeconds}
}

func cbRemote(name, transport, url string) plan.Server {
	return plan.Server{Name: name, Transport: transport, URL: url, Enabled: true, Args: []string{}, Env: map[string]*string{}}
}

func cbPlan(auto bool, servers ...plan.Server) *plan.Plan {
	return &plan.Plan{PlanVersion: plan.Version, Profile: plan.ProfileCraftbot, AutoConnect: &auto, Servers: servers}
}

// newTestCraftbot builds a runtime closed at the end of the test; its
// stdio servers inherit the leak marker and run in a temporary directory.
func newTestCraftbot(t testing.TB, p *plan.Plan, marker string, opts runtime.CraftbotOptions) *Craftbot {
	t.Helper()
	opts.Env = testEnv(marker)
	if opts.Workspace == "" {
		opts.Workspace = t.TempDir()
	}
	cb, err := NewCraftbot(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cb.Close() })
	return cb
}

// cbClient connects an MCP client to the runtime over an in-memory
// transport; changed, if not nil, gets every notifications/tools/list_changed.
// startConnected starts cb and waits for its auto_connect connects: a
// listing does not wait for connects in progress (their actions come with
// notifications/tools/list_changed), and these tests list every action.
func startConnected(t testing.TB, cb *Craftbot) {
	t.Helper()
	cb.Start()
	if err := cb.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func cbClient(t testing.TB, cb *Craftbot, changed chan<- struct{}) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = cb.ServeTransport(ctx, st)
	}()
	var opts *mcp.ClientOptions
	if changed != nil {
		opts = &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-served
	})
	return cs
}

func toolMap(t testing.TB, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl.Description
	}
	return out
}

func serverStatus(cb *Craftbot, name string) runtime.CraftbotServerStatus {
	for _, s := range cb.Status().Servers {
		if s.Name == name {
			return s
		}
	}
	return runtime.CraftbotServerStatus{}
}

// A craftbot plan with a stdio, an sse and a websocket server: each
// server's tools are served as mcp_<server>_<tool>, described
// "[MCP:<server>] …", and a call of each reaches its server.
func TestCraftbotServesEveryTransport(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	addr := testservers.StartWSServer(t)
	p := cbPlan(true,
		cbStdio("fs", "-tools", "echo"),
		cbRemote("events", "sse", "http://"+addr+"/sse"),
		cbRemote("sock", "websocket", "ws://"+addr+"/ws"))
	cb := newTestCraftbot(t, p, marker, runtime.CraftbotOptions{})
	startConnected(t, cb)
	cs := cbClient(t, cb, nil)
	tools := toolMap(t, cs)
	for _, name := range []string{"mcp_fs_echo", "mcp_events_echo", "mcp_sock_echo"} {
		server := strings.Split(name, "_")[1]
		if !strings.HasPrefix(tools[name], "[MCP:"+server+"] ") {
			t.Errorf("%s: description %q (tools %v)", name, tools[name], tools)
		}
		if got := testservers.CallText(t, cs, name, map[string]any{"text": "hi " + server}); got != "hi "+server {
			t.Errorf("%s answered %q", name, got)
		}
	}
	for _, s := range cb.Status().Servers {
		if s.State != runtime.StateRunning || s.Tools == 0 {
			t.Errorf("%+v", s)
		}
	}
}

// The same through @modelcontextprotocol/server-everything over SSE, a
// server mcpc did not write.
func TestCraftbotServerEverythingSSE(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	url := testservers.StartEverythingSSE(t)
	cb := newTestCraftbot(t, cbPlan(true, cbRemote("every", "sse", url)), marker, runtime.CraftbotOptions{})
	startConnected(t, cb)
	cs := cbClient(t, cb, nil)
	if d := toolMap(t, cs)["mcp_every_echo"]; !strings.HasPrefix(d, "[MCP:every] ") {
		t.Fatalf("mcp_every_echo: %q", d)
	}
	if got := testservers.CallText(t, cs, "mcp_every_echo", map[string]any{"message": "hello"}); !strings.Contains(got, "hello") {
		t.Errorf("echo: %q", got)
	}
}

// auto_connect: every enabled server connects at start; one that fails is
// reported (log and status) and the others are served.
func TestCraftbotAutoConnectOneBroken(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	var log logRecorder
	p := cbPlan(true,
		cbStdio("good", "-tools", "echo"),
		cbStdio("bad", "-exit-at-start", "3", "-stderr", "bad: no token configured"),
		cbRemote("gone", "websocket", "ws://127.0.0.1:1/ws"))
	off := cbStdio("off", "-tools", "echo")
	off.Enabled = false
	p.Servers = append(p.Servers, off)
	cb := newTestCraftbot(t, p, marker, runtime.CraftbotOptions{Log: log.log})
	cb.Start()
	if err := cb.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := serverStatus(cb, "good"); st.State != runtime.StateRunning || st.Tools != 1 {
		t.Errorf("good: %+v", st)
	}
	if st := serverStatus(cb, "bad"); !strings.HasPrefix(st.State, "failed: exited (3)") || !strings.Contains(st.State, "bad: no token configured") {
		t.Errorf("bad: %+v", st)
	}
	if st := serverStatus(cb, "gone"); !strings.HasPrefix(st.State, "failed: websocket ws://127.0.0.1:1/ws: ") {
		t.Errorf("gone: %+v", st)
	}
	if st := serverStatus(cb, "off"); st.State != runtime.StateDisabled || st.Starts != 0 {
		t.Errorf("off: %+v", st)
	}
	for _, want := range []string{"MCP server bad failed to start: exited (3)", "MCP server gone failed to start: websocket"} {
		if !strings.Contains(log.text(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.text())
		}
	}
	cs := cbClient(t, cb, nil)
	if tools := toolMap(t, cs); len(tools) != 1 || tools["mcp_good_echo"] == "" {
		t.Errorf("tools %v", tools)
	}
}

// Without auto_connect nothing starts before the first use; the first
// tools/list starts each server once, and later listings reuse it.
func TestCraftbotConnectsOnFirstUse(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	starts := filepath.Join(t.TempDir(), "starts")
	cb := newTestCraftbot(t, cbPlan(false, cbStdio("fs", "-tools", "echo", "-start-log", starts)), marker, runtime.CraftbotOptions{})
	cb.Start()
	cs := cbClient(t, cb, nil)
	if st := serverStatus(cb, "fs"); st.State != runtime.StateNotStarted || st.Starts != 0 {
		t.Fatalf("before first use: %+v", st)
	}
	if n := len(lines(t, starts)); n != 0 {
		t.Fatalf("%d processes before first use", n)
	}
	if tools := toolMap(t, cs); tools["mcp_fs_echo"] != "[MCP:fs] returns text" {
		t.Fatalf("tools %v", tools)
	}
	toolMap(t, cs)
	if got := testservers.CallText(t, cs, "mcp_fs_echo", map[string]any{"text": "x"}); got != "x" {
		t.Errorf("echo %q", got)
	}
	if n := len(lines(t, starts)); n != 1 {
		t.Errorf("%d processes, want 1", n)
	}
}

// Without auto_connect, a call by name before any listing connects the
// server it names.
func TestCraftbotFirstUseByCall(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	cb := newTestCraftbot(t, cbPlan(false, cbStdio("fs", "-tools", "echo"), cbStdio("other", "-tools", "echo")), marker, runtime.CraftbotOptions{})
	res, err := cb.Call(context.Background(), "mcp_fs_echo", map[string]any{"text": "direct"})
	if err != nil || testservers.TextOf(res) != "direct" {
		t.Fatalf("%v %v", res, err)
	}
	if st := serverStatus(cb, "other"); st.Starts != 0 {
		t.Errorf("a call to fs started other: %+v", st)
	}
}

// A call runs at most the call timeout, and a cancelled or timed-out call
// is cancelled at the server (notifications/cancelled); a server that dies
// during a call gives the death message, and the next call starts it anew.
func TestCraftbotCallLifecycle(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	calls, cancelled, starts := filepath.Join(dir, "calls"), filepath.Join(dir, "cancelled"), filepath.Join(dir, "starts")
	clock := clocktest.New()
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("fs", "-tools", "slow,crash,echo", "-call-log", calls,
		"-cancel-marker", cancelled, "-start-log", starts)), marker, runtime.CraftbotOptions{Clock: clock})
	ctx := context.Background()
	slow := func(ctx context.Context) <-chan error {
		errc := make(chan error, 1)
		go func() {
			_, err := cb.Call(ctx, "mcp_fs_slow", map[string]any{"ms": 1e9})
			errc <- err
		}()
		return errc
	}
	kind := func(err error) runtime.CallErrorKind {
		var ce *runtime.CallError
		if errors.As(err, &ce) {
			return ce.Kind
		}
		return ""
	}

	// Timeout, on the runtime's clock.
	errc := slow(ctx)
	eventually(t, "the slow call reaches the server", func() bool { return len(lines(t, calls)) == 1 })
	// CraftBot's handler waits 60 s for a call.
	clock.Advance(runtime.CraftbotCallTimeout)
	err := testservers.Recv(t, "the timed-out call", errc)
	if kind(err) != runtime.CallTimeout || !strings.Contains(err.Error(), "did not answer within 60s (the host's handler waits 60s)") {
		t.Fatalf("timeout: %v", err)
	}
	eventually(t, "the server sees the timed-out call cancelled", func() bool { _, err := os.Stat(cancelled); return err == nil })
	os.Remove(cancelled)

	// Cancellation by the caller.
	cctx, cancel := context.WithCancel(ctx)
	errc = slow(cctx)
	eventually(t, "the second slow call reaches the server", func() bool { return len(lines(t, calls)) == 2 })
	cancel()
	if err := testservers.Recv(t, "the cancelled call", errc); kind(err) != runtime.CallCancelled {
		t.Fatalf("cancel: %v", err)
	}
	eventually(t, "the server sees the call cancelled", func() bool { _, err := os.Stat(cancelled); return err == nil })

	// Death.
	_, err = cb.Call(ctx, "mcp_fs_crash", map[string]any{"code": 7})
	want := "MCP server fs exited (7): testserver: crashing with code 7. It restarts on the next call; its state was lost."
	if kind(err) != runtime.CallExited || err.Error() != want {
		t.Fatalf("death: %v\nwant %s", err, want)
	}
	if st := serverStatus(cb, "fs"); st.State != runtime.StateExited || st.LastError != want {
		t.Errorf("status after death: %+v", st)
	}
	res, err := cb.Call(ctx, "mcp_fs_echo", map[string]any{"text": "again"})
	if err != nil || testservers.TextOf(res) != "again" {
		t.Fatalf("after death: %v %v", res, err)
	}
	if n := len(lines(t, starts)); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

// A secret of the config file (a server's env value) is never shown: not
// in results, tool descriptions, errors, status, stderr lines or logs.
func TestCraftbotCanaryNeverShown(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	const canary = "CANARY-craftrun-5e1f0a77"
	var log logRecorder
	ref := plan.ConfigRef("TOKEN")
	s := cbStdio("fs", "-tools", "env,crash", "-stderr-env", "TOKEN", "-tool-desc", "uses "+canary+":")
	s.Env = map[string]*string{"TOKEN": &ref}
	config := func(server, key string) (string, bool) { return canary, server == "fs" && key == "TOKEN" }
	cb := newTestCraftbot(t, cbPlan(true, s), marker, runtime.CraftbotOptions{Config: config, Log: log.log})
	startConnected(t, cb)
	cs := cbClient(t, cb, nil)
	var seen strings.Builder
	for name, d := range toolMap(t, cs) {
		seen.WriteString(name + " " + d + "\n")
	}
	got := testservers.CallText(t, cs, "mcp_fs_env", map[string]any{"name": "TOKEN"})
	if got != "[REDACTED]" {
		t.Errorf("env TOKEN answered %q", got)
	}
	seen.WriteString(got)
	_, err := cb.Call(context.Background(), "mcp_fs_crash", map[string]any{"code": 1})
	if err == nil {
		t.Fatal("crash succeeded")
	}
	seen.WriteString(err.Error())
	b, _ := json.Marshal(cb.Status())
	seen.Write(b)
	seen.WriteString(log.text())
	if !strings.Contains(log.text(), "TOKEN=[REDACTED]") {
		t.Errorf("the stderr line was not logged redacted:\n%s", log.text())
	}
	if testservers.LeaksPart(seen.String(), canary) {
		t.Errorf("the canary shows:\n%s", seen.String())
	}
}

// Apply with a server removed: its actions are unlisted when Apply
// returns, clients are told, a call to it fails at once (also one in
// flight), and its process is gone. A new server connects, a changed one
// restarts, an unchanged one keeps its process.
func TestCraftbotApply(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "b-calls")
	startsA, startsC := filepath.Join(dir, "a-starts"), filepath.Join(dir, "c-starts")
	keep := cbStdio("keep", "-tools", "echo", "-start-log", filepath.Join(dir, "keep-starts"))
	old := cbPlan(true, cbStdio("a", "-tools", "echo", "-start-log", startsA), cbStdio("b", "-tools", "echo,slow", "-call-log", calls), keep)
	cb := newTestCraftbot(t, old, marker, runtime.CraftbotOptions{})
	startConnected(t, cb)
	changed := make(chan struct{}, 1)
	cs := cbClient(t, cb, changed)
	if tools := toolMap(t, cs); len(tools) != 4 {
		t.Fatalf("tools %v", tools)
	}
	bPid := serverStatus(cb, "b").Pid
	errc := make(chan error, 1)
	go func() {
		_, err := cb.Call(context.Background(), "mcp_b_slow", map[string]any{"ms": 1e9})
		errc <- err
	}()
	eventually(t, "the slow call reaches b", func() bool { return len(lines(t, calls)) == 1 })
	for len(changed) > 0 {
		<-changed
	}

	a := cbStdio("a", "-tools", "echo", "-start-log", startsA, "-tool-desc", "v2")
	next := cbPlan(true, a, keep, cbStdio("c", "-tools", "echo", "-start-log", startsC))
	d, err := cb.Apply(context.Background(), next, nil)
	if err != nil {
		t.Fatal(err)
	}
	effects := map[string]plandiff.Effect{}
	for _, s := range d.Diff.Servers {
		effects[s.Name] = s.Effect
	}
	if effects["a"] != plandiff.Restart || effects["b"] != plandiff.Disconnect || effects["c"] != plandiff.Connect || len(effects) != 3 {
		t.Errorf("diff %v", effects)
	}
	// At once, before any listing.
	_, err = cb.Call(context.Background(), "mcp_b_echo", map[string]any{"text": "x"})
	var ce *runtime.CallError
	if !errors.As(err, &ce) || ce.Kind != runtime.CallUnknownTool {
		t.Errorf("a call to removed b: %v", err)
	}
	if err := testservers.Recv(t, "the call in flight to b", errc); !errors.As(err, &ce) || ce.Kind != runtime.CallUnavailable || !strings.Contains(err.Error(), "removed from the plan") {
		t.Errorf("the call in flight: %v", err)
	}
	if !processGone(bPid) {
		t.Errorf("b's process %d still runs", bPid)
	}
	testservers.Recv(t, "notifications/tools/list_changed", changed)
	// The new server c and the restarted a connect in the background
	// (auto_connect): their actions come once they are connected.
	if err := cb.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools := toolMap(t, cs)
	want := []string{"mcp_a_echo", "mcp_c_echo", "mcp_keep_echo"}
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) || !strings.HasPrefix(tools["mcp_a_echo"], "[MCP:a] v2") {
		t.Errorf("tools after Apply %v", tools)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_b_echo", Arguments: map[string]any{"text": "x"}}); err == nil && !res.IsError {
		t.Errorf("a client's call to removed b succeeded")
	}
	if n := len(lines(t, startsA)); n != 2 {
		t.Errorf("a started %d times, want 2 (restarted)", n)
	}
	if n := len(lines(t, filepath.Join(dir, "keep-starts"))); n != 1 {
		t.Errorf("keep started %d times, want 1", n)
	}
	if got := testservers.CallText(t, cs, "mcp_c_echo", map[string]any{"text": "new"}); got != "new" {
		t.Errorf("c: %q", got)
	}
	if st := serverStatus(cb, "b"); st.Name != "" {
		t.Errorf("removed b in status: %+v", st)
	}
}

// Apply disabling a server, then enabling it again; and a config value
// that changed under the same plan restarts the server that uses it.
func TestCraftbotApplyDisableEnableAndConfigChange(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	ref := plan.ConfigRef("TOKEN")
	s := cbStdio("fs", "-tools", "env", "-start-log", starts)
	s.Env = map[string]*string{"TOKEN": &ref}
	value := "first-value"
	config := func(string, string) (string, bool) { return value, true }
	p := cbPlan(true, s)
	cb := newTestCraftbot(t, p, marker, runtime.CraftbotOptions{Config: config})
	startConnected(t, cb)
	cs := cbClient(t, cb, nil)
	toolMap(t, cs)
	off := *p
	off.Servers = []plan.Server{s}
	off.Servers[0].Enabled = false
	if _, err := cb.Apply(context.Background(), &off, config); err != nil {
		t.Fatal(err)
	}
	if tools := toolMap(t, cs); len(tools) != 0 {
		t.Errorf("disabled: tools %v", tools)
	}
	if st := serverStatus(cb, "fs"); st.State != runtime.StateDisabled {
		t.Errorf("disabled: %+v", st)
	}
	if _, err := cb.Apply(context.Background(), p, config); err != nil {
		t.Fatal(err)
	}
	if got := testservers.CallText(t, cs, "mcp_fs_env", map[string]any{"name": "TOKEN"}); got != "[REDACTED]" {
		t.Errorf("TOKEN: %q", got)
	}
	second := func(string, string) (string, bool) { return "second-value", true }
	d, err := cb.Apply(context.Background(), p, second)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Diff.Servers) != 0 || !d.Changed() {
		t.Errorf("the plan did not change, yet %v; the config value did, yet %+v", d.Diff.Servers, d)
	}
	// The new process has the new value (shown redacted: both are known).
	if got := testservers.CallText(t, cs, "mcp_fs_env", map[string]any{"name": "TOKEN"}); got != "[REDACTED]" {
		t.Errorf("TOKEN: %q", got)
	}
	if n := len(lines(t, starts)); n != 3 {
		t.Errorf("%d starts, want 3 (start, enable, config change)", n)
	}
}

// Over HTTP every client shares the servers: /mcp and /chats/{id}/mcp
// reach the same process; GET /status needs the admin token.
func TestCraftbotHTTP(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	starts := filepath.Join(t.TempDir(), "starts")
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("fs", "-tools", "echo", "-start-log", starts)), marker, runtime.CraftbotOptions{})
	// Connected before the first call: under auto_connect a call of an
	// action whose server is still connecting is an unknown action.
	startConnected(t, cb)
	const admin, mcpTok = "admin-token-0123456789", "mcp-token-0123456789ab"
	srv := httptest.NewServer(cb.Handler(CraftbotHTTPOptions{AdminToken: admin, MCPToken: mcpTok}))
	t.Cleanup(srv.Close)
	t.Cleanup(cb.CloseSessions)
	bearer := func(tok string) *http.Client {
		return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+tok)
			return http.DefaultTransport.RoundTrip(r)
		})}
	}
	for _, path := range []string{"/mcp", "/chats/42/mcp"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL + path, HTTPClient: bearer(mcpTok)}, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := testservers.CallText(t, cs, "mcp_fs_echo", map[string]any{"text": path}); got != path {
			t.Errorf("%s: %q", path, got)
		}
		cs.Close()
	}
	if n := len(lines(t, starts)); n != 1 {
		t.Errorf("%d processes for two clients, want 1", n)
	}
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no MCP token: %d", resp.StatusCode)
	}
	for tok, want := range map[string]int{mcpTok: http.StatusUnauthorized, admin: http.StatusOK} {
		resp, err := bearer(tok).Get(srv.URL + "/status")
		if err != nil {
			t.Fatal(err)
		}
		var st runtime.CraftbotStatus
		_ = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("status with %s: %d", tok[:5], resp.StatusCode)
		}
		if want == http.StatusOK && (st.Profile != "craftbot" || len(st.Servers) != 1 || st.Servers[0].State != runtime.StateRunning) {
			t.Errorf("status %+v", st)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Two servers whose tools make one action name: the first in plan order is
// served, the later one is not (and is logged once).
func TestCraftbotActionCollisionFirstWins(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	var log logRecorder
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("a", "-tools", "b_x"), cbStdio("a_b", "-tools", "x,echo")), marker, runtime.CraftbotOptions{Log: log.log})
	startConnected(t, cb)
	cs := cbClient(t, cb, nil)
	if tools := toolMap(t, cs); len(tools) != 2 || tools["mcp_a_b_x"] == "" || tools["mcp_a_b_echo"] == "" {
		t.Errorf("tools %v", tools)
	}
	if got := testservers.CallText(t, cs, "mcp_a_b_x", nil); got != "b_x" {
		t.Errorf("mcp_a_b_x reached the tool %q, want b_x of server a", got)
	}
	if n := strings.Count(log.text(), "cb-action-collision"); n > 1 {
		t.Errorf("logged %d times", n)
	}
	if !strings.Contains(log.text(), `becomes the action "mcp_a_b_x", as tool "b_x" of server "a" does`) {
		t.Errorf("log:\n%s", log.text())
	}
}

// A server that failed to connect is tried again by a listing once
// DefaultDiscoveryRetry has passed on the runtime's clock.
func TestCraftbotRetriesFailedServer(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	fault := filepath.Join(ws, "fault")
	if err := os.WriteFile(fault, []byte("exit:3"), 0o600); err != nil {
		t.Fatal(err)
	}
	clock := clocktest.New()
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("fs", "-tools", "echo", "-fault-file", "fault")), marker, runtime.CraftbotOptions{Clock: clock, Workspace: ws})
	cb.Start()
	if err := cb.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs := cbClient(t, cb, nil)
	if tools := toolMap(t, cs); len(tools) != 0 || !strings.HasPrefix(serverStatus(cb, "fs").State, "failed: exited (3)") {
		t.Fatalf("tools %v, status %+v", tools, serverStatus(cb, "fs"))
	}
	os.Remove(fault)
	clock.Advance(runtime.DefaultDiscoveryRetry - time.Second)
	toolMap(t, cs)
	if st := serverStatus(cb, "fs"); st.Starts != 1 {
		t.Fatalf("retried before its time: %+v", st)
	}
	clock.Advance(time.Second)
	toolMap(t, cs)
	if err := cb.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tools := toolMap(t, cs); tools["mcp_fs_echo"] == "" {
		t.Errorf("after the retry: tools %v, status %+v", tools, serverStatus(cb, "fs"))
	}
}

// A websocket server: a cancelled call is cancelled at the server, a
// connection dropped mid-call gives an error naming the server, and the
// next call connects again.
func TestCraftbotWebsocketLifecycle(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	addr := testservers.StartWSServer(t)
	cb := newTestCraftbot(t, cbPlan(true, cbRemote("sock", "websocket", "ws://"+addr+"/ws")), marker, runtime.CraftbotOptions{})
	startConnected(t, cb)
	ctx := context.Background()
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := cb.Call(cctx, "mcp_sock_slow", map[string]any{"ms": 1e9})
		errc <- err
	}()
	eventually(t, "the slow call runs at the server", func() bool {
		res, err := cb.Call(ctx, "mcp_sock_slow-running", nil)
		return err == nil && testservers.TextOf(res) == "1"
	})
	cancel()
	var ce *runtime.CallError
	if err := testservers.Recv(t, "the cancelled call", errc); !errors.As(err, &ce) || ce.Kind != runtime.CallCancelled {
		t.Fatalf("cancel: %v", err)
	}
	eventually(t, "the server sees the cancel", func() bool {
		res, err := cb.Call(ctx, "mcp_sock_cancelled", nil)
		return err == nil && testservers.TextOf(res) == "1"
	})
	_, err := cb.Call(ctx, "mcp_sock_drop", nil)
	if !errors.As(err, &ce) || ce.Kind != runtime.CallExited || !strings.HasPrefix(err.Error(), "MCP server sock closed the connection.") {
		t.Fatalf("drop: %v", err)
	}
	res, err := cb.Call(ctx, "mcp_sock_echo", map[string]any{"text": "back"})
	if err != nil || testservers.TextOf(res) != "back" {
		t.Fatalf("after the drop: %v %v", res, err)
	}
	if st := serverStatus(cb, "sock"); st.Starts != 2 || st.State != runtime.StateRunning {
		t.Errorf("%+v", st)
	}
}

// BenchmarkCraftbotCall is one echo call through the craftbot runtime's MCP
// server to a stdio test server (in-memory client transport).
func BenchmarkCraftbotCall(b *testing.B) {
	marker := noLeaks(b)
	cb := newTestCraftbot(b, cbPlan(true, cbStdio("fs", "-tools", "echo")), marker, runtime.CraftbotOptions{})
	startConnected(b, cb)
	cs := cbClient(b, cb, nil)
	toolMap(b, cs)
	args := map[string]any{"text": "x"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fs_echo", Arguments: args}); err != nil {
			b.Fatal(err)
		}
	}
}

// A reload that changes what plandiff calls reregister (the action set)
// restarts the server, as every change with an effect does on the one
// host (docs/decisions/0029-reload.md): its new entry is a new server.
func TestCraftbotReregisterRestarts(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	starts := filepath.Join(t.TempDir(), "starts")
	s := cbStdio("fs", "-tools", "echo", "-start-log", starts)
	cb := newTestCraftbot(t, cbPlan(true, s), marker, runtime.CraftbotOptions{})
	startConnected(t, cb)
	s.ActionSet = "files"
	res, err := cb.Apply(context.Background(), cbPlan(true, s), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Restarted, []string{"fs"}) || len(res.Diff.Servers) != 1 || res.Diff.Servers[0].Effect != plandiff.Reregister {
		t.Errorf("restarted %v, diff %+v", res.Restarted, res.Diff.Servers)
	}
	if st := serverStatus(cb, "fs"); st.ActionSet != "files" || st.State != runtime.StateRunning || st.Starts != 1 {
		t.Errorf("after the reload: %+v", st)
	}
	if n := len(lines(t, starts)); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

// What is served is what CraftBot 605efb4 registers: the first page of a
// server that pages (said once), not a tool whose name breaks the
// handler's source, a tool whose name holds an escape calling the tool the
// host's handler calls; a tool the host registers without inputs keeps
// the server's own input schema, said once.
func TestCraftbotServesAsTheHost(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	var log logRecorder
	tj := func(name, schema string) string {
		return fmt.Sprintf(`{"name": %q, "description": "d", "inputSchema": %s}`, name, schema)
	}
	cb := newTestCraftbot(t, cbPlan(true,
		cbStdio("paged", "-tools", "a,b,c,d,e", "-page-size", "2"),
		cbStdio("odd", "-tools", "", "-tool-json", tj(`say "hi"`, `{"type": "object"}`), "-tool-json", tj(`a\tb`, `{"type": "object"}`),
			"-tool-json", tj("a\tb", `{"type": "object"}`), "-tool-json", tj("untyped", `{"properties": {"q": {"type": "string"}}}`))),
		marker, runtime.CraftbotOptions{Log: log.log})
	startConnected(t, cb)
	cs := cbClient(t, cb, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl.InputSchema
	}
	if len(got) != 5 || got["mcp_paged_a"] == nil || got["mcp_paged_b"] == nil || got[`mcp_odd_a\tb`] == nil || got["mcp_odd_a\tb"] == nil || got["mcp_odd_untyped"] == nil {
		t.Errorf("served %v", got)
	}
	if s, _ := json.Marshal(got["mcp_odd_untyped"]); string(s) != `{"properties":{"q":{"type":"string"}},"type":"object"}` {
		t.Errorf("untyped is served with %s", s)
	}
	// The host's handler of mcp_odd_a\tb calls the tool "a<TAB>b".
	if got := testservers.CallText(t, cs, `mcp_odd_a\tb`, nil); got != "a\tb" {
		t.Errorf(`mcp_odd_a\tb reached the tool %q, want "a\tb"`, got)
	}
	text := log.text()
	for _, want := range []string{
		`server "paged" lists its tools in pages: only the first page's 2 tools are served, as the host reads no other page [cb-tools-paged]`,
		`tool "say \"hi\"" of server "odd": the tool name holds " (a double quote)`,
		`calls tool "a\tb", not "a\\tb": served so [cb-action-escape]`,
		`the host registers the action "mcp_odd_untyped" without inputs (its schema has no "type": "object"); mcpc serves the server's own input schema, with type "object"`,
	} {
		if strings.Count(text, want) != 1 {
			t.Errorf("the log has %d times %s:\n%s", strings.Count(text, want), want, text)
		}
	}
}
