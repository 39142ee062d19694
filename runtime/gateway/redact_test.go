package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
	"github.com/mcpc-dev/mcpc/runtime/supervisor"
)

// longSecret is longer than any cut mcpc makes in a message or a line.
var longSecret = "CANARY-self-" + strings.Repeat("k3Wv", 110)

// Texts that mcpc cuts short are redacted before they are cut: a stderr
// line longer than supervisor.StderrLineMax with a secret across the place where it is
// split. A message that is not JSON-RPC, its version tag a secret longer
// than the 300 bytes kept of an error (at start and during a call), shows
// no part of it.
func TestRedactBeforeCutting(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	var log logRecorder
	h := newTestHost(t, testPlan(selfServer("self", map[string]string{"LONG_STDERR": "1"})),
		runtime.HostOptions{Env: testEnv(marker, "SELF_TOKEN="+longSecret), Log: log.log})
	ctx := context.Background()
	check := func(what, msg string) {
		t.Helper()
		if testservers.LeaksPart(msg, longSecret) || !strings.Contains(msg, "[REDACTED]") {
			t.Errorf("%s: %q", what, msg)
		}
	}
	// The protocol errors name the bad version tag by its length: mcpc's
	// decoder quotes no value that could be a secret (see wireError).
	tag := fmt.Sprintf("invalid message version tag (%d bytes)", len(longSecret))
	noPart := func(what, msg string) {
		t.Helper()
		if testservers.LeaksPart(msg, longSecret) || !strings.Contains(msg, tag) {
			t.Errorf("%s: %q", what, msg)
		}
	}

	bad, _ := h.Chat("bad", filepath.Join(dir, "bad"))
	os.MkdirAll(bad.Workspace(), 0o700)
	if err := os.WriteFile(filepath.Join(bad.Workspace(), "bad-start"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := bad.Call(ctx, "echo", nil)
	ce := callErr(t, err, runtime.CallStartFailed)
	noPart("start failure", ce.Message)

	c, _ := h.Chat("c", filepath.Join(dir, "c"))
	_, err = c.Call(ctx, "bad-stdout", nil)
	ce = callErr(t, err, runtime.CallExited)
	if !strings.HasPrefix(ce.Message, "MCP server self broke the protocol: it wrote something that is not JSON-RPC on stdout (invalid message version tag") {
		t.Errorf("death: %q", ce.Message)
	}
	noPart("death", ce.Message)
	noPart("status", jsonText(h.Status()))

	// The stderr line: logged in pieces, each redacted as the whole line
	// is; the last piece once the process is gone.
	c.Reset()
	bad.Reset()
	var pieces []string
	log.mu.Lock()
	for _, e := range log.entries {
		if e.Stderr && e.Chat == "c" {
			pieces = append(pieces, e.Message)
		}
	}
	log.mu.Unlock()
	check("stderr log", log.text())
	want := strings.Repeat("a", supervisor.StderrLineMax-96) + "[REDACTED]" + strings.Repeat("b", 1000)
	if got := strings.Join(pieces, ""); got != want || len(pieces) != 2 {
		t.Errorf("%d stderr pieces %q", len(pieces), pieces)
	}
}

// Tool definitions are redacted in every string, schemas included: a
// server can put a secret it was given in a default.
func TestToolSchemasRedacted(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(selfServer("self", nil)), runtime.HostOptions{Env: testEnv(marker, "SELF_TOKEN="+canaryToken)})
	c, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
	tools, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var def string
	for _, tool := range tools {
		if tool.Name == "schema" {
			def = jsonText(tool.Def)
		}
	}
	if def == "" || strings.Contains(jsonText(tools), canaryToken) ||
		!strings.Contains(def, `"default":"[REDACTED]"`) || !strings.Contains(def, `"description":"like [REDACTED]"`) {
		t.Errorf("definition %s", def)
	}
}

// A chat's server details are redacted string by string with the chat's
// secrets: redacting their JSON text could break it (a secret may match
// across a string's end), and the details were then shown unredacted.
func TestServerDetailRedactedPerString(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	const key = `K9wq",` // matches across the end of a string in JSON text
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, "c", remote.Server{Name: "r", URL: srv.URL}, remote.Headers{"X-Key": key})
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo", "-stderr", "K9wq", "-stderr", "key "+key)), runtime.HostOptions{
		Env:    testEnv(marker, "MCP_ENCRYPTION_SECRET="+remoteSecret),
		Remote: &runtime.RemoteOptions{Dial: patientDial},
	})
	c, _ := h.Chat("c", ws)
	ctx := context.Background()
	if _, err := c.Tools(ctx); err != nil { // opens the remote entry
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	var d runtime.ServerDetail
	eventually(t, "both stderr lines are read", func() bool {
		d, _ = c.Server("srv")
		return len(d.StderrTail) == 2
	})
	if strings.Join(d.StderrTail, "|") != "K9wq|key [REDACTED]" || strings.Contains(d.CommandLine, key) {
		t.Errorf("details %s", jsonText(d))
	}
}

