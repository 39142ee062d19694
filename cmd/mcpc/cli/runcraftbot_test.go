package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// mcpc run --stdio with a craftbot plan: the plan of an mcp_config.json
// with a stdio, an sse and a websocket server (and a broken one) serves
// their tools as CraftBot's actions; the env value of the config file
// reaches the server and never shows; the broken server is reported and
// the rest served; mcpc exits 0 with no process left.
func TestRunCraftbotPlanStdio(t *testing.T) {
	marker := leakMarker(t)
	useRuntimeDir(t)
	addr := testservers.StartWSServer(t)
	dir := t.TempDir()
	servers := []map[string]any{
		{"name": "fs", "transport": "stdio", "command": testServer, "args": []string{"-tools", "echo,env,crash"},
			"env": map[string]string{"TOKEN": runCanary, "EMPTY": ""}, "enabled": true},
		{"name": "events", "transport": "sse", "url": "http://" + addr + "/sse", "enabled": true},
		{"name": "sock", "transport": "websocket", "url": "ws://" + addr + "/ws", "enabled": true},
		{"name": "broken", "transport": "stdio", "command": testServer, "args": []string{"-exit-at-start", "4"}, "enabled": true},
		{"name": "off", "transport": "stdio", "command": testServer, "enabled": false},
	}
	b, _ := json.Marshal(map[string]any{"auto_connect": true, "mcp_servers": servers})
	cfg := write(t, dir, "app/config/mcp_config.json", string(b))
	planFile := filepath.Join(dir, "craftbot-plan.json")
	if code, _, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env", "--config", cfg, "-o", planFile); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	cs, wait := runStdio(t, "--plan", planFile, "--workspace", filepath.Join(dir, "ws"), "--clean-env", "--env", marker)
	names := toolNames(t, cs)
	want := []string{"mcp_events_echo", "mcp_fs_crash", "mcp_fs_echo", "mcp_fs_env", "mcp_sock_echo"}
	for _, n := range want {
		if !slices.Contains(names, n) {
			t.Errorf("tools %v lack %s", names, n)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "mcp_broken_") || strings.HasPrefix(n, "mcp_off_") {
			t.Errorf("served %s", n)
		}
	}
	for _, n := range []string{"mcp_fs_echo", "mcp_events_echo", "mcp_sock_echo"} {
		if got := callText(t, cs, n, map[string]any{"text": "via " + n}); got != "via "+n {
			t.Errorf("%s: %q", n, got)
		}
	}
	if got := callText(t, cs, "mcp_fs_env", map[string]any{"name": "TOKEN"}); got != "[REDACTED]" {
		t.Errorf("TOKEN: %q, want the config value, redacted", got)
	}
	got := callText(t, cs, "mcp_fs_crash", map[string]any{"code": 6})
	if want := "MCP server fs exited (6): testserver: crashing with code 6. It restarts on the next call; its state was lost."; got != want {
		t.Errorf("crash: %q", got)
	}
	// The status, on the workspace's socket: the failure is there.
	ws := filepath.Join(dir, "ws")
	_, out, errOut := run(t, "status", "--workspace", ws)
	for _, w := range []string{"craftbot plan, auto_connect on: " + plural(len(names), "action") + " served", "  fs (stdio): exited · 3 actions",
		"  broken (stdio): failed: exited (4): testserver: exiting at start with code 4 · 0 actions",
		"  events (sse http://" + addr + "/sse): running · ", "  off (stdio): disabled · 0 actions"} {
		if !strings.Contains(out, w) {
			t.Errorf("status lacks %q:\n%s%s", w, out, errOut)
		}
	}
	code, stderr := wait()
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	for _, w := range []string{"craftbot plan: 5 servers (4 enabled), auto_connect on", "MCP server broken failed to start: exited (4)", "every server process is gone"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, runCanary) {
		t.Errorf("the canary shows on stderr:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws")); err != nil {
		t.Errorf("the workspace: %v", err)
	}
}

// mcpc run --http with a craftbot plan: every client (any chat URL) shares
// one process per server, started in the workspace root; SIGTERM stops it
// with its process group and exits 0; the config value never shows.
func TestRunCraftbotPlanHTTPSignal(t *testing.T) {
	marker, bin := processTest(t)
	dir, root := t.TempDir(), t.TempDir()
	b, _ := json.Marshal(map[string]any{"auto_connect": false, "mcp_servers": []map[string]any{
		{"name": "fs", "transport": "stdio", "command": testServer, "enabled": true,
			"args": []string{"-tools", "echo,env", "-start-log", "starts", "-pidfile", "srv.pid", "-spawn-child", "-child-pidfile", "child.pid"},
			"env":  map[string]string{"TOKEN": runCanary}},
	}})
	cfg := write(t, dir, "mcp_config.json", string(b))
	planFile := filepath.Join(dir, "plan.json")
	if code, _, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env", "--config", cfg, "-o", planFile); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	cmd, base, stderr := startRunHTTP(t, bin, "--plan", planFile, "--workspace-root", root, "--clean-env", "--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	tr := &http.Transport{}
	client := cmd.client(tr)
	for _, path := range []string{"/chats/a/mcp", "/chats/b/mcp", "/mcp"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: base + path, HTTPClient: client}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fs_env", Arguments: map[string]any{"name": "TOKEN"}})
		cs.Close()
		if err != nil || testservers.TextOf(res) != "[REDACTED]" {
			tr.CloseIdleConnections()
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%s: TOKEN %+v %v\n%s", path, res, err, stderr.String())
		}
	}
	if starts, _ := os.ReadFile(filepath.Join(root, "starts")); strings.Count(string(starts), "\n") != 1 {
		t.Errorf("starts %q: want one process for every client", starts)
	}
	pids := []int{readPid(t, filepath.Join(root, "srv.pid")), readPid(t, filepath.Join(root, "child.pid"))}
	tr.CloseIdleConnections()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v\n%s", err, stderr.String())
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived mcpc run", pid)
		}
	}
	if s := stderr.String(); !strings.Contains(s, "stopped; every server process is gone") || strings.Contains(s, runCanary) {
		t.Errorf("stderr:\n%s", s)
	}
}

// A craftbot plan's servers that take longer to stop than --shutdown-grace
// end mcpc run as a volcanic plan's do: exit 3, and a message that says
// what is left (docs/decisions/0051-one-mcpc-run.md).
func TestRunCraftbotShutdownGracePassed(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the guard is Linux's")
	}
	marker, bin := processTest(t)
	useRuntimeDir(t)
	dir := t.TempDir()
	// The server lingers an hour after stdin ends: its stop takes the whole
	// 500 ms stop grace, more than the 100 ms shutdown grace.
	servers := []map[string]any{{"name": "srv", "transport": "stdio", "command": testServer,
		"args": []string{"-tools", "echo", "-linger", "1h", "-pidfile", filepath.Join(dir, "srv.pid")}, "enabled": true}}
	b, _ := json.Marshal(map[string]any{"auto_connect": true, "mcp_servers": servers})
	cfg := write(t, dir, "app/config/mcp_config.json", string(b))
	planFile := filepath.Join(dir, "craftbot-plan.json")
	if code, _, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env", "--config", cfg, "-o", planFile); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	stopPastTheGrace(t, bin, planFile, dir, marker, "mcp_srv_echo")
}
