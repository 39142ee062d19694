package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// craftbotWatchSetup writes an mcp_config.json with the stdio servers
// "one" (echo, env-sha256; VAL from the config file; each start logged in
// starts) and "two" (echo), and its plan.
func craftbotWatchSetup(t *testing.T) (dir, cfg, planFile, starts string) {
	t.Helper()
	useRuntimeDir(t)
	dir = t.TempDir()
	starts = filepath.Join(dir, "starts")
	b, _ := json.Marshal(map[string]any{"auto_connect": true, "mcp_servers": []map[string]any{
		{"name": "one", "transport": "stdio", "command": testServer, "args": []string{"-tools", "echo,env-sha256", "-start-log", starts},
			"env": map[string]string{"VAL": runCanary + "-first"}, "enabled": true},
		{"name": "two", "transport": "stdio", "command": testServer, "args": []string{"-tools", "echo"}, "enabled": true},
	}})
	cfg = write(t, dir, "app/config/mcp_config.json", string(b))
	planFile = filepath.Join(dir, "craftbot-plan.json")
	if code, _, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env", "--config", cfg, "-o", planFile); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	return dir, cfg, planFile, starts
}

func sortedToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	names := toolNames(t, cs)
	slices.Sort(names)
	return names
}

// connectedToolNames lists the tools once auto_connect has connected n
// servers' worth of them: the servers connect in the background, and each
// one's tools arrive with notifications/tools/list_changed (changed), so a
// short list waits for the next notification, never for a time.
func connectedToolNames(t *testing.T, cs *mcp.ClientSession, changed <-chan struct{}, n int) []string {
	t.Helper()
	for {
		got := sortedToolNames(t, cs)
		if len(got) >= n {
			return got
		}
		<-changed
	}
}

func drain(ch <-chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

func startCount(t *testing.T, starts string) int {
	t.Helper()
	data, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

func sha256Text(v string) string {
	return fmt.Sprintf("sha256:%x len:%d", sha256.Sum256([]byte(v)), len(v))
}

// mcpc run --watch with a craftbot plan takes the edits of its
// mcp_config.json as CraftBot does: `mcpc config disable` takes a server's
// actions away at once (a call fails, clients are told), `enable` brings
// them back, `env` restarts the server with its new value though the plan
// is unchanged, and an edit that does not compile is logged with its
// position (no env value shown) while the running plan stays.
func TestRunWatchCraftbotConfigEdits(t *testing.T) {
	marker := leakMarker(t)
	dir, cfg, planFile, starts := craftbotWatchSetup(t)
	changed := make(chan struct{}, 1)
	reloads := make(chan error, 10)
	cs, wait := runStdioWatching(t, changed, reloads, "--plan", planFile, "--workspace", filepath.Join(dir, "ws"), "--clean-env", "--env", marker)
	all := []string{"mcp_one_echo", "mcp_one_env-sha256", "mcp_two_echo"}
	if got := connectedToolNames(t, cs, changed, len(all)); !slices.Equal(got, all) {
		t.Fatalf("tools %v, want %v", got, all)
	}
	if got, want := callText(t, cs, "mcp_one_env-sha256", map[string]any{"name": "VAL"}), sha256Text(runCanary+"-first"); got != want {
		t.Fatalf("VAL: %q, want %q", got, want)
	}
	drain(changed)
	config := func(args ...string) {
		t.Helper()
		if code, _, stderr := run(t, append(append([]string{"config"}, args...), "--config", cfg)...); code != ExitOK {
			t.Fatalf("mcpc config %v: exit %d\n%s", args, code, stderr)
		}
		if err := testservers.Recv(t, "the reload of mcpc config "+args[0], reloads); err != nil {
			t.Fatalf("the reload of mcpc config %v: %v", args, err)
		}
	}

	config("disable", "one")
	testservers.Recv(t, "notifications/tools/list_changed after disable", changed)
	if got, want := sortedToolNames(t, cs), []string{"mcp_two_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools after disable %v, want %v", got, want)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_one_echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "mcp_one_echo") {
		t.Fatalf("a call to the disabled server's action: %v %+v", err, res)
	}

	config("enable", "one")
	testservers.Recv(t, "notifications/tools/list_changed after enable", changed)
	if got := sortedToolNames(t, cs); !slices.Equal(got, all) {
		t.Fatalf("tools after enable %v, want %v", got, all)
	}
	if got := callText(t, cs, "mcp_one_echo", map[string]any{"text": "back"}); got != "back" {
		t.Fatalf("mcp_one_echo after enable: %q", got)
	}

	before := startCount(t, starts)
	config("env", "one", "VAL", runCanary+"-second")
	if got, want := callText(t, cs, "mcp_one_env-sha256", map[string]any{"name": "VAL"}), sha256Text(runCanary+"-second"); got != want {
		t.Fatalf("VAL after mcpc config env: %q, want %q (the new value)", got, want)
	}
	if n := startCount(t, starts); n != before+1 {
		t.Errorf("server one started %d times after mcpc config env, want once", n-before)
	}

	// A broken edit: the value stands in the excerpt's line, and must not show.
	replaceFile(t, cfg, []byte(`{"auto_connect": true, "mcp_servers": [{"name": "one", "env": {"VAL": "`+runCanary+`-third"}, ]}`))
	if err := testservers.Recv(t, "the broken config's reload", reloads); err == nil || !strings.Contains(err.Error(), "does not compile") {
		t.Fatalf("a broken config's reload: %v", err)
	}
	if got := callText(t, cs, "mcp_one_echo", map[string]any{"text": "still"}); got != "still" {
		t.Fatalf("after a broken edit, mcp_one_echo: %q", got)
	}
	if got := sortedToolNames(t, cs); !slices.Equal(got, all) {
		t.Fatalf("tools after a broken edit %v, want %v", got, all)
	}
	code, stderr := wait()
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"watching " + planFile + " and its config file " + cfg, "plan reloaded: stopped one",
		"plan reloaded: started one", "plan reloaded: restarted one", cfg + ":1:", "does not compile", "the running plan stays"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, runCanary) {
		t.Errorf("an env value shows on stderr:\n%s", stderr)
	}
}

