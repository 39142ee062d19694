package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
	"github.com/mcpc-dev/mcpc/runtime/remote/sealtest"
)

const (
	remoteSecret = "host-secret-for-runtime-tests"
	remoteCanary = "CANARY-remote-5e6f7a"
)

// patientDial and addRemote are package sealtest's, with this package's
// host secret.
var patientDial = sealtest.PatientDial

func addRemote(t testing.TB, ws, scope string, s remote.Server, h remote.Headers) {
	t.Helper()
	sealtest.Add(t, ws, remoteSecret, scope, s, h)
}

func bearer(t *testing.T, token string) remote.Headers {
	t.Helper()
	h, err := remote.Bearer(token)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// remoteHost is a host with remote servers enabled and the test secret in
// its environment.
func remoteHost(t *testing.T, marker string, clock runtime.Clock, log func(runtime.LogEntry), servers ...string) *runtime.Host {
	t.Helper()
	s := testServer("srv", "-tools", "echo")
	if len(servers) > 0 {
		s = testServer("srv", "-tools", strings.Join(servers, ","))
	}
	return newTestHost(t, testPlan(s), runtime.HostOptions{
		Env:    testEnv(marker, "MCP_ENCRYPTION_SECRET="+remoteSecret),
		Clock:  clock,
		Log:    log,
		Remote: &runtime.RemoteOptions{Dial: patientDial},
	})
}

func remoteOf(st runtime.ChatStatus, name string) runtime.RemoteServerStatus {
	if st.Remote != nil {
		for _, s := range st.Remote.Servers {
			if s.Name == name {
				return s
			}
		}
	}
	return runtime.RemoteServerStatus{}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A chat's remote servers are served beside its stdio tools: allowlisted
// tools named <server>__<tool>, calls with the server's own names, key
// values redacted everywhere (also in stdio results), JSON-RPC errors kept
// as such, an unreachable server with its reason in status and log, and a
// dropped connection re-made by the next call.
func TestRemoteToolsThroughTheGateway(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: remoteCanary})
	wiki := remotetest.Start(t, remotetest.Options{Transport: "sse", Tools: []string{"a.b"}})
	locked := remotetest.Start(t, remotetest.Options{Transport: "http", Token: remoteCanary})
	addRemote(t, ws, "c1", remote.Server{Name: "notes", URL: notes.URL + "?team=blue"}, bearer(t, remoteCanary))
	addRemote(t, ws, "c1", remote.Server{Name: "wiki", URL: wiki.URL, Tools: []string{"echo", "a.b", "whoami"}}, remote.Headers{"X-Team": "team-" + remoteCanary})
	addRemote(t, ws, "c1", remote.Server{Name: "locked", URL: locked.URL}, bearer(t, "wrong-"+remoteCanary))
	var logs logRecorder
	h := remoteHost(t, marker, nil, logs.log, "echo")
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, err := h.Chat("c1", ws)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, gw, chat, nil)
	ctx := context.Background()

	want := []string{"echo", "notes__drop", "notes__echo", "notes__fail", "notes__slow", "notes__whoami", "wiki__a_b", "wiki__echo", "wiki__whoami"}
	if got := listNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError || resultText(res) != "hello" {
		t.Fatalf("notes__echo: %v %+v", err, res)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wiki__a_b"}); err != nil || resultText(res) != "a.b" {
		t.Errorf("wiki__a_b is called by its own name: %v %v", err, res)
	}
	// The server echoes the key it got: redacted in text and structured
	// content.
	for _, name := range []string{"notes__whoami", "wiki__whoami"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if out := jsonText(res); err != nil || strings.Contains(out, remoteCanary) || !strings.Contains(out, "[REDACTED]") {
			t.Errorf("%s: %v %s", name, err, out)
		}
	}
	// A stdio server that echoes a remote key: redacted too.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "key " + remoteCanary}})
	if err != nil || resultText(res) != "key [REDACTED]" {
		t.Errorf("stdio echo of a remote key: %v %q", err, resultText(res))
	}
	// A JSON-RPC error of the remote server stays one, redacted.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__fail", Arguments: map[string]any{"text": "x"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || strings.Contains(we.Message, remoteCanary) || !strings.Contains(we.Message, "remote server notes: ") || !strings.Contains(we.Message, "[REDACTED]") {
		t.Errorf("notes__fail: %v", err)
	}
	// The unreachable server: no tools, its reason in status and in the log.
	st := chat.Status()
	if ls := remoteOf(st, "locked"); ls.State != "unavailable: 401 (Unauthorized)" || ls.Tools != 0 || strings.Join(ls.HeaderNames, ",") != "Authorization" || ls.RetryAt.IsZero() {
		t.Errorf("locked: %+v", ls)
	}
	ns := remoteOf(st, "notes")
	if ns.State != "connected · 5 tools" || ns.URL != notes.URL || ns.Connected != "http" || ns.Tools != 5 || ns.Allowlist != nil || ns.ServerVersion != "1.2.3" {
		t.Errorf("notes: %+v", ns)
	}
	if wst := remoteOf(st, "wiki"); wst.State != "connected · 3 tools" || wst.Connected != "sse" || strings.Join(wst.ToolNames, ",") != "wiki__a_b,wiki__echo,wiki__whoami" || strings.Join(wst.HeaderNames, ",") != "X-Team" {
		t.Errorf("wiki: %+v", wst)
	}
	if st.Remote.Scope != "c1" || st.Remote.File != remote.Path(ws) {
		t.Errorf("remote status %+v", st.Remote)
	}
	if !strings.Contains(logs.text(), "remote server locked ("+locked.URL+") is unavailable: 401 (Unauthorized); the first listing after 60s tries it again") {
		t.Errorf("log:\n%s", logs.text())
	}

	// The server drops every connection during a call: an error result,
	// not retried; the next call reconnects.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__drop"})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "the next call reconnects") {
		t.Fatalf("notes__drop: %v %q", err, resultText(res))
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__echo", Arguments: map[string]any{"text": "again"}}); err != nil || resultText(res) != "again" {
		t.Fatalf("after the drop: %v %v", err, res)
	}
	if notes.Calls("drop") != 1 || notes.Initialized.Load() != 2 {
		t.Errorf("drop calls %d, handshakes %d: one call, one reconnect", notes.Calls("drop"), notes.Initialized.Load())
	}

	// Nothing shows a key: not status, not the host status, not the log.
	for what, out := range map[string]string{"status": jsonText(h.Status()), "log": logs.text(), "detail": jsonText(must(chat.Server("srv")))} {
		if strings.Contains(out, remoteCanary) || strings.Contains(out, "team=blue") {
			t.Errorf("%s leaks:\n%s", what, out)
		}
	}
}

