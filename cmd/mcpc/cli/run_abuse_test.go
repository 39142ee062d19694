package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// Run called in-process cannot start the process guard: the test binary is
// not mcpc and cannot be re-executed as its watchdog. The tests that run
// the mcpc binary have it.
func init() { runGuard = false }

// waitFor polls cond until it holds; the limit only fails a test whose
// event never comes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fileLines reads a file of lines written by the test server; a missing
// file has none.
func fileLines(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Fields(string(b))
}

// exited waits for cmd to exit, once something else started waiting for
// it (done); the limit only fails the test, after killing mcpc so that
// its cleanup does not wait too.
func exited(t *testing.T, cmd *exec.Cmd, done <-chan error, what string, stderr fmt.Stringer) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s: mcpc run did not exit\n%s", what, stderr)
		return nil
	}
}

// A stop signal cancels the calls in flight (the server gets
// notifications/cancelled) and mcpc exits at once, leaving no process. It
// used to wait for the calls to end: up to callTimeoutSeconds (118 s with
// the default) over stdio, and over HTTP it killed the server under the
// call after the HTTP shutdown's 5 s, without cancelling it.
func TestRunSignalCancelsCallsInFlight(t *testing.T) {
	marker, bin := processTest(t)
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			methods, calls := filepath.Join(dir, "methods"), filepath.Join(dir, "calls")
			plan := compilePlan(t, map[string]map[string]any{
				"srv": {"Command": testServer, "Args": []string{"-tools", "slow", "-method-log", methods, "-call-log", calls,
					"-pidfile", filepath.Join(dir, "srv.pid"), "-spawn-child", "-child-pidfile", filepath.Join(dir, "child.pid")},
					"CallTimeoutSeconds": 3600},
			})
			common := []string{"--plan", plan, "--clean-env", "--env", "PATH=" + os.Getenv("PATH"), "--env", marker}
			var cmd *exec.Cmd
			var httpRun *httpRun
			var stderr *syncBuffer
			var cs *mcp.ClientSession
			var err error
			if mode == "stdio" {
				cmd = exec.Command(bin, append([]string{"run", "--stdio", "--workspace", filepath.Join(dir, "ws")}, common...)...)
				stderr = &syncBuffer{}
				cmd.Stderr = stderr
				cs, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
					&mcp.CommandTransport{Command: cmd}, nil)
			} else {
				var base string
				httpRun, base, stderr = startRunHTTP(t, bin, append([]string{"--workspace-root", filepath.Join(dir, "chats")}, common...)...)
				cmd = httpRun.Cmd
				cs, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
					&mcp.StreamableClientTransport{Endpoint: base + "/chats/a/mcp", HTTPClient: httpRun.client(nil)}, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			done := make(chan error, 1)
			if mode == "http" {
				go func() { done <- httpRun.Wait() }()
			}
			callDone := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 3_000_000}})
				callDone <- err
			}()
			waitFor(t, "the server runs the call", func() bool { return slices.Contains(fileLines(calls), "slow") })
			server, child := readPid(t, filepath.Join(dir, "srv.pid")), readPid(t, filepath.Join(dir, "child.pid"))
			start := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if mode == "stdio" {
				// The CommandTransport reaps mcpc once its stdout ends.
				go func() { done <- cs.Wait() }()
			}
			exited(t, cmd, done, mode, stderr)
			if mode == "stdio" {
				waitFor(t, "the transport reaps mcpc", func() bool { return cmd.ProcessState != nil })
			}
			t.Logf("%s: mcpc run exited %v after SIGTERM with a call in flight", mode, time.Since(start).Round(time.Millisecond))
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d\n%s", code, stderr)
			}
			if got := fileLines(methods); !slices.Contains(got, "notifications/cancelled") {
				t.Errorf("the server received %v: no notifications/cancelled\n%s", got, stderr)
			}
			if alive(server) || alive(child) {
				t.Errorf("server %d (alive %v) or its child %d (alive %v) outlived mcpc run", server, alive(server), child, alive(child))
			}
			if s := stderr.String(); !strings.Contains(s, "stopped; every server process is gone") {
				t.Errorf("stderr:\n%s", s)
			}
			select {
			case <-callDone:
			case <-time.After(30 * time.Second):
				t.Error("the client's call never ended")
			}
		})
	}
}

