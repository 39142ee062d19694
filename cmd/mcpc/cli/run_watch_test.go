package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// runStdioWatching runs `mcpc run --stdio --watch` in-process with a
// client that reports notifications/tools/list_changed on changed, and
// reports each reload on reloads.
func runStdioWatching(t *testing.T, changed chan<- struct{}, reloads chan<- error, args ...string) (*mcp.ClientSession, func() (int, string)) {
	t.Helper()
	testHookReloaded = func(_ bool, err error) { reloads <- err }
	t.Cleanup(func() { testHookReloaded = nil })
	return runStdioWatchingHooked(t, changed, args...)
}

// runStdioWatchingHooked is runStdioWatching with testHookReloaded set by
// the caller.
func runStdioWatchingHooked(t *testing.T, changed chan<- struct{}, args ...string) (*mcp.ClientSession, func() (int, string)) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		code := Run(append([]string{"mcpc", "run", "--stdio", "--watch"}, args...), inR, outW, &stderr)
		outW.Close()
		inR.Close()
		done <- code
	}()
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(),
		&mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		inW.Close()
		code := <-done
		t.Fatalf("connect: %v (exit %d)\n%s", err, code, stderr.String())
	}
	var once sync.Once
	var code int
	wait := func() (int, string) {
		once.Do(func() {
			cs.Close()
			code = <-done
		})
		return code, stderr.String()
	}
	t.Cleanup(func() { wait() })
	return cs, wait
}

