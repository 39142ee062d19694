package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// testBin is the test MCP server (fixtures/servers/testserver), built once.
var testBin string

func TestMain(m *testing.M) {
	testservers.Main(m, func(bin string) { testBin = bin })
}

// server returns a target running the test server with args; timeout is
// its startup timeout (testservers.Patient for a server that must start).
func server(name string, timeout time.Duration, args ...string) Target {
	return Target{Server: name, Spec: func(ws string) (LaunchSpec, error) {
		return LaunchSpec{Server: name, Command: testBin, Args: args,
			Env: []string{"PATH=" + os.Getenv("PATH")}, StartupTimeout: timeout}, nil
	}}
}

// discoverPast runs Discover on a fake clock and, once every file of
// ready exists (what the servers that must time out write before they
// hang), moves the clock by d: their startup timeouts pass then, on any
// machine, and no other timeout can.
func discoverPast(t *testing.T, targets []Target, opts DiscoverOptions, d time.Duration, ready ...string) []Discovery {
	t.Helper()
	clock := clocktest.New()
	opts.Clock = clock
	done := make(chan []Discovery, 1)
	go func() { done <- Discover(context.Background(), targets, opts) }()
	testservers.WaitUntil(t, "the hanging servers get going", func() bool {
		for _, f := range ready {
			if !fileExists(f) {
				return false
			}
		}
		return true
	})
	clock.Advance(d)
	return testservers.Recv(t, "Discover to return", done)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func toolNames(d Discovery) []string {
	var names []string
	for _, t := range d.Tools {
		names = append(names, t.Name)
	}
	return names
}

func kindOf(err error) FailureKind {
	var de *DiscoveryError
	if errors.As(err, &de) {
		return de.Kind
	}
	return ""
}

func TestDiscoverPagination(t *testing.T) {
	t.Parallel()
	tools := []string{"zeta", "alpha", "echo", "env", "gamma", "beta", "delta"}
	res := Discover(context.Background(), []Target{
		server("paged", testservers.Patient, "-tools", strings.Join(tools, ","), "-page-size", "2",
			"-tool-desc", "[v2]", "-name", "paged-server", "-version", "2.3.4"),
	}, DiscoverOptions{})
	d := res[0]
	if d.Err != nil {
		t.Fatalf("discovery failed: %v (stderr %q)", d.Err, d.Stderr)
	}
	// The go-sdk server lists tools sorted by name; 7 tools at 2 per page is 4 pages.
	want := slices.Sorted(slices.Values(tools))
	if got := toolNames(d); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	for _, tool := range d.Tools {
		if !strings.HasPrefix(tool.Description, "[v2] ") {
			t.Errorf("tool %s: description %q lacks the -tool-desc prefix", tool.Name, tool.Description)
		}
	}
	if d.ServerName != "paged-server" || d.ServerVersion != "2.3.4" {
		t.Errorf("server info = %q %q", d.ServerName, d.ServerVersion)
	}
	if d.Server != "paged" || d.Reason != "" || d.Elapsed <= 0 {
		t.Errorf("unexpected %+v", d)
	}
}

func TestDiscoverFailuresAndOrder(t *testing.T) {
	t.Parallel()
	specErr := Target{Server: "bad-spec", Spec: func(string) (LaunchSpec, error) {
		return LaunchSpec{}, errors.New("unknown variable ${home}")
	}}
	missing := Target{Server: "missing", Spec: func(string) (LaunchSpec, error) {
		return LaunchSpec{Command: "/nonexistent/mcp-server"}, nil
	}}
	child := filepath.Join(t.TempDir(), "child")
	targets := []Target{
		server("ok-1", testservers.Patient),
		server("exits", testservers.Patient, "-stderr", "loading config", "-stderr", "fatal: no config", "-exit-at-start", "3"),
		server("hangs", 500*time.Millisecond, "-hang-at-start", "-stderr", "waiting for Godot", "-spawn-child", "-child-pidfile", child),
		server("garbage", testservers.Patient, "-garbage"),
		specErr,
		missing,
		server("ok-2", testservers.Patient, "-tools", "a,b"),
	}
	// The hanging server times out once it has written its stderr (its
	// child's pid file comes after it).
	res := discoverPast(t, targets, DiscoverOptions{Concurrency: 3}, 500*time.Millisecond, child)
	if len(res) != len(targets) {
		t.Fatalf("%d results", len(res))
	}
	for i, d := range res {
		if d.Server != targets[i].Server {
			t.Errorf("result %d is %q, want %q", i, d.Server, targets[i].Server)
		}
		t.Logf("%-8s err=%v stderr=%q elapsed=%v", d.Server, d.Err, d.Stderr, d.Elapsed)
	}

	check := func(d Discovery, kind FailureKind, reasonPrefix string, contains ...string) {
		t.Helper()
		if got := kindOf(d.Err); got != kind {
			t.Errorf("%s: kind %q, want %q (err %v)", d.Server, got, kind, d.Err)
		}
		if !strings.HasPrefix(d.Reason, reasonPrefix) {
			t.Errorf("%s: reason %q, want prefix %q", d.Server, d.Reason, reasonPrefix)
		}
		for _, c := range contains {
			if !strings.Contains(d.Reason, c) {
				t.Errorf("%s: reason %q lacks %q", d.Server, d.Reason, c)
			}
		}
		if d.Err != nil && d.Err.Error() != d.Reason {
			t.Errorf("%s: error %q differs from reason %q", d.Server, d.Err, d.Reason)
		}
		if d.Tools != nil {
			t.Errorf("%s: failed but has tools", d.Server)
		}
	}
	if got := toolNames(res[0]); res[0].Err != nil || !slices.Equal(got, []string{"echo"}) {
		t.Errorf("ok-1: %v %v", got, res[0].Err)
	}
	check(res[1], FailExited, "exited (3): ", "fatal: no config", "loading config")
	var de *DiscoveryError
	if errors.As(res[1].Err, &de) && de.ExitCode != 3 {
		t.Errorf("exit code %d", de.ExitCode)
	}
	check(res[2], FailTimeout, "no answer within 500ms", "waiting for Godot")
	check(res[3], FailProtocol, "protocol error: ")
	check(res[4], FailSpec, "invalid launch spec: unknown variable ${home}")
	check(res[5], FailStart, `cannot start "/nonexistent/mcp-server"`)
	if got := toolNames(res[6]); res[6].Err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("ok-2: %v %v", got, res[6].Err)
	}
}

