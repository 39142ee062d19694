package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpc status reads mcpc run --http's admin endpoints with the admin
// token: every chat's servers, and one server's details, redacted.
func TestStatusOverHTTP(t *testing.T) {
	marker, bin := processTest(t)
	root := t.TempDir()
	plan := compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", "echo,env", "-stderr", "key " + runCanary},
			"Env": map[string]any{"TOKEN": "${env:GITHUB_TOKEN}"}},
	})
	cmd, base, stderr := startRunHTTP(t, bin, "--plan", plan, "--workspace-root", root, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--env", "GITHUB_TOKEN="+runCanary,
		"--env", "GATEWAY_ADMIN=admin-token-for-the-status-test", "--admin-token-env", "GATEWAY_ADMIN")
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("mcpc run: %v\n%s", err, stderr.String())
		}
	})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/chats/a/mcp", HTTPClient: cmd.client(tr)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo %q", got)
	}

	t.Setenv("MCPC_STATUS_TEST_TOKEN", "admin-token-for-the-status-test")
	code, out, errOut := run(t, "status", "--url", base, "--admin-token-env", "MCPC_STATUS_TEST_TOKEN")
	if code != ExitOK || !strings.Contains(out, "chat a (") || !strings.Contains(out, "  srv: running · 2 tools") || !strings.Contains(out, "  srv: ok · 2 tools") {
		t.Errorf("status: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, "status", "--url", base, "--admin-token-env", "MCPC_STATUS_TEST_TOKEN", "--chat", "a", "srv")
	for _, want := range []string{"srv in chat a: running · 2 tools", "command line: " + testServer + " -tools echo,env", "env names: ", "TOKEN", "tools: echo, env", "stderr tail:", "key [REDACTED]"} {
		if !strings.Contains(out, want) {
			t.Errorf("details lack %q: exit %d\n%s%s", want, code, out, errOut)
		}
	}
	if strings.Contains(out+errOut, runCanary) {
		t.Errorf("status shows the secret:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", base}, "401 Unauthorized"},
		{[]string{"--url", base, "--admin-token-env", "MCPC_STATUS_TEST_TOKEN", "--chat", "b"}, `has no chat "b"; its chats: a`},
		{[]string{"--url", base, "--admin-token-env", "MCPC_STATUS_TEST_TOKEN", "nope"}, `chat "a" has no server "nope"`},
		{[]string{"--url", base + "/status"}, "give the gateway's address"},
		{[]string{"--url", base, "--workspace", "x"}, "give one of --url, --workspace and --socket"},
	} {
		if code, _, errOut := run(t, append([]string{"status"}, c.args...)...); code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("status %v: exit %d %s, want %q", c.args, code, errOut, c.want)
		}
	}
}

// mcpc run --stdio serves its status on an owner-only unix socket that
// mcpc status finds by the workspace, or alone; it is gone after the run.
func TestStatusOverStdioSocket(t *testing.T) {
	marker := leakMarker(t)
	runtimeDir := useRuntimeDir(t)
	plan := compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}},
	})
	ws := filepath.Join(t.TempDir(), "chat")
	cs, wait := runStdio(t, "--plan", plan, "--workspace", ws, "--clean-env", "--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo %q", got)
	}
	abs, _ := filepath.Abs(ws)
	sock := filepath.Join(runtimeDir, "mcpc", statusSocketName(abs))
	for path, mode := range map[string]os.FileMode{sock: 0o600, filepath.Dir(sock): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v %v, want %v", path, err, fi, mode)
		}
	}
	code, out, errOut := run(t, "status", "--workspace", ws, "srv")
	if code != ExitOK || !strings.Contains(out, "srv in chat stdio: running · 1 tool") || !strings.Contains(out, "cwd: "+abs) {
		t.Errorf("status --workspace: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "status"); code != ExitOK || !strings.Contains(out, "chat stdio ("+abs+"):\n  srv: running · 1 tool") {
		t.Errorf("status: exit %d\n%s%s", code, out, errOut)
	}
	code, stderr := wait()
	if code != ExitOK || !strings.Contains(stderr, "mcpc: status: mcpc status --socket "+sock+"\n") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket outlived mcpc run: %v", err)
	}
	if code, _, errOut := run(t, "status", "--workspace", ws); code != ExitUsage || !strings.Contains(errOut, "no mcpc run --stdio serves "+abs) {
		t.Errorf("status after the run: exit %d %s", code, errOut)
	}
}

// mcpc run logs the host's Playwright line at startup.
func TestRunLogsPlaywrightLine(t *testing.T) {
	marker := leakMarker(t)
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"PLAYWRIGHT_ENABLED=true"}, "MCP: playwright enabled (headless, chromium)\n"},
		{[]string{"PLAYWRIGHT_ENABLED=true", "PLAYWRIGHT_HEADLESS=false", "PLAYWRIGHT_BROWSER=firefox", "PLAYWRIGHT_EXTRA_ARGS=--headless --browser msedge"}, "MCP: playwright enabled (headed, firefox)\n"},
		{nil, "MCP: playwright disabled (set PLAYWRIGHT_ENABLED=true)\n"},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "plan.json")
		args := []string{"plan", "--clean-env", "--agent-dir", dir, "-o", out}
		for _, e := range c.env {
			args = append(args, "--env", e)
		}
		if code, _, stderr := run(t, args...); code != ExitOK {
			t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
		}
		cs, wait := runStdio(t, "--plan", out, "--workspace", filepath.Join(dir, "ws"), "--clean-env", "--env", marker)
		cs.Close()
		if _, stderr := wait(); !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr lacks %q:\n%s", c.env, c.want, stderr)
		}
	}
}