// watchdogOf returns the pid of mcpc's guard process, its child running the
// mcpc binary; 0 if there is none. mcpc starts it before any server, so it
// runs once a server answered.
func watchdogOf(mcpc int, bin string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(mcpc) {
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); exe == bin {
				return p
			}
		}
	}
	return 0
}

// startStdioProcess starts mcpc run --stdio as a process with a client on
// it.
func startStdioProcess(t *testing.T, bin string, args ...string) (*exec.Cmd, *mcp.ClientSession, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"run", "--stdio"}, args...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cmd, cs, stderr
}

// After SIGKILL of mcpc run, the grandchildren in the servers' process
// groups die too: the guard process kills the groups, then exits. The
// kernel's parent-death signal alone killed only the servers themselves,
// and their children lived on.
func TestRunKilledKillsServerGroups(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the guard is Linux's")
	}
	marker, bin := processTest(t)
	dir := t.TempDir()
	plan := compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", "echo", "-pidfile", filepath.Join(dir, "srv.pid"),
			"-spawn-child", "-child-pidfile", filepath.Join(dir, "child.pid")}},
	})
	cmd, cs, stderr := startStdioProcess(t, bin, "--plan", plan, "--workspace", filepath.Join(dir, "ws"), "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got := callText(t, cs, "echo", map[string]any{"text": "x"}); got != "x" {
		t.Fatalf("echo %q", got)
	}
	server, child := readPid(t, filepath.Join(dir, "srv.pid")), readPid(t, filepath.Join(dir, "child.pid"))
	guard := watchdogOf(cmd.Process.Pid, bin)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server's child is gone", func() bool { return !alive(child) })
	waitFor(t, "the server is gone", func() bool { return !alive(server) })
	if guard == 0 {
		t.Errorf("no guard process ran\n%s", stderr)
	} else {
		waitFor(t, "the guard process is gone", func() bool { return !alive(guard) })
	}
}

// startEscapingServer runs mcpc run --stdio as a process with one server
// (tools, and echo among them) that starts a "sleep" in a session of its
// own (setsid); it returns once a call ran, with the sleep's pid.
func startEscapingServer(t *testing.T, tools string) (marker string, cmd *exec.Cmd, cs *mcp.ClientSession, stderr *syncBuffer, pid int) {
	t.Helper()
	marker, bin := processTest(t)
	dir := t.TempDir()
	// In the server's working directory: the chat's process may run at the
	// same time as the discovery's, which starts a sleep of its own.
	escaped := filepath.Join(dir, "ws", "escaped.pid")
	plan := compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", tools, "-spawn-escaped", "escaped.pid"}},
	})
	cmd, cs, stderr = startStdioProcess(t, bin, "--plan", plan, "--workspace", filepath.Join(dir, "ws"), "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got := callText(t, cs, "echo", map[string]any{"text": "x"}); got != "x" {
		t.Fatalf("echo %q", got)
	}
	return marker, cmd, cs, stderr, readPid(t, escaped)
}

// A process that leaves its server's process group (setsid) is not
// claimed gone: stopping the server kills it on its own, and mcpc says
// so, in the log and in its last line. It used to outlive mcpc, which
// said "every server process is gone".
func TestRunEscapedProcessCounted(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the process tree is read from /proc")
	}
	_, cmd, cs, stderr, pid := startEscapingServer(t, "echo")
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	exited(t, cmd, done, "SIGTERM", stderr)
	waitFor(t, "the transport reaps mcpc", func() bool { return cmd.ProcessState != nil })
	if alive(pid) {
		t.Errorf("the process that left the group (%d) outlived mcpc run", pid)
	}
	// The discovery's process left its group too: two processes.
	s := stderr.String()
	for _, want := range []string{
		fmt.Sprintf("chat stdio: MCP server srv: process %d (sleep) had left the server's process group (setsid); it was killed on its own", pid),
		"stopped; every server process is gone (2 processes had left their server's process group (setsid) and were killed on their own; see above)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("stderr lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "outlived the server") {
		t.Errorf("a process killed with its server is also reported as an orphan:\n%s", s)
	}
}