// /status is redacted string by string: it stays valid JSON whatever the
// secrets hold (redacting the encoded text broke it for a secret that
// matches across a string's end).
func TestGatewayStatusRedactedPerString(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	const secret = `running",`
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker), Secrets: []string{secret}})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir()})
	base, client := httpGateway(t, gw)
	c, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
	if _, err := c.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	code, body := do(t, client, "GET", base+"/status", "")
	var st runtime.HostStatus
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("%d %v\n%s", code, err, body)
	}
	if len(st.Chats) != 1 || st.Chats[0].Servers[0].State != runtime.StateRunning || !strings.Contains(body, "\n  \"servers\": [") {
		t.Errorf("status %s", body)
	}
}

// A process started by a call that was cancelled while it started is
// stopped after idleTimeoutSeconds like any other, and the call's error
// does not claim that the server was told: it never saw the call.
func TestIdleStopAfterCancelledStart(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	s := testServer("slow", "-tools", "echo", "-start-delay", "300ms", "-spawn-child", "-child-pidfile", "child.pid")
	s.IdleTimeoutSeconds = 1
	clock := clocktest.New()
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker), Clock: clock})
	c, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
	if _, err := c.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Call(ctx, "echo", nil)
	ce := callErr(t, err, runtime.CallCancelled)
	if want := "the call to tool echo of MCP server slow was cancelled while the server was starting; it was never sent to the server"; ce.Message != want {
		t.Errorf("message %q", ce.Message)
	}
	eventually(t, "the start ends", func() bool { return c.Status().Servers[0].State == runtime.StateRunning })
	pid := c.Status().Servers[0].Pid
	child := readPid(t, filepath.Join(c.Workspace(), "child.pid"))
	clock.Advance(999 * time.Millisecond)
	if st := c.Status().Servers[0]; st.State != runtime.StateRunning {
		t.Fatalf("stopped early: %+v", st)
	}
	clock.Advance(time.Millisecond)
	if st := c.Status().Servers[0]; st.State != runtime.StateNotStarted || !processGone(pid) || !processGone(child) {
		t.Errorf("after 1 s idle: %+v (pid %d gone %v, child %d gone %v)", st, pid, processGone(pid), child, processGone(child))
	}
	// The next call starts a new process.
	if _, err := c.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
}

// A call cancelled while it waits for an earlier call to the same server
// was never sent: its error says so, and does not claim the server was
// told (notifications/cancelled).
func TestCancelWhileQueued(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	h := newTestHost(t, testPlan(testServer("s", "-tools", "slow", "-call-log", calls)), runtime.HostOptions{Env: testEnv(marker)})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	first, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(first, "slow", map[string]any{"ms": 600000})
		done <- err
	}()
	eventually(t, "the first call is sent", func() bool { return len(lines(t, calls)) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Call(ctx, "slow", map[string]any{"ms": 1})
	ce := callErr(t, err, runtime.CallCancelled)
	if want := "the call to tool slow of MCP server s was cancelled while it waited for an earlier call to the server to end; it was never sent to the server"; ce.Message != want {
		t.Errorf("message %q", ce.Message)
	}
	stop()
	callErr(t, <-done, runtime.CallCancelled)
	if n := len(lines(t, calls)); n != 1 {
		t.Errorf("%d calls reached the server", n)
	}
}
