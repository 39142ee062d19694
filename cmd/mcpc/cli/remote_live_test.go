package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

// The chat's local tool notes__echo takes the name of the remote server
// notes's echo: the chat skips that remote tool.
func clashingPlan(t *testing.T) string {
	return compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "notes__"},
	})
}

const notesLiveTools = "  tools:     notes__drop, notes__fail, notes__slow, notes__whoami\n"

// mcpc remote list is the running chat's /mcp_list when a gateway serves
// the workspace: over HTTP (--url) it shows a connect still running as
// "connecting" and never a tool the chat skipped; without a gateway it
// probes, and says so.
func TestRemoteListShowsTheRunningChat(t *testing.T) {
	marker, bin := processTest(t)
	root := t.TempDir()
	wsA, wsB, wsC := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	for _, ws := range []string{wsA, wsB, wsC} {
		if err := os.Mkdir(ws, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: keyCanary})
	hung := remotetest.Start(t, remotetest.Options{Transport: "http"})
	if code, _, stderr := run(t, append([]string{"remote", "add", "notes", notes.URL, "--bearer", keyCanary}, remoteArgs(wsA, "a")...)...); code != ExitOK {
		t.Fatalf("remote add notes: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, append([]string{"remote", "add", "hung", hung.URL, "--no-key"}, remoteArgs(wsB, "b")...)...); code != ExitOK {
		t.Fatalf("remote add hung: exit %d\n%s", code, stderr)
	}
	// From now on the server takes every request and answers none: chat
	// b's connect runs until its 15 s are up.
	hung.Hang.Store(true)
	cmd, base, stderr := startRunHTTP(t, bin, "--plan", clashingPlan(t), "--workspace-root", root, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--env", "MCP_ENCRYPTION_SECRET="+remoteSecret,
		"--env", "GATEWAY_ADMIN=admin-token-of-the-live-list", "--admin-token-env", "GATEWAY_ADMIN")
	stop := cmd.stopOnCleanup(t)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := cmd.client(tr)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/chats/a/mcp", HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := strings.Join(toolNames(t, cs), " "); got != "notes__drop notes__echo notes__fail notes__slow notes__whoami" {
		t.Fatalf("chat a's tools: %s", got)
	}
	if got := callText(t, cs, "notes__echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("notes__echo is the local tool: %q", got)
	}
	// Chat b's first request starts its connects; initialize waits for them.
	connectB := make(chan error, 1)
	ctxB, cancelB := context.WithCancel(context.Background())
	go func() {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctxB,
			&mcp.StreamableClientTransport{Endpoint: base + "/chats/b/mcp", HTTPClient: client}, nil)
		if err == nil {
			cs.Close()
		}
		connectB <- err
	}()

	t.Setenv("MCPC_LIVE_TEST_TOKEN", "admin-token-of-the-live-list")
	live := []string{"--url", base, "--admin-token-env", "MCPC_LIVE_TEST_TOKEN"}
	code, out, errOut := run(t, append([]string{"remote", "list", "--workspace", wsA}, live...)...)
	if code != ExitOK || !strings.Contains(out, "notes  "+notes.URL+"  auto (http)  connected · 5 tools\n") ||
		!strings.Contains(out, notesLiveTools) || !strings.Contains(errOut, "live: chat a of "+base+", session scope \"a\"") {
		t.Errorf("live list of chat a: exit %d\n%s%s", code, out, errOut)
	}
	// Chat b appears with its first request, connecting.
	admin := &http.Client{Transport: bearer(tr, "admin-token-of-the-live-list")}
	for !hasChat(t, admin, base, "b") {
		time.Sleep(10 * time.Millisecond) // the poll's pace, not a budget
	}
	code, out, errOut = run(t, append([]string{"remote", "list", "--workspace", wsB}, live...)...)
	if code != ExitOK || !strings.Contains(out, "hung  "+hung.URL+"  auto  connecting\n") || strings.Contains(out, "tools:") {
		t.Errorf("live list of chat b: exit %d\n%s%s", code, out, errOut)
	}

	// Without the gateway's address: mcpc's own connections, which do not
	// know the chat's local tools.
	code, out, errOut = run(t, append([]string{"remote", "list"}, remoteArgs(wsA, "a")...)...)
	if code != ExitOK || !strings.Contains(out, "  tools:     notes__drop, notes__echo, notes__fail") || !strings.Contains(errOut, "probing: no mcpc run --stdio of yours serves this workspace") {
		t.Errorf("probe: exit %d\n%s%s", code, out, errOut)
	}
	// A workspace the gateway has no chat for is probed, and that is said.
	code, _, errOut = run(t, append(append([]string{"remote", "list"}, remoteArgs(wsC, "c")...), live...)...)
	if code != ExitOK || !strings.Contains(errOut, "probing: "+base+" serves no chat in this workspace (its chats: a, b") {
		t.Errorf("no such chat: exit %d\n%s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workspace", wsA, "--url", base}, "401 Unauthorized"},
		{[]string{"--workspace", wsA, "--url", base, "--socket", "/x"}, "give one of --url and --socket"},
		{[]string{"--workspace", wsA, "--admin-token-env", "MCPC_LIVE_TEST_TOKEN"}, "--admin-token-env goes with --url or --socket"},
	} {
		if code, _, errOut := run(t, append([]string{"remote", "list"}, c.args...)...); code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("remote list %v: exit %d %s, want %q", c.args, code, errOut, c.want)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("mcpc run: %v\n%s", err, stderr.String())
	}
	cancelB()
	<-connectB
}

// With mcpc run --stdio serving the workspace, mcpc remote list finds it by
// its status socket: no flag, no secret, no connection of its own.
func TestRemoteListFindsTheStdioChat(t *testing.T) {
	marker := leakMarker(t)
	useRuntimeDir(t)
	ws := t.TempDir()
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: keyCanary})
	if code, _, stderr := run(t, append([]string{"remote", "add", "notes", notes.URL, "--bearer", keyCanary}, remoteArgs(ws, "chat-7")...)...); code != ExitOK {
		t.Fatalf("remote add notes: exit %d\n%s", code, stderr)
	}
	cs, wait := runStdio(t, "--plan", clashingPlan(t), "--workspace", ws, "--scope", "chat-7", "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--env", "MCP_ENCRYPTION_SECRET="+remoteSecret)
	toolNames(t, cs)
	handshakes := notes.Initialized.Load()
	code, out, errOut := run(t, "remote", "list", "--workspace", ws, "--scope", "other")
	if code != ExitOK || !strings.Contains(out, notesLiveTools) || !strings.Contains(errOut, "live: chat stdio of the socket ") ||
		!strings.Contains(errOut, `warning: --scope "other" is not the chat's session scope "chat-7"`) {
		t.Errorf("live list: exit %d\n%s%s", code, out, errOut)
	}
	if n := notes.Initialized.Load(); n != handshakes {
		t.Errorf("the live list connected to the server (%d handshakes, want %d)", n, handshakes)
	}
	if code, stderr := wait(); code != ExitOK {
		t.Errorf("mcpc run: exit %d\n%s", code, stderr)
	}
	for _, s := range []string{out, errOut} {
		if strings.Contains(s, keyCanary) || strings.Contains(s, remoteSecret) {
			t.Errorf("leak:\n%s", s)
		}
	}
}

// hasChat reports whether the gateway at base serves the chat id.
func hasChat(t *testing.T, admin *http.Client, base, id string) bool {
	t.Helper()
	resp, err := admin.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st runtime.HostStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /status: %d %v", resp.StatusCode, err)
	}
	return findChat(st, id) != nil
}
