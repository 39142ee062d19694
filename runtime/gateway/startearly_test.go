package gateway

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// earlyRig is a host with two enabled test servers (a, and b with the
// prefix b_) and a disabled one, each logging its starts, served by a
// gateway over one transport.
type earlyRig struct {
	h                  *runtime.Host
	gw                 *Gateway
	logA, logB, logOff string
	connect            func() *mcp.ClientSession // a new session on chat "c"
	chat               func() *runtime.Chat      // chat "c", once a session made it
}

func newEarlyRig(t *testing.T, transport string, opts GatewayOptions) *earlyRig {
	t.Helper()
	marker := noLeaks(t)
	dir := t.TempDir()
	r := &earlyRig{logA: filepath.Join(dir, "a.starts"), logB: filepath.Join(dir, "b.starts"), logOff: filepath.Join(dir, "off.starts")}
	a := testServer("a", "-tools", "echo", "-pidfile", "a.pid", "-start-log", r.logA)
	b := testServer("b", "-tools", "echo", "-pidfile", "b.pid", "-start-log", r.logB)
	b.ToolPrefix = "b_"
	off := testServer("off", "-tools", "echo", "-start-log", r.logOff)
	off.ToolPrefix, off.Enabled = "off_", false
	r.h = newTestHost(t, testPlan(a, b, off), runtime.HostOptions{Env: testEnv(marker)})
	root := filepath.Join(dir, "chats")
	opts.Version, opts.WorkspaceRoot = "test", root
	r.gw = NewGateway(r.h, opts)
	t.Cleanup(r.gw.Close)
	if !opts.StartEarly {
		r.h.StartDiscovery() // as mcpc run does when it starts without --start-early
	}
	switch transport {
	case "stdio":
		chat, err := r.h.Chat("c", filepath.Join(root, "c"))
		if err != nil {
			t.Fatal(err)
		}
		r.connect = func() *mcp.ClientSession { return connectInMemory(t, r.gw, chat, nil) }
		r.chat = func() *runtime.Chat { return chat }
	case "http":
		base, client := httpGateway(t, r.gw)
		r.connect = func() *mcp.ClientSession { return connectHTTP(t, client, base+"/chats/c/mcp") }
		r.chat = func() *runtime.Chat {
			chat, err := r.h.Chat("c", filepath.Join(root, "c"))
			if err != nil {
				t.Fatal(err)
			}
			return chat
		}
	default:
		t.Fatalf("transport %q", transport)
	}
	return r
}

// states are the chat's states of its servers a, b and off.
func states(c *runtime.Chat) []string {
	var out []string
	for _, s := range c.Status().Servers {
		out = append(out, s.State)
	}
	return out
}

// callEcho calls tool (an echo) through cs and checks the answer.
func callEcho(t *testing.T, cs *mcp.ClientSession, tool string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || resultText(res) != "hi" {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
}

// With GatewayOptions.StartEarly a client's initialize starts the chat's
// process of every enabled server (not of a disabled one): when initialize
// has answered, and before any call, each is starting or running. Those of
// the host's first chat are the servers' first discoveries too, so no
// process of a discovery starts beside them: one start of each server in
// all. The first call to a server then uses that process: the same pid. A
// second session with the same capabilities keeps them too, so the
// processes started early declared the capabilities of the client whose
// initialize started them (else the gateway would restart them for the new
// client).
func TestStartEarlyAtInitialize(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			r := newEarlyRig(t, transport, GatewayOptions{StartEarly: true})
			cs := r.connect()
			chat := r.chat()
			st := states(chat)
			for i, name := range []string{"a", "b"} {
				if st[i] != "starting" && st[i] != runtime.StateRunning {
					t.Fatalf("after initialize, before any call: %s is %q, want starting or running (states %q)", name, st[i], st)
				}
			}
			if st[2] != runtime.StateDisabled {
				t.Errorf("the disabled server is %q", st[2])
			}
			testservers.WaitUntil(t, "both processes started at initialize run", func() bool {
				st := states(chat)
				return st[0] == runtime.StateRunning && st[1] == runtime.StateRunning
			})
			ws := chat.Workspace()
			pidA, pidB := readPid(t, filepath.Join(ws, "a.pid")), readPid(t, filepath.Join(ws, "b.pid"))
			if s := chat.Status().Servers; s[0].Pid != pidA || s[1].Pid != pidB {
				t.Fatalf("status pids %d %d, pid files %d %d", s[0].Pid, s[1].Pid, pidA, pidB)
			}
			callEcho(t, cs, "echo")
			callEcho(t, cs, "b_echo")
			r.connect() // a second session, with the same capabilities
			callEcho(t, cs, "echo")
			if s := chat.Status().Servers; s[0].Pid != pidA || s[1].Pid != pidB {
				t.Errorf("the calls ran on pids %d %d, not on the processes started at initialize (%d %d)", s[0].Pid, s[1].Pid, pidA, pidB)
			}
			if got := readPid(t, filepath.Join(ws, "a.pid")); got != pidA {
				t.Errorf("a second process of a started: %d", got)
			}
			for _, l := range []string{r.logA, r.logB} {
				if n := len(lines(t, l)); n != 1 {
					t.Errorf("%s: %d starts, want 1 (the chat's, which was the discovery)", filepath.Base(l), n)
				}
			}
			for _, d := range r.h.Status().Servers {
				if d.Name != "off" && (d.State != "ok" || d.Discoveries != 1 || d.Tools != 1) {
					t.Errorf("discovery of %s: %+v, want ok, 1 discovery, 1 tool", d.Name, d)
				}
			}
			if _, err := os.Stat(r.logOff); err == nil {
				t.Error("the disabled server was started")
			}
		})
	}
}

