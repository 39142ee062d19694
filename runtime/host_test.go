package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

func text(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil {
		t.Fatal("nil result")
	}
	return testservers.TextOf(res)
}

func toolList(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Server+":"+t.ServerTool+"="+t.Name)
	}
	return out
}

func callErr(t testing.TB, err error, kind CallErrorKind) *CallError {
	t.Helper()
	var ce *CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want a *CallError of kind %s", err, err, kind)
	}
	if ce.Kind != kind {
		t.Fatalf("error kind %s (%v), want %s", ce.Kind, ce, kind)
	}
	return ce
}

// 50 chats that list tools at once share one discovery per server; each
// chat's first call then starts a process of its own, in its workspace.
func TestDiscoverySharedBy50Chats(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	logA, logB := filepath.Join(dir, "a.starts"), filepath.Join(dir, "b.starts")
	a := testServer("alpha", "-tools", "echo,env", "-start-log", logA, "-pidfile", "server.pid", "-start-delay", "100ms")
	b := testServer("beta", "-tools", "echo,read,x y", "-start-log", logB)
	b.ToolPrefix = "b_"
	off := testServer("gamma", "-start-log", filepath.Join(dir, "gamma.starts"))
	off.Enabled = false
	h := newTestHost(t, testPlan(a, b, off), HostOptions{Env: testEnv(marker)})

	chats := make([]*Chat, 50)
	for i := range chats {
		c, err := h.Chat(fmt.Sprintf("c%02d", i), filepath.Join(dir, "ws", fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		chats[i] = c
	}
	lists := make([][]Tool, len(chats))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range chats {
		wg.Go(func() {
			<-start
			tools, err := c.Tools(context.Background())
			if err != nil {
				t.Error(err)
			}
			lists[i] = tools
		})
	}
	close(start)
	wg.Wait()
	if n := len(lines(t, logA)); n != 1 {
		t.Errorf("alpha was started %d times for 50 concurrent listings, want 1", n)
	}
	if n := len(lines(t, logB)); n != 1 {
		t.Errorf("beta was started %d times for 50 concurrent listings, want 1", n)
	}
	want := []string{"alpha:echo=echo", "alpha:env=env", "beta:echo=b_echo", "beta:read=b_read", "beta:x y=b_x_y"}
	for i, l := range lists {
		if got := toolList(l); !slices.Equal(got, want) {
			t.Fatalf("chat %d tools %v, want %v", i, got, want)
		}
	}
	st := h.Status()
	for _, s := range st.Servers {
		wantState, wantCount := "ok", 1
		if s.Name == "gamma" {
			wantState, wantCount = StateDisabled, 0
		}
		if s.State != wantState || s.Discoveries != wantCount {
			t.Errorf("discovery status %+v, want state %q, %d discoveries", s, wantState, wantCount)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gamma.starts")); err == nil {
		t.Error("the disabled server was started")
	}

	// Three chats call: three more processes, each in its chat's workspace.
	pids := map[string]bool{}
	for _, c := range chats[:3] {
		res, err := c.Call(context.Background(), "echo", map[string]any{"text": "hi " + c.ID()})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); got != "hi "+c.ID() {
			t.Errorf("echo: %q", got)
		}
		pid := strings.TrimSpace(readFile(t, filepath.Join(c.Workspace(), "server.pid")))
		pids[pid] = true
		if s := c.Status().Servers[0]; s.State != StateRunning || fmt.Sprint(s.Pid) != pid {
			t.Errorf("chat %s status %+v, pid file %s", c.ID(), s, pid)
		}
		if s := c.Status().Servers[1]; s.State != StateNotStarted || s.Tools != 3 {
			t.Errorf("beta in chat %s: %+v", c.ID(), s)
		}
		if s := c.Status().Servers[2]; s.State != StateDisabled {
			t.Errorf("gamma in chat %s: %+v", c.ID(), s)
		}
	}
	if len(pids) != 3 {
		t.Errorf("3 chats share processes: pids %v", pids)
	}
	if n := len(lines(t, logA)); n != 4 {
		t.Errorf("alpha started %d times, want 1 discovery + 3 chats", n)
	}
	// The same chat calls again: same process.
	if _, err := chats[0].Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	if n := len(lines(t, logA)); n != 4 {
		t.Errorf("a second call started another process (%d starts)", n)
	}
	// Unknown tools, including the built-in-named and disabled ones.
	for _, name := range []string{"nope", "read", "gamma_echo"} {
		_, err := chats[0].Call(context.Background(), name, nil)
		if ce := callErr(t, err, CallUnknownTool); ce.Message != fmt.Sprintf("unknown tool %q", name) {
			t.Errorf("message %q", ce.Message)
		}
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A failed discovery contributes no tools, shows as failed, and is tried
// again once 60 s have passed on the host's clock, not before.
func TestDiscoveryRetryAfter60s(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "server") // does not exist yet
	flaky := testServer("flaky", "-tools", "late")
	flaky.Command = bin
	clock := clocktest.New()
	var changed atomic.Int32
	h := newTestHost(t, testPlan(testServer("ok", "-tools", "early"), flaky), HostOptions{
		Env: testEnv(marker), Clock: clock, OnToolsChanged: func() { changed.Add(1) }})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))

	tools, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := toolList(tools); !slices.Equal(got, []string{"ok:early=early"}) {
		t.Fatalf("tools %v", got)
	}
	d := h.Status().Servers[1]
	if !strings.HasPrefix(d.State, "failed: cannot start") || d.Discoveries != 1 || !d.RetryAt.Equal(clock.Now().Add(60*time.Second)) {
		t.Errorf("flaky discovery %+v", d)
	}
	if s := c.Status().Servers[1]; !strings.HasPrefix(s.State, "failed: cannot start") || s.Tools != 0 {
		t.Errorf("flaky in chat: %+v", s)
	}

	// The binary appears; 59 s later the failure still stands.
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testBin, bin); err != nil {
		t.Fatal(err)
	}
	clock.Advance(59 * time.Second)
	if tools, _ = c.Tools(context.Background()); len(tools) != 1 || h.Status().Servers[1].Discoveries != 1 {
		t.Fatalf("retried before 60 s: %v, %+v", toolList(tools), h.Status().Servers[1])
	}
	// At 60 s a listing starts the retry in the background.
	clock.Advance(time.Second)
	if _, err := c.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The state turns "ok" before the tool table is rebuilt with the
	// server's tools: wait for both.
	eventually(t, "the retry succeeds", func() bool { d := h.Status().Servers[1]; return d.State == "ok" && d.Tools > 0 })
	if d := h.Status().Servers[1]; d.Discoveries != 2 || d.Tools != 1 {
		t.Errorf("after the retry: %+v", d)
	}
	tools, _ = c.Tools(context.Background())
	if got := toolList(tools); !slices.Equal(got, []string{"ok:early=early", "flaky:late=late"}) {
		t.Errorf("tools after the retry %v", got)
	}
	if res, err := c.Call(context.Background(), "late", nil); err != nil || text(t, res) != "late" {
		t.Errorf("call after the retry: %v", err)
	}
	if n := changed.Load(); n != 2 {
		t.Errorf("OnToolsChanged called %d times, want 2 (first discovery, retry)", n)
	}
	// A succeeded discovery is never repeated.
	clock.Advance(time.Hour)
	c.Tools(context.Background())
	if d := h.Status().Servers[1]; d.Discoveries != 2 {
		t.Errorf("discovered again after success: %+v", d)
	}
}