// A storm of 100 saves of an edited mcp_config.json under mcpc run --watch
// applies it once: however the debounce groups the saves, a reload that
// finds the bytes it applied already does nothing.
func TestRunWatchCraftbotStormAppliesOnce(t *testing.T) {
	marker := leakMarker(t)
	dir, cfg, planFile, _ := craftbotWatchSetup(t)
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
	cs, wait := runStdioWatchingHooked(t, changed, "--plan", planFile, "--workspace", filepath.Join(dir, "ws"), "--clean-env", "--env", marker)
	if got := connectedToolNames(t, cs, changed, 3); !slices.Equal(got, []string{"mcp_one_echo", "mcp_one_env-sha256", "mcp_two_echo"}) {
		t.Fatalf("tools %v", got)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["mcp_servers"].([]any)[0].(map[string]any)["enabled"] = false
	next, _ := json.Marshal(doc)
	for range 100 {
		replaceFile(t, cfg, next)
	}
	testservers.Recv(t, "the storm's reload", firstApply)
	if got := sortedToolNames(t, cs); !slices.Equal(got, []string{"mcp_two_echo"}) {
		t.Fatalf("tools after the storm %v", got)
	}
	code, stderr := wait() // the watcher has ended: no reload is left to come
	mu.Lock()
	defer mu.Unlock()
	if code != ExitOK || applied != 1 {
		t.Fatalf("exit %d; %d of %d reloads applied a plan, want 1\n%s", code, applied, reloads, stderr)
	}
	if n := strings.Count(stderr, "plan reloaded:"); n != 1 {
		t.Errorf("%d reloads logged, want one:\n%s", n, stderr)
	}
}

// A plan file edit alone is applied as written under mcpc run --watch with
// a craftbot plan (its env values still read from the config file); a plan
// that names another config file is refused and the running plan stays.
func TestRunWatchCraftbotPlanFileEdit(t *testing.T) {
	marker := leakMarker(t)
	dir, cfg, planFile, _ := craftbotWatchSetup(t)
	original, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Plan B: the same config file with "two" disabled; the file is then
	// put back, so that only the plan file differs.
	if code, _, stderr := run(t, "config", "disable", "two", "--config", cfg); code != ExitOK {
		t.Fatalf("mcpc config disable: exit %d\n%s", code, stderr)
	}
	planB := filepath.Join(dir, "plan-b.json")
	if code, _, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env", "--config", cfg, "-o", planB); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	replaceFile(t, cfg, original)
	other := write(t, dir, "other/mcp_config.json", string(original))
	planOther := filepath.Join(dir, "plan-other.json")
	if code, _, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env", "--config", other, "-o", planOther); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}

	changed := make(chan struct{}, 1)
	reloads := make(chan error, 10)
	cs, wait := runStdioWatching(t, changed, reloads, "--plan", planFile, "--workspace", filepath.Join(dir, "ws"), "--clean-env", "--env", marker)
	all := []string{"mcp_one_echo", "mcp_one_env-sha256", "mcp_two_echo"}
	if got := connectedToolNames(t, cs, changed, len(all)); !slices.Equal(got, all) {
		t.Fatalf("tools %v, want %v", got, all)
	}
	drain(changed)

	data, err := os.ReadFile(planOther)
	if err != nil {
		t.Fatal(err)
	}
	replaceFile(t, planFile, data)
	if err := testservers.Recv(t, "the other config's plan reload", reloads); err == nil || !strings.Contains(err.Error(), "names the config file "+other) {
		t.Fatalf("a plan naming another config file: %v", err)
	}
	data, err = os.ReadFile(planB)
	if err != nil {
		t.Fatal(err)
	}
	replaceFile(t, planFile, data)
	if err := testservers.Recv(t, "plan B's reload", reloads); err != nil {
		t.Fatalf("plan B's reload: %v", err)
	}
	testservers.Recv(t, "notifications/tools/list_changed", changed)
	if got, want := sortedToolNames(t, cs), []string{"mcp_one_echo", "mcp_one_env-sha256"}; !slices.Equal(got, want) {
		t.Fatalf("tools after plan B %v, want %v", got, want)
	}
	if got, want := callText(t, cs, "mcp_one_env-sha256", map[string]any{"name": "VAL"}), sha256Text(runCanary+"-first"); got != want {
		t.Errorf("VAL: %q, want %q", got, want)
	}
	code, stderr := wait()
	if code != ExitOK || !strings.Contains(stderr, "plan reloaded: stopped two") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// A config file edit that changes nothing that runs is said so as a
// volcanic plan's is: "… changed, nothing to do for the running servers"
// (docs/decisions/0051-one-mcpc-run.md).
func TestRunWatchCraftbotEditChangingNothing(t *testing.T) {
	marker := leakMarker(t)
	dir, cfg, planFile, _ := craftbotWatchSetup(t)
	changed := make(chan struct{}, 1)
	reloads := make(chan error, 10)
	cs, wait := runStdioWatching(t, changed, reloads, "--plan", planFile, "--workspace", filepath.Join(dir, "ws"), "--clean-env", "--env", marker)
	if got := connectedToolNames(t, cs, changed, 3); len(got) != 3 {
		t.Fatalf("tools %v", got)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	indented, _ := json.MarshalIndent(doc, "", "    ")
	replaceFile(t, cfg, indented)
	if err := testservers.Recv(t, "the reload of the reformatted config", reloads); err != nil {
		t.Fatal(err)
	}
	code, stderr := wait()
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if want := "mcpc: reload: " + cfg + " changed, nothing to do for the running servers"; !strings.Contains(stderr, want) || strings.Contains(stderr, "no server changed") {
		t.Errorf("stderr lacks %q (or says no server changed):\n%s", want, stderr)
	}
}