func TestDiscoverWorkspace(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var workspaces []string
	mk := func(name string, args ...string) Target {
		return Target{Server: name, Spec: func(ws string) (LaunchSpec, error) {
			mu.Lock()
			workspaces = append(workspaces, ws)
			mu.Unlock()
			// A relative pidfile lands in the working directory, the workspace.
			return LaunchSpec{Command: testBin, Args: append(args, "-pidfile", "server.pid"),
				Env: []string{"PATH=" + os.Getenv("PATH")}, StartupTimeout: testservers.Patient}, nil
		}}
	}
	res := Discover(context.Background(), []Target{mk("a"), mk("b", "-exit-at-start", "1")}, DiscoverOptions{})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if len(workspaces) != 2 || workspaces[0] == workspaces[1] {
		t.Fatalf("workspaces %v: want two different ones", workspaces)
	}
	for _, ws := range workspaces {
		if _, err := os.Stat(ws); !os.IsNotExist(err) {
			t.Errorf("workspace %s still exists (%v)", ws, err)
		}
	}
}

// processGone reports whether pid no longer runs: no such process, or a
// zombie waiting for a parent that is not us.
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// groupMembers lists the live processes whose process group is pgid.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

var readPid = testservers.ReadPid

func TestDiscoverLeavesNoProcesses(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	modes := map[string][]string{
		"ok":      nil,
		"exits":   {"-exit-at-start", "2"},
		"hangs":   {"-hang-at-start"},
		"garbage": {"-garbage"},
		"slow":    {"-start-delay", "1h"},
	}
	var targets []Target
	for name, extra := range modes {
		args := append([]string{"-spawn-child",
			"-child-pidfile", filepath.Join(dir, name+".child"),
			"-pidfile", filepath.Join(dir, name+".pid")}, extra...)
		timeout := testservers.Patient
		if name == "hangs" || name == "slow" {
			// "slow" times out during its start delay.
			timeout = time.Second
		}
		targets = append(targets, server(name, timeout, args...))
	}
	// The two that time out do so once their pid files are written.
	res := discoverPast(t, targets, DiscoverOptions{}, time.Second, filepath.Join(dir, "hangs.child"), filepath.Join(dir, "slow.child"))
	for _, d := range res {
		t.Logf("%-8s err=%v", d.Server, d.Err)
		if (d.Err == nil) != (d.Server == "ok") {
			t.Errorf("%s: unexpected result %v", d.Server, d.Err)
		}
		leader := readPid(t, filepath.Join(dir, d.Server+".pid"))
		child := readPid(t, filepath.Join(dir, d.Server+".child"))
		if !processGone(leader) {
			t.Errorf("%s: server process %d still runs", d.Server, leader)
		}
		if !processGone(child) {
			t.Errorf("%s: grandchild %d still runs", d.Server, child)
		}
		if m := groupMembers(t, leader); len(m) > 0 {
			t.Errorf("%s: processes %v of group %d still run", d.Server, m, leader)
		}
	}
}

func TestDiscoverCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancelled once the server and its child run.
	go func() {
		testservers.Await(t, func() bool { return fileExists(filepath.Join(dir, "child")) })
		cancel()
	}()
	res := Discover(ctx, []Target{
		server("hangs", testservers.Patient, "-hang-at-start", "-spawn-child", "-child-pidfile", filepath.Join(dir, "child")),
	}, DiscoverOptions{})
	if k := kindOf(res[0].Err); k != FailCancelled {
		t.Errorf("kind %q, err %v", k, res[0].Err)
	}
	if child := readPid(t, filepath.Join(dir, "child")); !processGone(child) {
		t.Errorf("grandchild %d still runs", child)
	}
	// Cancelled before the start: nothing runs at all.
	res = Discover(ctx, []Target{server("late", testservers.Patient)}, DiscoverOptions{})
	if k := kindOf(res[0].Err); k != FailCancelled {
		t.Errorf("late: kind %q", k)
	}
}

func TestDiscoverRedact(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-s3cr3t-7f1c"
	redact := func(s string) string { return strings.ReplaceAll(s, canary, "[REDACTED]") }
	child := filepath.Join(t.TempDir(), "child")
	res := discoverPast(t, []Target{
		server("exits", testservers.Patient, "-stderr", "auth failed for token "+canary, "-exit-at-start", "1"),
		server("hangs", 200*time.Millisecond, "-stderr", "token="+canary, "-hang-at-start", "-spawn-child", "-child-pidfile", child),
		server("ok", testservers.Patient, "-stderr", "using "+canary),
		{Server: "spec", Spec: func(string) (LaunchSpec, error) { return LaunchSpec{}, errors.New("bad " + canary) }},
	}, DiscoverOptions{Redact: redact}, 200*time.Millisecond, child)
	for _, d := range res {
		all := d.Reason + "\n" + d.Stderr
		if d.Err != nil {
			all += "\n" + d.Err.Error()
		}
		if strings.Contains(all, canary) {
			t.Errorf("%s: canary leaked: %q", d.Server, all)
		}
		// A discovery that listed the tools keeps the stderr read until
		// then, by a goroutine of its own: "ok"'s line may not be read
		// yet. A failed one has its whole stderr, read to the end.
		if d.Err == nil && d.Stderr == "" {
			continue
		}
		if !strings.Contains(all, "[REDACTED]") {
			t.Errorf("%s: no [REDACTED] in %q", d.Server, all)
		}
	}
}

func TestDiscoverProgress(t *testing.T) {
	t.Parallel()
	var events []ProgressEvent
	res := Discover(context.Background(), []Target{
		server("a", testservers.Patient, "-tools", "x,y"),
		server("b", testservers.Patient, "-exit-at-start", "4"),
	}, DiscoverOptions{Concurrency: 1, Progress: func(e ProgressEvent) { events = append(events, e) }})
	if len(events) != 4 {
		t.Fatalf("events %+v", events)
	}
	want := []struct {
		server string
		phase  Phase
	}{{"a", PhaseStarted}, {"a", PhaseDone}, {"b", PhaseStarted}, {"b", PhaseFailed}}
	for i, w := range want {
		if events[i].Server != w.server || events[i].Phase != w.phase {
			t.Errorf("event %d = %+v, want %s %s", i, events[i], w.server, w.phase)
		}
	}
	if events[1].Tools != 2 || events[1].Elapsed <= 0 {
		t.Errorf("done event %+v", events[1])
	}
	if events[3].Reason != res[1].Reason || events[3].Reason == "" {
		t.Errorf("failed event %+v", events[3])
	}
}

func TestDiscoverConcurrent20(t *testing.T) {
	t.Parallel()
	targets := make([]Target, 20)
	for i := range targets {
		targets[i] = server(fmt.Sprintf("s%02d", i), testservers.Patient, "-start-delay", "200ms", "-tools", fmt.Sprintf("t%d", i))
	}
	res := Discover(context.Background(), targets, DiscoverOptions{})
	for i, d := range res {
		if d.Err != nil || len(d.Tools) != 1 || d.Tools[0].Name != fmt.Sprintf("t%d", i) {
			t.Errorf("%s: %v %v", d.Server, toolNames(d), d.Err)
		}
	}
}

// BenchmarkDiscover20 discovers 20 servers that each take 200ms to start.
// x-slowest is the wall time divided by the slowest single discovery: with
// enough concurrency it stays well below 2.
func BenchmarkDiscover20(b *testing.B) {
	targets := make([]Target, 20)
	for i := range targets {
		targets[i] = server(fmt.Sprintf("s%02d", i), testservers.Patient, "-start-delay", "200ms")
	}
	var ratio float64
	for b.Loop() {
		start := time.Now()
		res := Discover(context.Background(), targets, DiscoverOptions{})
		wall := time.Since(start)
		var slowest time.Duration
		for _, d := range res {
			if d.Err != nil {
				b.Fatal(d.Err)
			}
			slowest = max(slowest, d.Elapsed)
		}
		ratio += float64(wall) / float64(slowest)
	}
	b.ReportMetric(ratio/float64(b.N), "x-slowest")
}