// An idle process stops after idleTimeoutSeconds on the host's clock; a
// call restarts the wait; 0 never stops.
func TestIdleStop(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	idle := testServer("idle", "-tools", "echo", "-start-log", filepath.Join(dir, "idle.starts"),
		"-spawn-child", "-child-pidfile", "child.pid")
	idle.IdleTimeoutSeconds = 30
	never := testServer("never", "-tools", "n_echo")
	never.IdleTimeoutSeconds = 0
	clock := clocktest.New()
	h := newTestHost(t, testPlan(idle, never), HostOptions{Env: testEnv(marker), Clock: clock})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx := context.Background()
	if _, err := c.Call(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "n_echo", nil); err != nil {
		t.Fatal(err)
	}
	pid := c.Status().Servers[0].Pid
	child := readPid(t, filepath.Join(c.Workspace(), "child.pid"))
	clock.Advance(29 * time.Second)
	if _, err := c.Call(ctx, "echo", nil); err != nil { // restarts the 30 s
		t.Fatal(err)
	}
	clock.Advance(29 * time.Second)
	if s := c.Status().Servers[0]; s.State != StateRunning || s.Pid != pid {
		t.Fatalf("stopped early: %+v", s)
	}
	clock.Advance(time.Second)
	if s := c.Status().Servers[0]; s.State != StateNotStarted {
		t.Errorf("after 30 s idle: %+v", s)
	}
	if !processGone(pid) || !processGone(child) {
		t.Errorf("idle stop left process %d or its child %d", pid, child)
	}
	if s := c.Status().Servers[1]; s.State != StateRunning {
		t.Errorf("idleTimeoutSeconds 0 stopped: %+v", s)
	}
	clock.Advance(100 * time.Hour)
	if s := c.Status().Servers[1]; s.State != StateRunning {
		t.Errorf("idleTimeoutSeconds 0 stopped after 100h: %+v", s)
	}
	// The next call starts a new process.
	if _, err := c.Call(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	if s := c.Status().Servers[0]; s.State != StateRunning || s.Pid == pid {
		t.Errorf("after restart %+v", s)
	}
	if n := len(lines(t, filepath.Join(dir, "idle.starts"))); n != 3 {
		t.Errorf("%d starts, want discovery + 2 chat processes", n)
	}
}

// Calls to one process run one at a time unless the server is parallel.
func TestSerializedUnlessParallel(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	serial := testServer("serial", "-tools", "concurrency,barrier")
	par := testServer("par", "-tools", "concurrency,barrier")
	par.ToolPrefix, par.Parallel = "p_", true
	h := newTestHost(t, testPlan(serial, par), HostOptions{Env: testEnv(marker)})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx := context.Background()

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := c.Call(ctx, "concurrency", map[string]any{"ms": 50}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	res, err := c.Call(ctx, "concurrency", map[string]any{"ms": 0})
	if err != nil || text(t, res) != "max=1" {
		t.Errorf("serial server saw %q (%v), want max=1", text(t, res), err)
	}

	// Three calls that each return only once all three run at once.
	for range 3 {
		wg.Go(func() {
			res, err := c.Call(ctx, "p_barrier", map[string]any{"n": 3})
			if err != nil {
				t.Error(err)
				return
			}
			if res.IsError || text(t, res) != "met 3" {
				t.Errorf("parallel barrier: %q", text(t, res))
			}
		})
	}
	wg.Wait()
}

// A call that passes callTimeoutSeconds is cancelled: the server gets
// notifications/cancelled, the call is not retried, the process stays.
func TestCallTimeoutSendsCancelled(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	cancelled, calls := filepath.Join(dir, "cancelled"), filepath.Join(dir, "calls")
	s := testServer("slowpoke", "-tools", "slow,echo", "-cancel-marker", cancelled, "-call-log", calls)
	s.CallTimeoutSeconds = 5
	clock := clocktest.New()
	h := newTestHost(t, testPlan(s), HostOptions{Env: testEnv(marker), Clock: clock})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	if _, err := c.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "slow", map[string]any{"ms": 600000})
		done <- err
	}()
	// Once the process runs, the only timer left is the call's timeout.
	eventually(t, "the call is sent", func() bool {
		return c.Status().Servers[0].State == StateRunning && clock.Pending() == 1 && len(lines(t, calls)) == 1
	})
	pid := c.Status().Servers[0].Pid
	clock.Advance(4 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("returned before the timeout: %v", err)
	default:
	}
	clock.Advance(time.Second)
	err := <-done
	ce := callErr(t, err, CallTimeout)
	if want := "MCP server slowpoke: tool slow did not answer within 5s (callTimeoutSeconds); the call was cancelled and the server was told so (notifications/cancelled)"; ce.Message != want {
		t.Errorf("message %q\nwant    %q", ce.Message, want)
	}
	eventually(t, "the server sees notifications/cancelled", func() bool {
		_, err := os.Stat(cancelled)
		return err == nil
	})
	if got := lines(t, calls); !slices.Equal(got, []string{"slow"}) {
		t.Errorf("calls the server received: %v (a failed call must not be retried)", got)
	}
	if s := c.Status().Servers[0]; s.State != StateRunning || s.Pid != pid {
		t.Errorf("after a timeout: %+v", s)
	}
	if res, err := c.Call(context.Background(), "echo", map[string]any{"text": "still here"}); err != nil || text(t, res) != "still here" {
		t.Errorf("next call: %v", err)
	}
}