func must[T any](v T, ok bool) T {
	if !ok {
		panic("not found")
	}
	return v
}

// Chat.Tools and Chat.Call serve remote tools to an embedder without a
// gateway, and a stdio tool wins a name over a remote tool.
func TestRemoteToolsOfAChat(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, "chat-7", remote.Server{Name: "s", URL: srv.URL, Tools: []string{"echo", "whoami"}}, remote.Headers{})
	var logs logRecorder
	stdio := testServer("srv", "-tools", "echo")
	stdio.ToolPrefix = "s__" // s__echo: the same name as the remote tool
	h := newTestHost(t, testPlan(stdio), runtime.HostOptions{
		Env:    testEnv(marker, "MCP_ENCRYPTION_SECRET="+remoteSecret),
		Log:    logs.log,
		Remote: &runtime.RemoteOptions{Dial: patientDial},
	})
	chat, _ := h.Chat("chat-7", ws)
	ctx := context.Background()
	tools, err := chat.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.Name == "s__whoami" && (!tool.Remote || tool.Server != "s" || tool.ServerTool != "whoami" || tool.Def.Name != "s__whoami") {
			t.Errorf("%+v", tool)
		}
	}
	if strings.Join(names, ",") != "s__echo,s__whoami" {
		t.Errorf("tools %v", names)
	}
	if !strings.Contains(logs.text(), `tool "echo" of remote server "s" is skipped: the name "s__echo" is already used by another tool`) {
		t.Errorf("log:\n%s", logs.text())
	}
	res, err := chat.Call(ctx, "s__echo", map[string]any{"text": "stdio"})
	if err != nil || resultText(res) != "stdio" || srv.Calls("echo") != 0 {
		t.Errorf("s__echo went to %v %v (remote calls %d)", err, res, srv.Calls("echo"))
	}
	if _, err := chat.Call(ctx, "s__whoami", nil); err != nil || srv.Calls("whoami") != 1 {
		t.Errorf("s__whoami: %v", err)
	}
	// Not in the allowlist: unknown.
	var ce *runtime.CallError
	if _, err := chat.Call(ctx, "s__slow", nil); !errors.As(err, &ce) || ce.Kind != runtime.CallUnknownTool {
		t.Errorf("s__slow: %v", err)
	}
	// Closing the chat disconnects; the manager refuses further calls.
	chat.Close()
	if _, err := chat.Call(ctx, "s__whoami", nil); err == nil {
		t.Error("a call after Close")
	}
}