// Without StartEarly (the default, as the host runs) initialize starts no
// chat process, nor does a listing: a chat's process starts at its first
// call to the server, and only that server's.
func TestNoStartAtInitializeByDefault(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			r := newEarlyRig(t, transport, GatewayOptions{})
			cs := r.connect()
			chat := r.chat()
			want := []string{runtime.StateNotStarted, runtime.StateNotStarted, runtime.StateDisabled}
			if st := states(chat); !slices.Equal(st, want) {
				t.Fatalf("after initialize: %q, want %q", st, want)
			}
			listNames(t, cs)
			if st := states(chat); !slices.Equal(st, want) {
				t.Fatalf("after tools/list: %q, want %q", st, want)
			}
			// initialize and the listing waited for the discoveries: one
			// start each, and none of the chat's.
			if na, nb := len(lines(t, r.logA)), len(lines(t, r.logB)); na != 1 || nb != 1 {
				t.Errorf("starts before any call: a %d, b %d, want 1 each (the discoveries)", na, nb)
			}
			callEcho(t, cs, "echo")
			if st := states(chat); st[0] != runtime.StateRunning || st[1] != runtime.StateNotStarted {
				t.Errorf("after a call to a: %q", st)
			}
			if na, nb := len(lines(t, r.logA)), len(lines(t, r.logB)); na != 2 || nb != 1 {
				t.Errorf("starts after a call to a: a %d, b %d, want 2 and 1", na, nb)
			}
		})
	}
}

// A process started early that gets no call stops after its
// idleTimeoutSeconds, counted from when it runs, as any idle process of
// the chat; the next call starts a new one.
func TestStartEarlyIdleStop(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	startLog := filepath.Join(dir, "starts")
	s := testServer("srv", "-tools", "echo", "-pidfile", "pid", "-start-log", startLog,
		"-spawn-child", "-child-pidfile", "child.pid")
	s.IdleTimeoutSeconds = 30
	clock := clocktest.New()
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker), Clock: clock})
	gw := NewGateway(h, GatewayOptions{Version: "test", StartEarly: true})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	cs := connectInMemory(t, gw, chat, nil)
	testservers.WaitUntil(t, "the process started at initialize runs", func() bool {
		return chat.Status().Servers[0].State == runtime.StateRunning
	})
	pid := chat.Status().Servers[0].Pid
	child := readPid(t, filepath.Join(chat.Workspace(), "child.pid"))
	clock.Advance(29 * time.Second)
	if st := chat.Status().Servers[0]; st.State != runtime.StateRunning || st.Pid != pid {
		t.Fatalf("stopped before its idle timeout: %+v", st)
	}
	clock.Advance(time.Second) // the idle stop runs within Advance
	if st := chat.Status().Servers[0]; st.State != runtime.StateNotStarted || st.Pid != 0 {
		t.Errorf("after 30 s without a call: %+v", st)
	}
	if !processGone(pid) || !processGone(child) {
		t.Errorf("the idle stop left process %d or its child %d", pid, child)
	}
	callEcho(t, cs, "echo")
	if st := chat.Status().Servers[0]; st.State != runtime.StateRunning || st.Pid == pid {
		t.Errorf("after a call: %+v", st)
	}
	if n := len(lines(t, startLog)); n != 2 {
		t.Errorf("%d starts, want 2 (the early start, which was the discovery, and the call's)", n)
	}
}