// replaceFile writes path as `mcpc plan -o` and editors do: a temporary
// file renamed over it.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// mcpc run --watch applies an edited plan to the running gateway: a
// removed server's tool fails at once and leaves the list, an added one is
// served, the client is told; a plan that is not valid is logged with its
// positioned diagnostic and the running plan stays.
func TestRunWatchAppliesPlanEdits(t *testing.T) {
	marker := leakMarker(t)
	pids := t.TempDir()
	planFile := compilePlan(t, map[string]map[string]any{
		"one": {"Command": testServer, "Args": []string{"-tools", "echo", "-pidfile", filepath.Join(pids, "one")}, "ToolPrefix": "one_"},
		"two": {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "two_"},
	})
	next := compilePlan(t, map[string]map[string]any{
		"two":   {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "two_"},
		"three": {"Command": testServer, "Args": []string{"-tools", "echo,env"}, "ToolPrefix": "three_"},
	})
	nextData, err := os.ReadFile(next)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	reloads := make(chan error, 10)
	ws := filepath.Join(t.TempDir(), "chat")
	cs, wait := runStdioWatching(t, changed, reloads, "--plan", planFile, "--workspace", ws, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got, want := toolNames(t, cs), []string{"one_echo", "two_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	if got := callText(t, cs, "one_echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("one_echo: %q", got)
	}
	onePid := readPid(t, filepath.Join(pids, "one"))
	select {
	case <-changed: // the first listing's, if any
	default:
	}

	// A broken edit: logged with its position, nothing changes.
	replaceFile(t, planFile, []byte("{\n  \"planVersion\": \n"))
	if err := testservers.Recv(t, "the broken plan's reload", reloads); err == nil || !strings.Contains(err.Error(), "the running plan stays") {
		t.Fatalf("a broken plan's reload: %v", err)
	}
	if got := callText(t, cs, "one_echo", map[string]any{"text": "still"}); got != "still" {
		t.Fatalf("after a broken edit, one_echo: %q", got)
	}

	replaceFile(t, planFile, nextData)
	if err := testservers.Recv(t, "the new plan's reload", reloads); err != nil {
		t.Fatalf("reload: %v", err)
	}
	testservers.Recv(t, "notifications/tools/list_changed", changed)
	if alive(onePid) {
		t.Errorf("the removed server's process %d still runs", onePid)
	}
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "one_echo", Arguments: map[string]any{"text": "x"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "one_echo") {
		t.Errorf("a call to the removed server's tool: %v", err)
	}
	if got, want := toolNames(t, cs), []string{"three_echo", "three_env", "two_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools after the reload %v, want %v", got, want)
	}
	if got := callText(t, cs, "three_echo", map[string]any{"text": "new"}); got != "new" {
		t.Errorf("three_echo: %q", got)
	}
	code, stderr := wait()
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"watching " + planFile, planFile + ":3:1", "is not a valid plan", "the running plan stays",
		"plan reloaded: stopped one; started three"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// A storm of 100 saves of a new plan applies it once: however the
// debounce groups the saves (internal/watch proves it groups them on a
// fake clock), a reload that finds the running plan changes nothing, and
// the removed server's process is stopped once.
func TestRunWatchStormAppliesOnce(t *testing.T) {
	marker := leakMarker(t)
	planFile := compilePlan(t, map[string]map[string]any{
		"one": {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "one_"},
		"two": {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "two_"},
	})
	next, err := os.ReadFile(compilePlan(t, map[string]map[string]any{
		"two": {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "two_"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	applied, reloads := 0, 0
	firstApply := make(chan struct{})
	testHookReloaded = func(ok bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		reloads++
		if err != nil {
			t.Errorf("reload: %v", err)
		}
		if ok {
			applied++
			if applied == 1 {
				close(firstApply)
			}
		}
	}
	t.Cleanup(func() { testHookReloaded = nil })
	changed := make(chan struct{}, 1)
	cs, wait := runStdioWatchingHooked(t, changed, "--plan", planFile, "--workspace", filepath.Join(t.TempDir(), "chat"),
		"--clean-env", "--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"one_echo", "two_echo"}) {
		t.Fatalf("tools %v", got)
	}
	for range 100 {
		replaceFile(t, planFile, next)
	}
	testservers.Recv(t, "the storm's reload", firstApply)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"two_echo"}) {
		t.Fatalf("tools after the storm %v", got)
	}
	code, stderr := wait() // the watcher has ended: no reload is left to come
	mu.Lock()
	defer mu.Unlock()
	if code != ExitOK || applied != 1 {
		t.Fatalf("exit %d; %d of %d reloads applied a change, want 1\n%s", code, applied, reloads, stderr)
	}
	if n := strings.Count(stderr, "plan reloaded: stopped one"); n != 1 {
		t.Errorf("the reload is logged %d times, want once:\n%s", n, stderr)
	}
}

// volcanicSourcesSetup writes appsettings.json with the servers given and
// an agent directory whose settings.json holds server "two", and compiles
// them to a plan.
func volcanicSourcesSetup(t *testing.T, servers map[string]map[string]any) (app, planFile string) {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(map[string]any{"Mcp": map[string]any{"Servers": servers}})
	app = write(t, dir, "appsettings.json", string(b))
	b, _ = json.Marshal(map[string]any{"mcpServers": map[string]any{
		"two": map[string]any{"command": testServer, "args": []string{"-tools", "echo"}, "toolPrefix": "two_"}}})
	write(t, dir, "agent/settings.json", string(b))
	planFile = filepath.Join(dir, "plan.json")
	if code, _, stderr := run(t, "plan", "--clean-env", "--agent-dir", filepath.Join(dir, "agent"), "--appsettings", app, "-o", planFile); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	return app, planFile
}

// mcpc run --watch on a plan that its sources reproduce watches them too:
// an edit of appsettings.json is compiled and applied (a removed server's
// tool fails at once, an added one is served, clients are told), and an
// edit that does not compile is logged with its position while the running
// plan stays.
func TestRunWatchRecompilesVolcanicSources(t *testing.T) {
	marker := leakMarker(t)
	app, planFile := volcanicSourcesSetup(t, map[string]map[string]any{
		"one": {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "one_"},
	})
	changed := make(chan struct{}, 1)
	reloads := make(chan error, 10)
	ws := filepath.Join(t.TempDir(), "chat")
	cs, wait := runStdioWatching(t, changed, reloads, "--plan", planFile, "--workspace", ws, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got, want := toolNames(t, cs), []string{"one_echo", "two_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	drain(changed)

	replaceFile(t, app, []byte("{\"Mcp\": {\"Servers\": {\n  \"one\": {\"Command\": \n}}}"))
	if err := testservers.Recv(t, "the broken source's reload", reloads); err == nil || !strings.Contains(err.Error(), "do not compile") {
		t.Fatalf("a broken source's reload: %v", err)
	}
	if got := callText(t, cs, "one_echo", map[string]any{"text": "still"}); got != "still" {
		t.Fatalf("after a broken edit, one_echo: %q", got)
	}

	b, _ := json.Marshal(map[string]any{"Mcp": map[string]any{"Servers": map[string]any{
		"three": map[string]any{"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "three_"}}}})
	replaceFile(t, app, b)
	if err := testservers.Recv(t, "the edited source's reload", reloads); err != nil {
		t.Fatalf("reload: %v", err)
	}
	testservers.Recv(t, "notifications/tools/list_changed", changed)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "one_echo", Arguments: map[string]any{"text": "x"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "one_echo") {
		t.Errorf("a call to the removed server's tool: %v", err)
	}
	if got, want := toolNames(t, cs), []string{"three_echo", "two_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools after the reload %v, want %v", got, want)
	}
	if got := callText(t, cs, "three_echo", map[string]any{"text": "new"}); got != "new" {
		t.Errorf("three_echo: %q", got)
	}
	code, stderr := wait()
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"watching " + planFile + " and its sources " + app + ", ", app + ":3:1",
		"do not compile", "the running plan stays", "plan reloaded: stopped one; started three"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// A plan that its sources no longer reproduce (a source changed after
// mcpc plan) is followed by its file only, and the log says why.
func TestRunWatchSourcesNotReproducingThePlan(t *testing.T) {
	marker := leakMarker(t)
	app, planFile := volcanicSourcesSetup(t, map[string]map[string]any{
		"one": {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "one_"},
	})
	b, _ := json.Marshal(map[string]any{"Mcp": map[string]any{"Servers": map[string]any{}}})
	replaceFile(t, app, b)
	changed := make(chan struct{}, 1)
	reloads := make(chan error, 10)
	cs, wait := runStdioWatching(t, changed, reloads, "--plan", planFile, "--workspace", filepath.Join(t.TempDir(), "chat"),
		"--clean-env", "--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got, want := toolNames(t, cs), []string{"one_echo", "two_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	code, stderr := wait()
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"its sources compile here to another plan than --plan " + planFile, "only the plan file is watched",
		"watching " + planFile + ": a change"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// The --plan file replaced by one unreadable thing after another (a
// directory, a named pipe, a file over the size cap): each change of the
// reason is logged once, the same reason again is not, and the running
// plan stays until a readable plan comes back.
func TestRunWatchLogsEachUnreadableReason(t *testing.T) {
	marker := leakMarker(t)
	useRuntimeDir(t) // its status socket
	planFile := compilePlan(t, map[string]map[string]any{"one": {"Command": testServer, "Args": []string{"-tools", "echo"}}})
	planData, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	reloads := make(chan error, 10)
	cs, wait := runStdioWatching(t, changed, reloads, "--plan", planFile, "--workspace", filepath.Join(t.TempDir(), "chat"), "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo: %q", got)
	}
	replace := func(make func()) {
		t.Helper()
		if err := os.RemoveAll(planFile); err != nil {
			t.Fatal(err)
		}
		make()
	}
	tooLarge := func(size int64) func() {
		return func() {
			f, err := os.Create(planFile)
			if err == nil {
				err = f.Truncate(size) // sparse: nothing is written
				f.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, step := range []struct {
		what string
		make func()
		want string // "": the reload logs nothing
	}{
		{"a directory", func() { os.Mkdir(planFile, 0o700) }, "it is a directory, not a regular file"},
		{"a named pipe", func() { syscall.Mkfifo(planFile, 0o600) }, "it is a named pipe, not a regular file"},
		{"a file over the cap", tooLarge(inputfile.MaxSize + 1), "it is larger than 16 MiB"},
		{"a larger file over the cap", tooLarge(inputfile.MaxSize + 2), ""},
	} {
		replace(step.make)
		err := testservers.Recv(t, "the reload after "+step.what, reloads)
		switch {
		case step.want == "" && err != nil:
			t.Errorf("%s, the same reason again: logged %v", step.what, err)
		case step.want != "" && (err == nil || !strings.Contains(err.Error(), step.want) || !strings.Contains(err.Error(), "the running plan stays")):
			t.Errorf("%s: reload error %v, want %q", step.what, err, step.want)
		}
		if got := callText(t, cs, "echo", map[string]any{"text": "still"}); got != "still" {
			t.Fatalf("after %s, echo: %q", step.what, got)
		}
	}
	replace(func() { replaceFile(t, planFile, planData) })
	if err := testservers.Recv(t, "the reload of the plan back", reloads); err != nil {
		t.Errorf("the plan back: %v", err)
	}
	code, stderr := wait()
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"it is a directory", "it is a named pipe", "it is larger than 16 MiB", planFile + " changed, nothing to do"} {
		if n := strings.Count(stderr, want); n != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", want, n, stderr)
		}
	}
}

// mcpc run --watch in a deployment whose mcpc.cue sets env and cleanEnv
// takes them as mcpc plan did (run is given none of those flags): the plan
// made there reproduces, its sources are watched, and an edit of one is
// applied.
func TestRunWatchRecompilesWithMcpcCue(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "appsettings.json", fmt.Sprintf(`{"Mcp": {"Servers": {"one": {"Command": %q, "Args": ["-tools", "echo"], "ToolPrefix": "one_"}}}}`, testServer))
	// Server two comes from mcpc.cue's env alone: without it the sources
	// compile to another plan.
	write(t, dir, "mcpc.cue", fmt.Sprintf(`sources: {
	appsettings: ["appsettings.json"]
	cleanEnv: true
	env: ["Mcp__Servers__two__Command=%s", "Mcp__Servers__two__Args__0=-tools", "Mcp__Servers__two__Args__1=echo", "Mcp__Servers__two__ToolPrefix=two_"]
}`, testServer))
	inDir(t, dir)
	if code, _, stderr := run(t, "plan", "-o", "plan.json"); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	home, marker := t.TempDir(), leakMarker(t)
	environ = func() []string { return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), marker} }

	changed := make(chan struct{}, 1)
	reloads := make(chan error, 10)
	cs, wait := runStdioWatching(t, changed, reloads, "--plan", "plan.json", "--workspace", filepath.Join(t.TempDir(), "chat"))
	if got, want := toolNames(t, cs), []string{"one_echo", "two_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	drain(changed)
	replaceFile(t, "appsettings.json", fmt.Appendf(nil, `{"Mcp": {"Servers": {"three": {"Command": %q, "Args": ["-tools", "echo"], "ToolPrefix": "three_"}}}}`, testServer))
	if err := testservers.Recv(t, "the edited source's reload", reloads); err != nil {
		t.Fatalf("reload: %v", err)
	}
	testservers.Recv(t, "notifications/tools/list_changed", changed)
	if got, want := toolNames(t, cs), []string{"three_echo", "two_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools after the reload %v, want %v", got, want)
	}
	code, stderr := wait()
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"watching plan.json and its sources appsettings.json", "plan reloaded: stopped one; started three"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
