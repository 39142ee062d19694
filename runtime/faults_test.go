package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/clocktest"
)

// faultHost is a host with one test server that misbehaves at start when
// its chat's workspace holds a fault file (discovery, in a fresh temporary
// workspace, is unaffected). It returns the chat too.
func faultHost(t *testing.T, opts HostOptions, edit func(*plan.Server)) (*Host, *Chat) {
	t.Helper()
	dir := t.TempDir()
	s := testServer("faulty", "-tools", "echo,stderr-flood,garbage", "-fault-file", "fault",
		"-pidfile", "server.pid", "-spawn-child", "-child-pidfile", "child.pid")
	if edit != nil {
		edit(&s)
	}
	h := newTestHost(t, testPlan(s), opts)
	c, err := h.Chat("c", filepath.Join(dir, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(c.Workspace(), 0o700); err != nil {
		t.Fatal(err)
	}
	return h, c
}

func setFault(t *testing.T, c *Chat, fault string) {
	t.Helper()
	path := filepath.Join(c.Workspace(), "fault")
	if fault == "" {
		os.Remove(path)
		return
	}
	if err := os.WriteFile(path, []byte(fault), 0o644); err != nil {
		t.Fatal(err)
	}
}

// groupGone checks that the chat's server and its grandchild are gone.
func groupGone(t *testing.T, c *Chat) {
	t.Helper()
	for _, f := range []string{"server.pid", "child.pid"} {
		if pid := readPid(t, filepath.Join(c.Workspace(), f)); !processGone(pid) {
			t.Errorf("%s %d still runs", f, pid)
		}
	}
}

func TestFaultGarbageAtStart(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	_, c := faultHost(t, HostOptions{Env: testEnv(marker)}, nil)
	setFault(t, c, "garbage")
	_, err := c.Call(context.Background(), "echo", nil)
	ce := callErr(t, err, CallStartFailed)
	if !strings.HasPrefix(ce.Message, "MCP server faulty failed to start: protocol error: the server wrote something that is not JSON-RPC on stdout") {
		t.Errorf("message %q", ce.Message)
	}
	groupGone(t, c)
	if s := c.Status().Servers[0]; !strings.HasPrefix(s.State, "failed: protocol error") || s.LastError != ce.Message {
		t.Errorf("status %+v", s)
	}
	// Not retried by itself; the next call starts afresh.
	setFault(t, c, "")
	if res, err := c.Call(context.Background(), "echo", map[string]any{"text": "ok"}); err != nil || text(t, res) != "ok" {
		t.Errorf("next call: %v", err)
	}
	if s := c.Status().Servers[0]; s.State != StateRunning || s.LastError != "" {
		t.Errorf("status after recovery %+v", s)
	}
}

func TestFaultExitAtStart(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	_, c := faultHost(t, HostOptions{Env: testEnv(marker)}, nil)
	setFault(t, c, "exit:7")
	_, err := c.Call(context.Background(), "echo", nil)
	ce := callErr(t, err, CallStartFailed)
	if want := "MCP server faulty failed to start: exited (7): testserver: exiting at start with code 7"; ce.Message != want {
		t.Errorf("message %q\nwant    %q", ce.Message, want)
	}
	groupGone(t, c)
}

// A process that does not answer within startupTimeoutSeconds (on the
// host's clock) is killed, group and all, and the call fails.
func TestFaultHangPastStartupTimeout(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	clock := clocktest.New()
	_, c := faultHost(t, HostOptions{Env: testEnv(marker), Clock: clock}, func(s *plan.Server) { s.StartupTimeoutSeconds = 20 })
	setFault(t, c, "hang")
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "echo", nil)
		done <- err
	}()
	// The process runs (its pid and its child's are written) and the only
	// timer is its startup timeout.
	eventually(t, "the process hangs", func() bool {
		_, e1 := os.Stat(filepath.Join(c.Workspace(), "server.pid"))
		_, e2 := os.Stat(filepath.Join(c.Workspace(), "child.pid"))
		return e1 == nil && e2 == nil && clock.Pending() == 1
	})
	if s := c.Status().Servers[0]; s.State != "starting" {
		t.Errorf("status while starting: %+v", s)
	}
	clock.Advance(19 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("gave up before the startup timeout: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	clock.Advance(time.Second)
	ce := callErr(t, <-done, CallStartFailed)
	if want := "MCP server faulty failed to start: no answer within 20s"; ce.Message != want {
		t.Errorf("message %q\nwant    %q", ce.Message, want)
	}
	groupGone(t, c)
}

// A slow start within the startup timeout is fine.
func TestFaultSlowStart(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	_, c := faultHost(t, HostOptions{Env: testEnv(marker)}, nil)
	setFault(t, c, "delay:300ms")
	if res, err := c.Call(context.Background(), "echo", map[string]any{"text": "late"}); err != nil || text(t, res) != "late" {
		t.Fatalf("slow start: %v", err)
	}
}

// A flood of stderr neither blocks the server nor grows memory: the tail
// is bounded, and so is what status shows.
func TestFaultStderrFlood(t *testing.T) {
	marker := noLeaks(t)
	var logged atomic.Int64
	_, c := faultHost(t, HostOptions{Env: testEnv(marker), Log: func(e LogEntry) {
		if e.Level == "Warning" && strings.HasPrefix(e.Message, "flood line") {
			logged.Add(1)
		}
	}}, nil)
	res, err := c.Call(context.Background(), "stderr-flood", map[string]any{"n": 100000})
	if err != nil || text(t, res) != "printed 100000 lines" {
		t.Fatalf("flood: %v", err)
	}
	c.Reset() // drains stderr: every line has been read once the process is gone
	d, _ := c.Server("faulty")
	if len(d.StderrTail) != detailStderrLines || d.StderrTail[len(d.StderrTail)-1] != "flood line 100000" {
		t.Errorf("stderr tail %d lines, last %q", len(d.StderrTail), d.StderrTail[len(d.StderrTail)-1])
	}
	if n := logged.Load(); n != 100000 {
		t.Errorf("%d stderr lines logged at stderrLevel Warning, want 100000", n)
	}
}

// stderrLevel None logs nothing of a server's stderr.
func TestStderrLevelNone(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	var logged atomic.Int64
	_, c := faultHost(t, HostOptions{Env: testEnv(marker), Log: func(e LogEntry) {
		if strings.HasPrefix(e.Message, "flood line") {
			logged.Add(1)
		}
	}}, func(s *plan.Server) { s.StderrLevel = "None" })
	if _, err := c.Call(context.Background(), "stderr-flood", map[string]any{"n": 10}); err != nil {
		t.Fatal(err)
	}
	c.Reset()
	if n := logged.Load(); n != 0 {
		t.Errorf("%d lines logged with stderrLevel None", n)
	}
}

// Garbage on stdout in the middle of a session breaks the connection: the
// call fails, the group is killed, the next call starts a new process.
func TestFaultGarbageDuringCall(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	_, c := faultHost(t, HostOptions{Env: testEnv(marker)}, nil)
	if _, err := c.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	pid := c.Status().Servers[0].Pid
	_, err := c.Call(context.Background(), "garbage", nil)
	ce := callErr(t, err, CallExited)
	if !strings.HasPrefix(ce.Message, "MCP server faulty broke the protocol: it wrote something that is not JSON-RPC on stdout") ||
		!strings.HasSuffix(ce.Message, ". It restarts on the next call; its state was lost.") {
		t.Errorf("message %q", ce.Message)
	}
	groupGone(t, c)
	if s := c.Status().Servers[0]; s.State != StateExited {
		t.Errorf("status %+v", s)
	}
	if _, err := c.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	if s := c.Status().Servers[0]; s.Pid == pid || s.State != StateRunning {
		t.Errorf("after garbage: %+v", s)
	}
}

// A server that dies while no call runs shows as exited, with SPEC §4's
// message as its last error; its group is killed; the next call starts a
// new process.
func TestFaultDeathWhileIdle(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	_, c := faultHost(t, HostOptions{Env: testEnv(marker)}, nil)
	setFault(t, c, "exit-on-usr1")
	if _, err := c.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	pid := c.Status().Servers[0].Pid
	setFault(t, c, "")
	// The server dies when told, after the call: never during it.
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the death is seen", func() bool { return c.Status().Servers[0].State == StateExited })
	want := "MCP server faulty exited (4): testserver: exiting on SIGUSR1 with code 4. It restarts on the next call; its state was lost."
	if s := c.Status().Servers[0]; s.LastError != want {
		t.Errorf("last error %q\nwant       %q", s.LastError, want)
	}
	groupGone(t, c)
	if res, err := c.Call(context.Background(), "echo", map[string]any{"text": "new"}); err != nil || text(t, res) != "new" {
		t.Fatalf("next call: %v", err)
	}
	if s := c.Status().Servers[0]; s.State != StateRunning || s.Pid == pid {
		t.Errorf("after the death: %+v", s)
	}
}
