package gateway

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/runtime"
)

// waitResult waits for a call's outcome. The limit only fails a test whose
// call never ends; a passing test returns as soon as the call does.
func waitResult(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the call never ended", what)
		return nil
	}
}

// A server that dies while a descendant still holds its stdout is seen as
// dead: the call gets SPEC §4's death message (it used to wait for
// callTimeoutSeconds, and status showed the dead pid as running), the
// descendant in its group is killed, and the next call starts a new
// process.
func TestDeathSeenWhileStdoutHeldOpen(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	s := testServer("held", "-tools", "echo,crash", "-pidfile", "server.pid",
		"-spawn-child", "-child-stdout", "-child-pidfile", "child.pid")
	clock := clocktest.New() // never advanced: no timeout can end the call
	logs := &logRecorder{}
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker), Clock: clock, Log: logs.log})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	if res, err := c.Call(context.Background(), "echo", map[string]any{"text": "up"}); err != nil || text(t, res) != "up" {
		t.Fatalf("first call: %v", err)
	}
	server := readPid(t, filepath.Join(c.Workspace(), "server.pid"))
	child := readPid(t, filepath.Join(c.Workspace(), "child.pid"))

	done := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "crash", map[string]any{"code": 3})
		done <- err
	}()
	ce := callErr(t, waitResult(t, done, "crash"), runtime.CallExited)
	want := "MCP server held exited (3): testserver: crashing with code 3. It restarts on the next call; its state was lost."
	if ce.Message != want {
		t.Errorf("message %q\nwant    %q", ce.Message, want)
	}
	if st := c.Status().Servers[0]; st.State != runtime.StateExited || st.Pid != 0 || st.LastError != want {
		t.Errorf("status after the death: %+v", st)
	}
	if !processGone(server) || !processGone(child) {
		t.Errorf("server %d gone %v, its child %d (holding stdout) gone %v", server, processGone(server), child, processGone(child))
	}
	if !strings.Contains(logs.text(), want) {
		t.Errorf("the death is not logged:\n%s", logs.text())
	}
	if res, err := c.Call(context.Background(), "echo", map[string]any{"text": "again"}); err != nil || text(t, res) != "again" {
		t.Errorf("the next call: %v", err)
	}
	if pid := readPid(t, filepath.Join(c.Workspace(), "server.pid")); pid == server {
		t.Error("the next call did not start a new process")
	}
}

// The same during discovery: a server that exits at start while its child
// holds stdout fails with its exit code, instead of waiting out
// startupTimeoutSeconds.
func TestDiscoveryDeathSeenWhileStdoutHeldOpen(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	s := testServer("held", "-exit-at-start", "5", "-spawn-child", "-child-stdout", "-child-pidfile", filepath.Join(dir, "child.pid"))
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker), Clock: clocktest.New()})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	done := make(chan error, 1)
	go func() {
		_, err := c.Tools(context.Background())
		done <- err
	}()
	if err := waitResult(t, done, "the first listing"); err != nil {
		t.Fatal(err)
	}
	if d := h.Status().Servers[0]; !strings.HasPrefix(d.State, "failed: exited (5)") {
		t.Errorf("discovery %+v", d)
	}
	if pid := readPid(t, filepath.Join(dir, "child.pid")); !processGone(pid) {
		t.Errorf("the child %d that held stdout still runs", pid)
	}
}