// A discovery's result and its place among the servers running at once are
// released as soon as tools/list answers, not once the process has exited
// (issue 13: a server gets stopGrace to exit, which every first call and
// every `mcpc tools` slot waited out). With DiscoverOptions.Reap holding
// the stops, Discover returns while both processes still run, although
// only one server may run at a time; each stop then ends its process and
// removes its workspace.
func TestDiscoverReleasesBeforeStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	workspaces := map[string]string{}
	target := func(name string) Target {
		pidFile := filepath.Join(dir, name+".pid")
		return Target{Server: name, Spec: func(ws string) (LaunchSpec, error) {
			mu.Lock()
			workspaces[name] = ws
			mu.Unlock()
			// -linger: the server would take an hour to exit on its own.
			return LaunchSpec{Server: name, Command: testBin, Args: []string{"-tools", name, "-linger", "1h", "-pidfile", pidFile},
				Env: []string{"PATH=" + os.Getenv("PATH")}, StartupTimeout: testservers.Patient}, nil
		}}
	}
	var stops []func()
	res := Discover(context.Background(), []Target{target("a"), target("b")}, DiscoverOptions{Concurrency: 1,
		Reap: func(stop func()) { stops = append(stops, stop) }}) // serialized: one worker
	if len(stops) != 2 {
		t.Fatalf("%d stops handed to Reap, want 2", len(stops))
	}
	for _, d := range res {
		pid := testservers.ReadPid(t, filepath.Join(dir, d.Server+".pid"))
		if d.Err != nil || !slices.Equal(toolNames(d), []string{d.Server}) {
			t.Errorf("%s: %v %v", d.Server, toolNames(d), d.Err)
		}
		if !testservers.Alive(pid) || !fileExists(workspaces[d.Server]) {
			t.Errorf("%s: process %d alive %v, workspace there %v: Discover stopped it itself", d.Server, pid,
				testservers.Alive(pid), fileExists(workspaces[d.Server]))
		}
	}
	for i, stop := range stops {
		stop()
		name := res[i].Server
		if pid := testservers.ReadPid(t, filepath.Join(dir, name+".pid")); testservers.Alive(pid) {
			t.Errorf("%s: process %d still runs after its stop", name, pid)
		}
		if fileExists(workspaces[name]) {
			t.Errorf("%s: workspace %s left after its stop", name, workspaces[name])
		}
	}
}

// Without DiscoverOptions.Reap, the stops run in the background, and
// Discover still returns only once every process is reaped and every
// workspace removed.
func TestDiscoverReapsBeforeReturn(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	var mu sync.Mutex
	var workspaces []string
	var targets []Target
	for i := range 3 {
		name := fmt.Sprintf("s%d", i)
		targets = append(targets, Target{Server: name, Spec: func(ws string) (LaunchSpec, error) {
			mu.Lock()
			workspaces = append(workspaces, ws)
			mu.Unlock()
			return LaunchSpec{Server: name, Command: testBin, Args: []string{"-linger", "1h", "-pidfile", filepath.Join(dir, name)},
				Env: []string{"PATH=" + os.Getenv("PATH"), leakMarkerVar + "=" + marker}, StartupTimeout: testservers.Patient}, nil
		}})
	}
	for _, d := range Discover(context.Background(), targets, DiscoverOptions{Concurrency: 2}) {
		if d.Err != nil {
			t.Errorf("%s: %v", d.Server, d.Err)
		}
		if pid := testservers.ReadPid(t, filepath.Join(dir, d.Server)); testservers.Alive(pid) {
			t.Errorf("%s: process %d still runs after Discover returned", d.Server, pid)
		}
	}
	for _, ws := range workspaces {
		if fileExists(ws) {
			t.Errorf("workspace %s left after Discover returned", ws)
		}
	}
}

// A host publishes a discovery's tools without waiting for the discovery's
// process to exit; the process is stopped in the background, and Close
// waits for that.
func TestHostReapsDiscoveryOnClose(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	h, err := NewHost(testPlan(testServer("srv", "-tools", "echo", "-linger", "1h", "-pidfile", pidFile)),
		HostOptions{Env: testEnv(marker)})
	if err != nil {
		t.Fatal(err)
	}
	chat, err := h.Chat("c", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tools, err := chat.Tools(context.Background())
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %v, %v", tools, err)
	}
	pid := testservers.ReadPid(t, pidFile) // the discovery's: the chat started none
	h.Close()
	if testservers.Alive(pid) {
		t.Errorf("the discovery's process %d still runs after Close", pid)
	}
}
