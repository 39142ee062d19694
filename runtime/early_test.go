package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// slotState is the state of the chat's process of its first server.
func slotState(c *Chat) string { return c.Status().Servers[0].State }

// innerState is the chat's own state of its first server's process,
// which status hides behind a failed discovery.
func innerState(c *Chat) string {
	s := c.slotList()[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// A first call starts the chat's process alongside the discovery, not after
// it (issue 13): here the discovery never answers, and the chat's process
// is up all the same. When the discovery then fails, the call's tool
// belongs to no server: the process started for it is stopped again,
// unused, and the chat's status is as before.
func TestEarlyStartAlongsideDiscovery(t *testing.T) {
	marker := noLeaks(t)
	// The discovery's workspace is under TMPDIR; "../hold" there tells its
	// process to hang. The chat's workspace has no such neighbour.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := os.WriteFile(filepath.Join(tmp, "hold"), []byte("hang"), 0o644); err != nil {
		t.Fatal(err)
	}
	startLog := filepath.Join(t.TempDir(), "starts")
	s := testServer("srv", "-tools", "echo", "-fault-file", "../hold", "-pidfile", "pid", "-start-log", startLog)
	s.StartupTimeoutSeconds = 10 // on the fake clock
	clock := newFakeClock()
	logs := &logRecorder{}
	h := newTestHost(t, testPlan(s), HostOptions{Env: testEnv(marker), Clock: clock, Log: logs.log})
	ws := filepath.Join(t.TempDir(), "chats", "c")
	chat, _ := h.Chat("c", ws)

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := chat.Call(context.Background(), "echo", map[string]any{"text": "hi"})
		done <- outcome{res, err}
	}()
	testservers.WaitUntil(t, "the chat's process runs while the discovery hangs", func() bool {
		return slotState(chat) == StateRunning && len(lines(t, startLog)) == 2
	})
	pid := testservers.ReadPid(t, filepath.Join(ws, "pid"))
	clock.Advance(10 * time.Second) // the discovery's startup timeout
	out := testservers.Recv(t, "the call to end", done)
	var ce *CallError
	if !errors.As(out.err, &ce) || ce.Kind != CallUnknownTool {
		t.Fatalf("call: %v %v, want unknown tool", out.res, out.err)
	}
	// The chat's status shows the failed discovery; its own state is back
	// to not started.
	testservers.WaitUntil(t, "the unused process stops", func() bool {
		return innerState(chat) == StateNotStarted && chat.Status().Servers[0].Pid == 0 && !testservers.Alive(pid)
	})
	if text := logs.text(); !strings.Contains(text, "MCP server srv stopped: the call it was started for did not use it") {
		t.Errorf("log:\n%s", text)
	}
}

// A first call through the gateway, to the one server that can own its
// tool (the other's prefix rules it out), uses the process started
// alongside the discovery: one discovery and one chat process in all, and
// none for the other server.
func TestEarlyStartIsTheCallsProcess(t *testing.T) {
	marker := noLeaks(t)
	dir := t.TempDir()
	a := testServer("a", "-tools", "echo", "-start-log", filepath.Join(dir, "a"))
	b := testServer("b", "-tools", "echo", "-start-log", filepath.Join(dir, "b"))
	b.ToolPrefix = "b_"
	h := newTestHost(t, testPlan(a, b), HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	cs := connectInMemory(t, gw, chat, nil)
	h.StartDiscovery()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || resultText(res) != "hi" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if got := len(lines(t, filepath.Join(dir, "a"))); got != 2 {
		t.Errorf("server a started %d times, want 2 (its discovery, the chat's process)", got)
	}
	if got := len(lines(t, filepath.Join(dir, "b"))); got != 1 {
		t.Errorf("server b started %d times, want 1 (its discovery)", got)
	}
	st := chat.Status().Servers
	if st[0].State != StateRunning || st[1].State != StateNotStarted {
		t.Errorf("status %+v", st)
	}
}

// When the process started early fails, the call whose tool it serves
// fails with that start's error: it does not start a second process.
func TestEarlyStartFailureIsTheCalls(t *testing.T) {
	marker := noLeaks(t)
	dir := t.TempDir()
	startLog := filepath.Join(dir, "starts")
	// The fault file is in the chat's workspace only: the discovery works.
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "fault"), []byte("exit:3"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo", "-fault-file", "fault", "-start-log", startLog)),
		HostOptions{Env: testEnv(marker)})
	chat, _ := h.Chat("c", ws)
	_, err := chat.Call(context.Background(), "echo", map[string]any{"text": "hi"})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != CallStartFailed || ce.Tool != "echo" || !strings.Contains(ce.Message, "exited (3)") {
		t.Fatalf("call: %v", err)
	}
	if got := len(lines(t, startLog)); got != 2 {
		t.Errorf("%d processes started, want 2 (the discovery, the chat's)", got)
	}
}

// A session's initialize waits for the discovery (its instructions); the
// chat's process of the plan's only server starts meanwhile, not after
// the client's first call. A first call whose tool turns out unknown (the
// discovery failed here) stops it again, unused.
func TestSessionStartsTheOnlyServerAlongsideDiscovery(t *testing.T) {
	marker := noLeaks(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the discovery hangs ("../hold"), the chat's process does not
	if err := os.WriteFile(filepath.Join(tmp, "hold"), []byte("hang"), 0o644); err != nil {
		t.Fatal(err)
	}
	startLog := filepath.Join(t.TempDir(), "starts")
	s := testServer("srv", "-tools", "echo", "-fault-file", "../hold", "-pidfile", "pid", "-start-log", startLog)
	s.StartupTimeoutSeconds = 10 // on the fake clock
	clock := newFakeClock()
	h := newTestHost(t, testPlan(s), HostOptions{Env: testEnv(marker), Clock: clock})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	ws := filepath.Join(t.TempDir(), "chats", "c")
	chat, _ := h.Chat("c", ws)
	connected := make(chan *mcp.ClientSession, 1)
	go func() { connected <- connectInMemory(t, gw, chat, nil) }()
	testservers.WaitUntil(t, "the chat's process runs while initialize waits for the hanging discovery", func() bool {
		return innerState(chat) == StateRunning && len(lines(t, startLog)) == 2
	})
	pid := testservers.ReadPid(t, filepath.Join(ws, "pid"))
	clock.Advance(10 * time.Second) // the discovery's startup timeout
	cs := testservers.Recv(t, "initialize to end", connected)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err == nil || !strings.Contains(err.Error(), `unknown tool "echo"`) {
		t.Fatalf("call: %v, want unknown tool", err)
	}
	testservers.WaitUntil(t, "the unused process stops", func() bool {
		return innerState(chat) == StateNotStarted && !testservers.Alive(pid)
	})
}

// The first call of a session uses the process its initialize started: a
// discovery and one chat process in all, also with a second session.
func TestSessionStartIsTheCallsProcess(t *testing.T) {
	marker := noLeaks(t)
	startLog := filepath.Join(t.TempDir(), "starts")
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo", "-start-log", startLog)), HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
	h.StartDiscovery()
	for range 2 {
		cs := connectInMemory(t, gw, chat, nil)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError || resultText(res) != "hi" {
			t.Fatalf("echo: %v %+v", err, res)
		}
	}
	if got := len(lines(t, startLog)); got != 2 {
		t.Errorf("%d processes started, want 2 (the discovery, the chat's)", got)
	}
}