// Host.Close cancels the calls in flight, and their servers hear it
// (notifications/cancelled) before they are stopped; it used to stop them
// under the call, without a word.
func TestHostCloseCancelsCalls(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	methods, calls := filepath.Join(dir, "methods"), filepath.Join(dir, "calls")
	s := testServer("srv", "-tools", "slow", "-method-log", methods, "-call-log", calls, "-pidfile", "server.pid")
	s.CallTimeoutSeconds = 3600
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker), Clock: clocktest.New()})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "slow", map[string]any{"ms": 600000})
		done <- err
	}()
	eventually(t, "the server runs the call", func() bool { return len(lines(t, calls)) == 1 })
	closed := make(chan struct{})
	go func() {
		h.Close()
		close(closed)
	}()
	ce := callErr(t, waitResult(t, done, "slow"), runtime.CallCancelled)
	if want := "the call to tool slow of MCP server srv was cancelled because the MCP host is shutting down; the server was told so (notifications/cancelled)"; ce.Message != want {
		t.Errorf("message %q\nwant    %q", ce.Message, want)
	}
	<-closed
	if got := lines(t, methods); !slices.Contains(got, "notifications/cancelled") {
		t.Errorf("the server received %v, no notifications/cancelled", got)
	}
	if pid := readPid(t, filepath.Join(c.Workspace(), "server.pid")); !processGone(pid) {
		t.Errorf("server %d outlived the host", pid)
	}
	if _, err := os.Stat(methods); err != nil {
		t.Fatal(err)
	}
}

// A chat created over HTTP has its workspace before its remote servers
// read servers.json: status and the log do not claim that the workspace
// is missing. They used to, for every new chat.
func TestGatewayNewChatHasNoFileProblem(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	logs := &logRecorder{}
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker), Remote: &runtime.RemoteOptions{}, Log: logs.log})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: filepath.Join(t.TempDir(), "chats")})
	base, client := httpGateway(t, gw)
	listNames(t, connectHTTP(t, client, base+"/chats/fresh/mcp"))
	st := h.Status()
	if len(st.Chats) != 1 || st.Chats[0].Remote == nil || st.Chats[0].Remote.FileProblem != "" {
		t.Errorf("status %+v", st.Chats)
	}
	if strings.Contains(logs.text(), "is not used") {
		t.Errorf("log:\n%s", logs.text())
	}
}

// A chat whose workspace appears after the chat was created (Host.Chat
// does not create it) no longer shows the missing workspace once it
// exists.
func TestRemoteFileProblemClearsOnceWorkspaceExists(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker), Remote: &runtime.RemoteOptions{}})
	ws := filepath.Join(t.TempDir(), "later")
	c, err := h.Chat("c", ws)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Status().Remote.FileProblem; !strings.Contains(p, "no such file") {
		t.Errorf("before the workspace exists: %q", p)
	}
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := c.Status().Remote.FileProblem; p != "" {
		t.Errorf("after: %q", p)
	}
}

// MaxProcesses: a call whose server would be one process too many fails at
// once with a message that names the limit (logged once), and works once
// another process stopped.
func TestMaxProcesses(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	logs := &logRecorder{}
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker), MaxProcesses: 2, Log: logs.log})
	var chats []*runtime.Chat
	for i := range 3 {
		c, _ := h.Chat(fmt.Sprint(i), filepath.Join(dir, fmt.Sprint(i)))
		chats = append(chats, c)
	}
	for _, c := range chats[:2] {
		if _, err := c.Call(context.Background(), "echo", nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		_, err := chats[2].Call(context.Background(), "echo", nil)
		ce := callErr(t, err, runtime.CallLimit)
		if want := "MCP server srv was not started: the host already runs its maximum of 2 server processes (mcpc run --max-processes); it starts on a later call, once other processes stopped"; ce.Message != want {
			t.Errorf("message %q\nwant    %q", ce.Message, want)
		}
	}
	if n := strings.Count(logs.text(), "maximum of 2 server processes"); n != 1 {
		t.Errorf("logged %d times:\n%s", n, logs.text())
	}
	if got := h.Processes(); got != 2 {
		t.Errorf("Processes() = %d", got)
	}
	chats[0].Reset()
	if res, err := chats[2].Call(context.Background(), "echo", map[string]any{"text": "in"}); err != nil || text(t, res) != "in" {
		t.Errorf("after a reset made room: %v", err)
	}
	// A process that dies gives its place back too.
	if got := h.Processes(); got != 2 {
		t.Errorf("Processes() = %d", got)
	}
}