// servers.json is re-read by every listing: `mcpc remote add` and `remove`
// take effect without a restart, and connected clients hear of it.
func TestRemoteServersJSONChangesReachClients(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	a := remotetest.Start(t, remotetest.Options{Transport: "http"})
	h := remoteHost(t, marker, nil, nil)
	gw := NewGateway(h, GatewayOptions{})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", ws)
	var changed atomic.Int32
	cs := connectInMemory(t, gw, chat, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) }})
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("tools %v", got)
	}
	addRemote(t, ws, "c", remote.Server{Name: "a", URL: a.URL, Tools: []string{"echo"}}, remote.Headers{})
	if got := listNames(t, cs); !slices.Equal(got, []string{"a__echo", "echo"}) {
		t.Fatalf("after add: %v", got)
	}
	eventually(t, "list_changed after the add", func() bool { return changed.Load() >= 1 })
	n := changed.Load()
	// Listing again changes nothing: no notification, no reconnect.
	listNames(t, cs)
	if a.Initialized.Load() != 1 {
		t.Errorf("handshakes %d", a.Initialized.Load())
	}
	f, _ := remote.Load(ws)
	data, _, _ := f.Without("a")
	if err := remote.WriteFile(ws, f.Data, data, true); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("after remove: %v", got)
	}
	eventually(t, "list_changed after the remove", func() bool { return changed.Load() > n })
	// A call to a removed tool is an unknown tool.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "a__echo"}); err == nil || !strings.Contains(err.Error(), `unknown tool "a__echo"`) {
		t.Errorf("removed tool: %v", err)
	}
}

// A server that is down is retried before a listing once its retry time
// (1 minute, on the host's clock) has come, and its tools then reach the
// client.
func TestRemoteRetryOnTheHostClock(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	// Down, not hanging: the first attempt fails at once, and the retry,
	// with a patient dial, succeeds however slow the machine is.
	srv.Down.Store(true)
	addRemote(t, ws, "c", remote.Server{Name: "late", URL: srv.URL, Transport: "http", Tools: []string{"echo"}}, remote.Headers{})
	clock := clocktest.New()
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{
		Env: testEnv(marker, "MCP_ENCRYPTION_SECRET="+remoteSecret), Clock: clock,
		Remote: &runtime.RemoteOptions{Dial: patientDial},
	})
	gw := NewGateway(h, GatewayOptions{})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", ws)
	cs := connectInMemory(t, gw, chat, nil)
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("tools %v", got)
	}
	if st := remoteOf(chat.Status(), "late"); st.State != "unavailable: 503 (Service Unavailable)" {
		t.Fatalf("late: %+v", st)
	}
	srv.Down.Store(false)
	clock.Advance(59 * time.Second)
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("retried before its time: %v", got)
	}
	clock.Advance(time.Second)
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo", "late__echo"}) {
		t.Fatalf("after the retry: %v", got)
	}
	if st := remoteOf(chat.Status(), "late"); st.State != "connected · 1 tool" {
		t.Errorf("late: %+v", st)
	}
}