// A process that left its server's group and outlived the server (which
// exited) is reparented to mcpc, a child subreaper: mcpc logs it, and when
// mcpc is killed the guard kills it too.
func TestRunKilledKillsOrphanThatLeftItsGroup(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the guard is Linux's")
	}
	marker, cmd, cs, stderr, pid := startEscapingServer(t, "echo,crash")
	callText(t, cs, "crash", map[string]any{"code": 2}) // the server exits; its setsid child stays
	want := fmt.Sprintf("process %d (sleep) outlived the server that started it, outside its process group (setsid)", pid)
	waitFor(t, "mcpc reports the orphan", func() bool { return strings.Contains(stderr.String(), want) })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the orphan is gone", func() bool { return !alive(pid) })
	// The discovery's server left a sleep of its own, which the guard
	// may kill after this one: every process of the run goes, the guard
	// last.
	waitFor(t, "every process of the run is gone", func() bool { return len(testservers.MarkedProcesses(marker)) == 0 })
}

// Tokens: at least 16 characters, not blank; the admin and MCP tokens
// differ; the limit flags are checked.
func TestRunTokenAndLimitUsageErrors(t *testing.T) {
	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer}})
	dir := t.TempDir()
	httpArgs := []string{"run", "--plan", plan, "--http", "127.0.0.1:0", "--workspace-root", dir, "--clean-env"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", "TOK=short-token-15c", "--admin-token-env", "TOK"}, "--admin-token-env TOK: the token in TOK is shorter than 16 characters"},
		{[]string{"--env", "TOK=                    ", "--admin-token-env", "TOK"}, "TOK is not set or blank"},
		{[]string{"--env", "TOK=short", "--mcp-token-env", "TOK"}, "--mcp-token-env TOK: the token in TOK is shorter than 16 characters"},
		{[]string{"--mcp-token-env", "NOPE"}, "NOPE is not set or blank"},
		{[]string{"--mcp-token-env", ""}, "--mcp-token-env is empty"},
		{[]string{"--env", "A=0123456789abcdef", "--env", "B=0123456789abcdef", "--admin-token-env", "A", "--mcp-token-env", "B"}, "hold the same token"},
		// One variable for both: the same token, not "A is not set" (taking
		// the first token removes the variable).
		{[]string{"--env", "A=0123456789abcdef", "--admin-token-env", "A", "--mcp-token-env", "A"}, "--admin-token-env and --mcp-token-env hold the same token (both name A)"},
		{[]string{"--env", "A=0123456789abcdef", "--mcp-token-env", "A", "--mcp-no-auth"}, "--mcp-no-auth and --mcp-token-env contradict each other"},
		{[]string{"--http", "unix:"}, "give the socket's path"},
		{[]string{"--max-chats", "-1"}, "--max-chats -1"},
		{[]string{"--max-processes", "-2"}, "--max-processes -2"},
		{[]string{"--chat-idle-timeout", "-1s"}, "--chat-idle-timeout -1s"},
		{[]string{"--shutdown-grace", "0s"}, "--shutdown-grace 0s: give a positive duration"},
		{[]string{"--body-timeout", "0s"}, "--body-timeout 0s"},
	} {
		code, _, stderr := run(t, append(httpArgs, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q; stderr %s", tc.args, code, tc.want, stderr)
		}
		if strings.Contains(stderr, "0123456789abcdef") || strings.Contains(stderr, "short-token-15c") {
			t.Errorf("%v: stderr shows the token: %s", tc.args, stderr)
		}
	}
	for _, f := range [][]string{{"--max-chats", "3"}, {"--chat-idle-timeout", "1m"}, {"--mcp-token-env", "X"}, {"--mcp-no-auth"}} {
		code, _, stderr := run(t, append([]string{"run", "--plan", plan, "--stdio", "--workspace", dir}, f...)...)
		if code != ExitUsage || !strings.Contains(stderr, "with --http") {
			t.Errorf("%v with --stdio: exit %d: %s", f, code, stderr)
		}
	}
	code, stdout, _ := run(t, "run", "--help")
	for _, want := range []string{"--mcp-token-env", "--mcp-no-auth", "unix:PATH", "--max-chats", "--max-sessions", "--max-sessions-per-chat", "--max-processes", "--chat-idle-timeout",
		"--session-idle-timeout", "--body-timeout", "--shutdown-grace"} {
		if code != ExitOK || !strings.Contains(stdout, want) {
			t.Errorf("run --help lacks %s", want)
		}
	}
	if code, _, stderr := run(t, "nope"); code != ExitUsage || strings.Contains(stderr, guardCommandName) {
		t.Errorf("the hidden guard command is listed: %s", stderr)
	}
}