// Cancelling the caller's context also sends notifications/cancelled.
func TestCallerCancelSendsCancelled(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	cancelled, calls := filepath.Join(dir, "cancelled"), filepath.Join(dir, "calls")
	h := newTestHost(t, testPlan(testServer("s", "-tools", "slow", "-cancel-marker", cancelled, "-call-log", calls)),
		HostOptions{Env: testEnv(marker)})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "slow", map[string]any{"ms": 600000})
		done <- err
	}()
	eventually(t, "the call is sent", func() bool { return len(lines(t, calls)) == 1 })
	cancel()
	callErr(t, <-done, CallCancelled)
	eventually(t, "the server sees notifications/cancelled", func() bool {
		_, err := os.Stat(cancelled)
		return err == nil
	})
}

// A process that dies during a call turns it into SPEC §4's error, its
// process group is killed, and the next call starts a new one.
func TestDeathMessageAndRestart(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	crashy := testServer("crashy", "-tools", "crash,echo", "-spawn-child", "-child-pidfile", "child.pid", "-call-log", calls)
	pw := testServer("playwright", "-tools", "crash", "-stderr", "launching browser")
	pw.ToolPrefix = "pw_"
	var log logRecorder
	h := newTestHost(t, testPlan(crashy, pw), HostOptions{Env: testEnv(marker), Log: log.log})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx := context.Background()
	if _, err := c.Call(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	pid := c.Status().Servers[0].Pid
	child := readPid(t, filepath.Join(c.Workspace(), "child.pid"))

	_, err := c.Call(ctx, "crash", map[string]any{"code": 3})
	ce := callErr(t, err, CallExited)
	want := "MCP server crashy exited (3): testserver: crashing with code 3. It restarts on the next call; its state was lost."
	if ce.Message != want {
		t.Errorf("message %q\nwant    %q", ce.Message, want)
	}
	if !processGone(pid) || !processGone(child) {
		t.Errorf("the dead server's group is not gone: server %d, grandchild %d", pid, child)
	}
	if s := c.Status().Servers[0]; s.State != StateExited || s.LastError != want {
		t.Errorf("status %+v", s)
	}
	if !strings.Contains(log.text(), want) {
		t.Errorf("the death is not logged:\n%s", log.text())
	}
	if got := lines(t, calls); !slices.Equal(got, []string{"echo", "crash"}) {
		t.Errorf("calls %v: the failed call must not be retried", got)
	}
	if res, err := c.Call(ctx, "echo", map[string]any{"text": "again"}); err != nil || text(t, res) != "again" {
		t.Fatalf("next call: %v", err)
	}
	if s := c.Status().Servers[0]; s.State != StateRunning || s.Pid == pid || s.LastError != "" {
		t.Errorf("after the restart: %+v", s)
	}

	_, err = c.Call(ctx, "pw_crash", map[string]any{"code": 1})
	want = "MCP server playwright exited (1): testserver: crashing with code 1. It restarts on the next call; browser state was lost."
	if ce := callErr(t, err, CallExited); ce.Message != want {
		t.Errorf("playwright message %q\nwant %q", ce.Message, want)
	}
}

// Reset and Restart stop whole process groups; the chat stays usable.
func TestResetAndRestart(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	a := testServer("a", "-tools", "a_echo", "-spawn-child", "-child-pidfile", "a.child")
	b := testServer("b", "-tools", "b_echo", "-spawn-child", "-child-pidfile", "b.child")
	h := newTestHost(t, testPlan(a, b), HostOptions{Env: testEnv(marker)})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	other, _ := h.Chat("other", filepath.Join(dir, "other"))
	ctx := context.Background()
	callBoth := func(c *Chat) (int, int) {
		for _, tool := range []string{"a_echo", "b_echo"} {
			if _, err := c.Call(ctx, tool, nil); err != nil {
				t.Fatal(err)
			}
		}
		st := c.Status()
		return st.Servers[0].Pid, st.Servers[1].Pid
	}
	pa, pb := callBoth(c)
	oa, _ := callBoth(other)
	ca := readPid(t, filepath.Join(c.Workspace(), "a.child"))

	if err := c.Restart("a"); err != nil {
		t.Fatal(err)
	}
	if !processGone(pa) || !processGone(ca) || processGone(pb) || processGone(oa) {
		t.Errorf("restart a: a %v (child %v), b %v, other chat %v", processGone(pa), processGone(ca), processGone(pb), processGone(oa))
	}
	if s := c.Status().Servers[0]; s.State != StateNotStarted {
		t.Errorf("after restart: %+v", s)
	}
	if err := c.Restart("nope"); err == nil || !strings.Contains(err.Error(), `no MCP server "nope"`) {
		t.Errorf("restart of an unknown server: %v", err)
	}

	pa, pb = callBoth(c)
	ca, cb := readPid(t, filepath.Join(c.Workspace(), "a.child")), readPid(t, filepath.Join(c.Workspace(), "b.child"))
	c.Reset()
	for _, pid := range []int{pa, pb, ca, cb} {
		if !processGone(pid) {
			t.Errorf("process %d survived the reset", pid)
		}
	}
	if processGone(oa) {
		t.Error("resetting one chat stopped another chat's process")
	}
	for _, s := range c.Status().Servers {
		if s.State != StateNotStarted {
			t.Errorf("after reset: %+v", s)
		}
	}
	if res, err := c.Call(ctx, "a_echo", nil); err != nil || text(t, res) != "a_echo" {
		t.Errorf("call after reset: %v", err)
	}

	// Close stops the chat for good and frees its id.
	other.Close()
	if !processGone(oa) {
		t.Error("Close left the chat's process")
	}
	if _, ok := h.FindChat("other"); ok {
		t.Error("a closed chat is still found")
	}
	if _, err := other.Call(ctx, "a_echo", nil); !errors.Is(err, ErrChatClosed) {
		t.Errorf("call on a closed chat: %v", err)
	}
	again, err := h.Chat("other", filepath.Join(dir, "elsewhere"))
	if err != nil || again == other {
		t.Errorf("the id of a closed chat cannot be reused: %v", err)
	}
}

// Close stops every chat's processes; afterwards everything says so.
func TestHostClose(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	h := newTestHost(t, testPlan(testServer("s", "-tools", "echo,slow", "-spawn-child", "-child-pidfile", "child.pid", "-call-log", calls)),
		HostOptions{Env: testEnv(marker)})
	var pids []int
	for i := range 3 {
		c, _ := h.Chat(fmt.Sprint(i), filepath.Join(dir, fmt.Sprint(i)))
		if _, err := c.Call(context.Background(), "echo", nil); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, c.Status().Servers[0].Pid, readPid(t, filepath.Join(c.Workspace(), "child.pid")))
	}
	c, _ := h.FindChat("0")
	inflight := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "slow", map[string]any{"ms": 600000})
		inflight <- err
	}()
	eventually(t, "the slow call runs", func() bool { return slices.Contains(lines(t, calls), "slow") })
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("process %d outlived the host", pid)
		}
	}
	err := <-inflight
	var ce *CallError
	if !errors.Is(err, ErrHostClosed) && !(errors.As(err, &ce) && (ce.Kind == CallStopped || ce.Kind == CallCancelled)) {
		t.Errorf("in-flight call: %v", err)
	}
	if _, err := c.Call(context.Background(), "echo", nil); !errors.Is(err, ErrHostClosed) {
		t.Errorf("call after close: %v", err)
	}
	if _, err := h.Chat("new", dir); !errors.Is(err, ErrHostClosed) {
		t.Errorf("chat after close: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestNewHostRejects(t *testing.T) {
	t.Parallel()
	if _, err := NewHost(nil, HostOptions{}); err == nil {
		t.Error("nil plan accepted")
	}
	p := testPlan(testServer("a"))
	p.PlanVersion = 2
	if _, err := NewHost(p, HostOptions{}); err == nil || !strings.Contains(err.Error(), "planVersion 2") {
		t.Errorf("planVersion 2: %v", err)
	}
	if _, err := NewHost(testPlan(testServer("a"), testServer("a")), HostOptions{}); err == nil {
		t.Error("duplicate server accepted")
	}
	h, err := NewHost(testPlan(testServer("a")), HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Chat("x", "/tmp/one"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Chat("x", "/tmp/two"); err == nil {
		t.Error("one chat id with two workspaces accepted")
	}
	if _, err := h.Chat("", "/tmp"); err == nil {
		t.Error("empty chat id accepted")
	}
}

var _ = json.Marshal

// A listing waits for a server's first discovery until its tools are in
// the table: one that comes after the discovery recorded its tools, before
// it built the table, used to wait for nothing and list no tool (mcpc run
// starts the discoveries as a client connects).
func TestFirstListingWaitsForTheTable(t *testing.T) {
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("s", "-tools", "echo")), HostOptions{Env: testEnv(marker)})
	reached, release := make(chan struct{}), make(chan struct{})
	hookDiscovered = func() {
		hookDiscovered = nil // the one discovery of this test
		close(reached)
		<-release
	}
	t.Cleanup(func() { hookDiscovered = nil })
	h.StartDiscovery()
	testservers.Recv(t, "the discovery recording its tools", reached)
	wait := h.server("s").ensure()
	close(release)
	if wait == nil {
		t.Fatal("a listing between the discovery's tools and its table does not wait for it")
	}
	testservers.Recv(t, "the first discovery", wait)
	if n := len(h.currentTable().list); n != 1 {
		t.Errorf("%d tools in the table, want 1", n)
	}
}
