package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// mcpc run --stdio --start-early starts the chat's process when its client
// initializes: it runs before any call (its pid file is in the chat's
// workspace, where a discovery's process does not run), and the first call
// uses it: the same pid. It is the server's discovery too (mcpc run starts
// no discovery of its own with --start-early): one start in all.
func TestRunStdioStartEarly(t *testing.T) {
	marker := leakMarker(t)
	starts := filepath.Join(t.TempDir(), "starts")
	plan := compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", "echo", "-pidfile", "srv.pid", "-start-log", starts}},
	})
	ws := filepath.Join(t.TempDir(), "chat")
	cs, wait := runStdio(t, "--plan", plan, "--workspace", ws, "--start-early",
		"--clean-env", "--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	pidFile := filepath.Join(ws, "srv.pid")
	testservers.WaitUntil(t, "the chat's process runs before any call (its pid file)", func() bool {
		_, err := os.Stat(pidFile)
		return err == nil
	})
	pid := readPid(t, pidFile)
	if !alive(pid) {
		t.Fatalf("the process started at initialize (%d) does not run", pid)
	}
	if got := callText(t, cs, "echo", map[string]any{"text": "early"}); got != "early" {
		t.Errorf("echo: %q", got)
	}
	if got := readPid(t, pidFile); got != pid || !alive(pid) {
		t.Errorf("the call ran on process %d, not on %d started at initialize", got, pid)
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(b))); n != 1 {
		t.Errorf("%d starts, want 1 (the chat's, which was the discovery)", n)
	}
	if code, stderr := wait(); code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if alive(pid) {
		t.Errorf("process %d outlived mcpc run", pid)
	}
}

// --start-early is refused, before anything starts, with a craftbot plan:
// its servers are shared by every client, with no chat process to start.
func TestRunStartEarlyRefusedForCraftbot(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	b, _ := json.Marshal(map[string]any{"auto_connect": false, "mcp_servers": []map[string]any{
		{"name": "fs", "transport": "stdio", "command": testServer, "args": []string{"-start-log", starts}, "enabled": true},
	}})
	cfg := write(t, dir, "mcp_config.json", string(b))
	planFile := filepath.Join(dir, "plan.json")
	if code, _, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env", "--config", cfg, "-o", planFile); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "run", "--plan", planFile, "--stdio", "--workspace", filepath.Join(dir, "ws"), "--start-early")
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "--start-early goes with a volcanic plan") ||
		!strings.Contains(stderr, "craftbot plan") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(starts); err == nil {
		t.Error("a server started")
	}
}