// listenWarning: MCP endpoints left open by --mcp-no-auth are warned
// about, more loudly beyond loopback; with a token (the default), or on a
// unix socket (the user's only), they are not.
func TestListenWarning(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		mcpOpen bool
		want    string
	}{
		{"0.0.0.0:8080", true, "reachable beyond this machine"},
		{"[::]:8080", true, "reachable beyond this machine"},
		{":8080", true, "reachable beyond this machine"},
		{"192.168.1.5:80", true, "reachable beyond this machine"},
		{"127.0.0.1:8080", true, "every user of this machine can call every server as you"},
		{"[::1]:8080", true, "every user of this machine"},
		{"localhost:8080", true, "every user of this machine"},
		{"0.0.0.0:8080", false, ""},
		{"127.0.0.1:8080", false, ""},
		{"unix:/tmp/gw.sock", true, ""},
	} {
		w := listenWarning(tc.addr, tc.mcpOpen)
		if (w != "") != (tc.want != "") || !strings.Contains(w, tc.want) {
			t.Errorf("%s (--mcp-no-auth %v): %q, want %q", tc.addr, tc.mcpOpen, w, tc.want)
		}
	}
}

// mcpc run --http with --mcp-token-env: the MCP endpoints need the token
// (401 with WWW-Authenticate: Bearer), no server inherits it, and it is
// redacted like the admin token. Junk requests create no chat, and
// --max-chats refuses one chat more with 503 and a log line.
func TestRunHTTPTokenAndLimits(t *testing.T) {
	marker, bin := processTest(t)
	root := t.TempDir()
	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer, "Args": []string{"-tools", "echo,env"}}})
	const token = "mcp-" + runCanary + "-0123"
	cmd, base, stderr := startRunHTTP(t, bin, "--plan", plan, "--workspace-root", root, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--env", "GATEWAY_MCP="+token, "--mcp-token-env", "GATEWAY_MCP",
		"--max-chats", "1")
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	post := func(id, auth string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", base+"/chats/"+id+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := post("a", ""); resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("without the token: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := post("a", "Bearer wrong-token-0123456789"); resp.StatusCode != 401 {
		t.Errorf("a wrong token: %d", resp.StatusCode)
	}
	client := &http.Client{Transport: bearerRoundTripper{token: token}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/chats/a/mcp", HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := callText(t, cs, "env", map[string]any{"name": "GATEWAY_MCP"}); got != "" {
		t.Errorf("the MCP token reached a server: %q", got)
	}
	if got := callText(t, cs, "echo", map[string]any{"text": "t=" + token}); got != "t=[REDACTED]" {
		t.Errorf("the MCP token is not redacted: %q", got)
	}
	// Junk with the token creates nothing.
	for i := range 50 {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/chats/junk%d/mcp", base, i), nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("workspaces %v, want only a's", entries)
	}
	if resp, body := post("b", "Bearer "+token); resp.StatusCode != 503 || !strings.Contains(body, "maximum of 1 chats (--max-chats)") {
		t.Errorf("a second chat: %d %s", resp.StatusCode, body)
	}
	waitFor(t, "the limit is logged", func() bool { return strings.Contains(stderr.String(), "maximum of 1 chats") })
	if strings.Contains(stderr.String(), runCanary) {
		t.Errorf("stderr shows the token:\n%s", stderr)
	}
}