// Over HTTP every chat's scope is its id: an entry sealed for chat a is
// skipped in chat b, whose status says why; GET /status shows both.
func TestRemoteScopesOverHTTP(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := t.TempDir()
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: remoteCanary})
	wsA, wsB := filepath.Join(root, "a"), filepath.Join(root, "b")
	os.Mkdir(wsA, 0o700)
	addRemote(t, wsA, "a", remote.Server{Name: "notes", URL: notes.URL, Tools: []string{"echo", "whoami"}}, bearer(t, remoteCanary))
	data, err := os.ReadFile(remote.Path(wsA))
	if err != nil {
		t.Fatal(err)
	}
	// The agent of chat b copies chat a's file.
	os.MkdirAll(filepath.Dir(remote.Path(wsB)), 0o700)
	if err := os.WriteFile(remote.Path(wsB), data, 0o600); err != nil {
		t.Fatal(err)
	}
	h := remoteHost(t, marker, nil, nil)
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root})
	base, client := httpGateway(t, gw)
	csA := connectHTTP(t, client, base+"/chats/a/mcp")
	csB := connectHTTP(t, client, base+"/chats/b/mcp")
	if got := listNames(t, csA); !slices.Equal(got, []string{"echo", "notes__echo", "notes__whoami"}) {
		t.Errorf("chat a: %v", got)
	}
	if got := listNames(t, csB); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("chat b: %v", got)
	}
	if res, err := csA.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes__whoami"}); err != nil || strings.Contains(jsonText(res), remoteCanary) || !strings.Contains(resultText(res), "[REDACTED]") {
		t.Errorf("whoami: %v %s", err, jsonText(res))
	}
	if _, err := csB.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes__echo"}); err == nil {
		t.Error("chat b called chat a's server")
	}
	if notes.Initialized.Load() != 1 {
		t.Errorf("handshakes %d: chat b must never connect", notes.Initialized.Load())
	}
	resp, err := client.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st runtime.HostStatus
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != http.StatusOK || len(st.Chats) != 2 {
		t.Fatalf("status %d %v\n%s", resp.StatusCode, err, body)
	}
	a, b := st.Chats[0].Remote, st.Chats[1].Remote
	if a == nil || b == nil || a.Scope != "a" || len(a.Servers) != 1 || a.Servers[0].State != "connected · 2 tools" || a.Servers[0].Tools != 2 {
		t.Errorf("chat a: %s", body)
	}
	if b == nil || len(b.Servers) != 0 || len(b.Skipped) != 1 || b.Skipped[0].Name != "notes" || b.Skipped[0].Reason != remote.NotOpenReason || !strings.HasPrefix(b.Skipped[0].Position, remote.Path(wsB)+":") {
		t.Errorf("chat b: %s", body)
	}
	if strings.Contains(string(body), remoteCanary) {
		t.Errorf("status leaks the key:\n%s", body)
	}
}

// A chat without a scope uses no remote servers and says why; a host
// without remote options shows no remote part at all.
func TestRemoteNeedsAScope(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, "s", remote.Server{Name: "s", URL: srv.URL}, remote.Headers{})
	h := remoteHost(t, marker, nil, nil)
	chat, err := h.ChatWithScope("stdio", ws, "")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := chat.Tools(context.Background())
	if err != nil || len(tools) != 1 {
		t.Errorf("tools %v %v", tools, err)
	}
	if st := chat.Status().Remote; st == nil || st.Disabled == "" || len(st.Servers) != 0 {
		t.Errorf("status %+v", st)
	}
	if _, err := h.ChatWithScope("stdio", ws, "s"); err == nil || !strings.Contains(err.Error(), "session scope") {
		t.Errorf("another scope for the same chat: %v", err)
	}
	if srv.Requests.Load() != 0 {
		t.Errorf("requests %d", srv.Requests.Load())
	}
	plain := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker)})
	c, _ := plain.Chat("x", ws)
	if c.Status().Remote != nil || strings.Contains(jsonText(c.Status()), "remote") {
		t.Errorf("a host without remotes: %s", jsonText(c.Status()))
	}
}