// A process started early that fails to start leaves the server failed in
// the chat's status, with the reason, as a failed start at a call does;
// the next call starts it again.
func TestStartEarlyFailure(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	startLog := filepath.Join(dir, "starts")
	// The fault is in the chat's workspace only: the discovery works.
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	fault := filepath.Join(ws, "fault")
	if err := os.WriteFile(fault, []byte("exit:3"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo", "-fault-file", "fault", "-start-log", startLog)),
		runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "test", StartEarly: true})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", ws)
	cs := connectInMemory(t, gw, chat, nil)
	testservers.WaitUntil(t, "the start at initialize fails", func() bool {
		return strings.HasPrefix(chat.Status().Servers[0].State, "failed: ")
	})
	if st := chat.Status().Servers[0]; !strings.Contains(st.State, "exiting at start with code 3") ||
		!strings.HasPrefix(st.LastError, "MCP server srv failed to start: ") {
		t.Errorf("status %+v", st)
	}
	if err := os.Remove(fault); err != nil {
		t.Fatal(err)
	}
	callEcho(t, cs, "echo")
	if n := len(lines(t, startLog)); n != 3 {
		t.Errorf("%d starts, want 3 (the failed early start, the discovery that replaced it, the call's)", n)
	}
	if d := h.Status().Servers[0]; d.State != "ok" || d.Discoveries != 1 {
		t.Errorf("discovery %+v, want ok after 1 discovery of its own", d)
	}
	if st := chat.Status().Servers[0]; st.State != runtime.StateRunning || st.LastError != "" {
		t.Errorf("after the call: %+v", st)
	}
}

// Early starts take their places under the host's process limit as a
// call's start does: at the limit a server is not started, the limit's
// message is its last error, and a call starts it once a place is free.
func TestStartEarlyWithinProcessLimit(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	a := testServer("a", "-tools", "echo")
	b := testServer("b", "-tools", "echo")
	b.ToolPrefix = "b_"
	h := newTestHost(t, testPlan(a, b), runtime.HostOptions{Env: testEnv(marker), MaxProcesses: 1})
	gw := NewGateway(h, GatewayOptions{Version: "test", StartEarly: true})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	cs := connectInMemory(t, gw, chat, nil)
	st := chat.Status().Servers
	if st[0].State != "starting" && st[0].State != runtime.StateRunning {
		t.Fatalf("a (first in the plan) is %q, want starting or running", st[0].State)
	}
	if st[1].State != runtime.StateNotStarted || !strings.Contains(st[1].LastError, "maximum of 1 server processes") {
		t.Fatalf("b at the limit: %+v", st[1])
	}
	if n := h.Processes(); n != 1 {
		t.Errorf("%d processes, want 1 (the limit)", n)
	}
	if err := chat.Restart("a"); err != nil { // gives its place back
		t.Fatal(err)
	}
	callEcho(t, cs, "b_echo")
	if st := chat.Status().Servers; st[0].State != runtime.StateNotStarted || st[1].State != runtime.StateRunning || st[1].LastError != "" {
		t.Errorf("after a call to b: %+v", st)
	}
}

// Only the first chat's early starts are discoveries: a later chat's
// initialize starts its own processes, and no discovery runs again.
func TestStartEarlyLaterChatsDoNotDiscover(t *testing.T) {
	t.Parallel()
	r := newEarlyRig(t, "stdio", GatewayOptions{StartEarly: true})
	cs := r.connect()
	callEcho(t, cs, "echo")
	d, err := r.h.Chat("d", filepath.Join(t.TempDir(), "d"))
	if err != nil {
		t.Fatal(err)
	}
	cs2 := connectInMemory(t, r.gw, d, nil)
	callEcho(t, cs2, "b_echo")
	testservers.WaitUntil(t, "chat d's process of a, started at its initialize, runs", func() bool {
		return d.Status().Servers[0].State == runtime.StateRunning
	})
	for _, l := range []string{r.logA, r.logB} {
		if n := len(lines(t, l)); n != 2 {
			t.Errorf("%s: %d starts, want 2 (one per chat)", filepath.Base(l), n)
		}
	}
	for _, st := range r.h.Status().Servers[:2] {
		if st.Discoveries != 1 {
			t.Errorf("%s: %d discoveries, want 1", st.Name, st.Discoveries)
		}
	}
}