// bearerRoundTripper adds a bearer token to every request, sent over rt
// (nil: http.DefaultTransport).
type bearerRoundTripper struct {
	token string
	rt    http.RoundTripper
}

func (b bearerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.rt == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	return b.rt.RoundTrip(r)
}

// When the servers take longer to stop than --shutdown-grace, mcpc exits
// anyway, with 3 and a message, and the guard kills what is left.
func TestRunShutdownGracePassed(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the guard is Linux's")
	}
	marker, bin := processTest(t)
	dir := t.TempDir()
	// The server lingers an hour after stdin ends: its stop takes the whole
	// 500 ms stop grace, more than the 100 ms shutdown grace.
	plan := compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", "echo", "-linger", "1h", "-pidfile", filepath.Join(dir, "srv.pid")}},
	})
	stopPastTheGrace(t, bin, plan, dir, marker, "echo")
}

// procsPerChat sets the processors to the chats served, from one up to
// what the process had, and gives them back when the gateway ends; an
// operator's GOMAXPROCS wins.
func TestProcsPerChat(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in this environment: procsPerChat leaves it alone")
	}
	most := goruntime.GOMAXPROCS(0)
	adaptProcs = true
	defer func() { adaptProcs = false }()
	var opts gateway.GatewayOptions
	restore := procsPerChat(&opts)
	steps := []struct{ chats, want int }{{-1, 1}, {1, 1}, {2, min(2, most)}, {most + 5, most}, {0, 1}}
	for _, s := range steps {
		if s.chats >= 0 {
			opts.ChatsChanged(s.chats)
		}
		if got := goruntime.GOMAXPROCS(0); got != s.want {
			t.Errorf("%d chats: GOMAXPROCS %d, want %d", s.chats, got, s.want)
		}
	}
	restore()
	if got := goruntime.GOMAXPROCS(0); got != most {
		t.Errorf("after the gateway: GOMAXPROCS %d, want %d", got, most)
	}
	opts.ChatsChanged(1) // a chat forgotten after the gateway ended
	if got := goruntime.GOMAXPROCS(0); got != most {
		t.Errorf("a change after the end set GOMAXPROCS to %d", got)
	}

	t.Setenv("GOMAXPROCS", strconv.Itoa(most))
	var theirs gateway.GatewayOptions
	procsPerChat(&theirs)()
	if theirs.ChatsChanged != nil {
		t.Error("with GOMAXPROCS set, procsPerChat took over")
	}
}

// stopPastTheGrace runs planFile over stdio with a 100 ms shutdown grace,
// calls tool (an echo) of its one server, whose process lingers after its
// stdin ends and writes dir/srv.pid, and stops mcpc with SIGTERM: mcpc
// exits 3 and says the grace passed, and the guard kills the server.
func stopPastTheGrace(t *testing.T, bin, planFile, dir, marker, tool string) {
	t.Helper()
	cmd, cs, stderr := startStdioProcess(t, bin, "--plan", planFile, "--workspace", filepath.Join(dir, "ws"), "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--shutdown-grace", "100ms")
	if got := callText(t, cs, tool, map[string]any{"text": "x"}); got != "x" {
		t.Fatalf("echo %q", got)
	}
	server := readPid(t, filepath.Join(dir, "srv.pid"))
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	exited(t, cmd, done, "SIGTERM", stderr)
	waitFor(t, "the transport reaps mcpc", func() bool { return cmd.ProcessState != nil })
	if code := cmd.ProcessState.ExitCode(); code != ExitInternal {
		t.Errorf("exit code %d, want %d", code, ExitInternal)
	}
	if want := "the shutdown grace (100ms) passed before every server process stopped; exiting anyway: the guard process kills what is left"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	waitFor(t, "the lingering server is gone", func() bool { return !alive(server) })
}
