package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testmain"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// The Playwright preset end to end (seed 000's headline server): the real
// @playwright/mcp with Debian's chromium (its headless shell), through mcpc
// run --http.

const (
	// playwrightPackage is the preset's pinned package (compile's
	// DefaultPlaywrightPackage).
	playwrightPackage = "@playwright/mcp@0.0.82"
	// systemChromium is the headless Chromium the preset's server runs.
	systemChromium = testservers.HeadlessChromium
)

// needPlaywright ends the test unless chromium and npx are there: skipped
// (with the reason in the binary's summary), or failed with
// MCPC_REQUIRE_BROWSER=1 or MCPC_REQUIRE_NPM=1 (CI). It returns the PLAYWRIGHT_COMMAND
// to use: the package's own bin when node_modules has it, else "" (the
// preset's npx -y <Package>, whose download it does first, so that the
// preset's 120 s startup timeout measures a start, not a download).
func needPlaywright(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if _, err := os.Stat(systemChromium); err != nil {
		if testservers.RequireBrowser() || testservers.RequireNPM() {
			t.Fatalf("the Playwright preset needs %s (apt-get install chromium-headless-shell): %v", systemChromium, err)
		}
		testmain.Skip(t, "no "+systemChromium+": apt-get install chromium-headless-shell")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		if testservers.RequireNPM() {
			t.Fatalf("the Playwright preset needs npx: %v", err)
		}
		testmain.Skip(t, "no npx: install Node.js 22")
	}
	if bin := filepath.Join(testservers.Root(), "node_modules", ".bin", "playwright-mcp"); fileExists(bin) {
		return bin
	}
	if out, err := exec.Command(npx, "-y", playwrightPackage, "--help").CombinedOutput(); err != nil {
		t.Fatalf("npx -y %s: %v\n%s", playwrightPackage, err, out)
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// pages is a site on 127.0.0.1 for the browser: /page/NAME shows NAME,
// /login/NAME sets a cookie that lasts, /whoami shows the cookie it got.
func pages(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		fmt.Fprintf(w, "<!doctype html><title>Page %s</title><h1>Hello from %s</h1>", name, name)
	})
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/login/{name}", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "who", Value: r.PathValue("name"), Path: "/", MaxAge: 3600})
		fmt.Fprint(w, "<!doctype html><title>Login</title><h1>logged in</h1>")
	})
	mux.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		who := "nobody"
		if c, err := r.Cookie("who"); err == nil {
			who = c.Value
		}
		fmt.Fprintf(w, "<!doctype html><title>cookie says %s</title><h1>cookie says %s</h1>", who, who)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// toolResult calls a tool and returns its text and whether it is an error
// result.
func toolResult(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return testservers.TextOf(res), res.IsError
}

func mustTool(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := toolResult(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s %v: error result: %s", tool, args, text)
	}
	return text
}

func TestPlaywrightPresetEndToEnd(t *testing.T) {
	command := needPlaywright(t)
	marker, bin := processTest(t)
	site := pages(t)

	// The preset as an operator turns it on; the browser is Debian's, and
	// chromium's sandbox needs user namespaces that a root CI lacks.
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	args := []string{"plan", "--clean-env", "--agent-dir", dir, "-o", planFile, "--env", "PLAYWRIGHT_ENABLED=true",
		"--env", "PLAYWRIGHT_EXTRA_ARGS=--executable-path " + systemChromium + " --no-sandbox"}
	if command != "" {
		args = append(args, "--env", "PLAYWRIGHT_COMMAND="+command)
	}
	if code, _, stderr := run(t, args...); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	root := t.TempDir()
	const admin = "playwright-test-admin-token"
	cmd, base, stderr := startRunHTTP(t, bin, "--plan", planFile, "--workspace-root", root, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", "HOME="+os.Getenv("HOME"), "--env", marker,
		"--env", "ADMIN="+admin, "--admin-token-env", "ADMIN")
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("mcpc run: %v\n%s", err, stderr.String())
		}
	})
	if !strings.Contains(stderr.String(), "MCP: playwright enabled (headless, chromium)") {
		t.Errorf("no Playwright line:\n%s", stderr.String())
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	connect := func(id string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: base + "/chats/" + id + "/mcp", HTTPClient: cmd.client(tr)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	chats := map[string]*mcp.ClientSession{"a": connect("a"), "b": connect("b")}

	// Two chats browse at the same time, each in its own browser.
	var wg sync.WaitGroup
	for id, cs := range chats {
		wg.Go(func() {
			text, isErr := toolResult(t, cs, "browser_navigate", map[string]any{"url": site + "/page/" + id})
			if isErr || !strings.Contains(text, "Page Title: Page "+id) {
				t.Errorf("chat %s: navigate: %s", id, text)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for id, cs := range chats {
		other := map[string]string{"a": "b", "b": "a"}[id]
		snap := snapshot(t, filepath.Join(root, id), mustTool(t, cs, "browser_snapshot", nil))
		if !strings.Contains(snap, "Hello from "+id) || strings.Contains(snap, "Hello from "+other) {
			t.Errorf("chat %s: snapshot:\n%s", id, snap)
		}
		tabs := mustTool(t, cs, "browser_tabs", map[string]any{"action": "list"})
		if !strings.Contains(tabs, "/page/"+id) || strings.Contains(tabs, "/page/"+other) {
			t.Errorf("chat %s sees other tabs:\n%s", id, tabs)
		}
	}

	// Output files land in the workspace's browser/: the snapshots above
	// (snapshot reads them there), and a screenshot saved as the seed
	// tells the agent to (filename "browser/<name>.png"; a relative name
	// is relative to the server's directory, the workspace).
	mustTool(t, chats["a"], "browser_take_screenshot", map[string]any{"filename": "browser/shot.png"})
	if fi, err := os.Stat(filepath.Join(root, "a", "browser", "shot.png")); err != nil || fi.Size() == 0 {
		t.Errorf("the screenshot is not in the workspace's browser/: %v", err)
	}

	// The chat's profile survives a restart of its server.
	a := chats["a"]
	mustTool(t, a, "browser_navigate", map[string]any{"url": site + "/login/alice"})
	// The browser writes its cookies to the profile when it closes; a
	// server that is stopped gets 500 ms before its group is killed.
	mustTool(t, a, "browser_close", nil)
	restart(t, base, admin, "a")
	if text := mustTool(t, a, "browser_navigate", map[string]any{"url": site + "/whoami"}); !strings.Contains(text, "Page Title: cookie says alice") {
		t.Errorf("the profile did not survive the restart:\n%s", text)
	}
	if text := mustTool(t, chats["b"], "browser_navigate", map[string]any{"url": site + "/whoami"}); !strings.Contains(text, "Page Title: cookie says nobody") {
		t.Errorf("chat b sees chat a's profile:\n%s", text)
	}
	if !fileExists(filepath.Join(root, "a", ".volcanic", "browser-profile")) {
		t.Error("no profile in the workspace's .volcanic/browser-profile")
	}

	// The browser dies, its server lives on (chromium runs in a session of
	// its own): the call says the browser state was lost, and the next
	// call gets a new browser.
	pid := serverPid(t, base, admin, "a", "playwright")
	browsers := browserPids(pid)
	if len(browsers) == 0 {
		t.Fatalf("no chromium under the server %d", pid)
	}
	for _, b := range browsers {
		syscall.Kill(b, syscall.SIGKILL)
	}
	// Which the next call meets is a race inside @playwright/mcp: the dead
	// browser (an error mcpc rewords), or, when the server noticed the
	// death first, a new empty browser (about:blank). Both lose the state;
	// only the first can be worded, and neither may leave the chat broken.
	text, isErr := toolResult(t, a, "browser_snapshot", nil)
	worded := isErr && strings.Contains(text, "The browser of MCP server playwright closed or died") && strings.HasSuffix(text, "browser state was lost.")
	fresh := !isErr && strings.Contains(text, "Page URL: about:blank")
	if !worded && !fresh {
		t.Errorf("after the browser was killed: %v %q", isErr, text)
	}
	if text := mustTool(t, a, "browser_navigate", map[string]any{"url": site + "/page/again"}); !strings.Contains(text, "Page Title: Page again") {
		t.Errorf("after the browser was killed, a new one: %s", text)
	}

	// The server dies: the death message names the lost browser state, and
	// the next call starts a new server.
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	text, isErr = toolResult(t, a, "browser_snapshot", nil)
	if !isErr || !strings.Contains(text, "MCP server playwright exited") || !strings.HasSuffix(text, "It restarts on the next call; browser state was lost.") {
		t.Errorf("after the server was killed: %v %q", isErr, text)
	}
	if text := mustTool(t, a, "browser_navigate", map[string]any{"url": site + "/page/third"}); !strings.Contains(text, "Page Title: Page third") {
		t.Errorf("after the server was killed, a new one: %s", text)
	}
}

// snapshotRef is how @playwright/mcp refers to a snapshot it saved.
var snapshotRef = regexp.MustCompile(`\[Snapshot\]\((browser/[^)]+\.yml)\)`)

// snapshot returns the page snapshot of a tool's text: in the text, or in
// the file of the workspace ws's browser/ that the text names.
func snapshot(t *testing.T, ws, text string) string {
	t.Helper()
	m := snapshotRef.FindStringSubmatch(text)
	if m == nil {
		return text
	}
	b, err := os.ReadFile(filepath.Join(ws, m[1]))
	if err != nil {
		t.Fatalf("the snapshot %s is not in the workspace: %v", m[1], err)
	}
	return string(b)
}

// restart restarts a chat's server through the admin endpoint.
func restart(t *testing.T, base, token, chat string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/chats/"+chat+"/servers/playwright/restart", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("restart: %d", resp.StatusCode)
	}
}

// serverPid is the pid (and process group) of a chat's running server.
func serverPid(t *testing.T, base, token, chat, server string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/chats/"+chat+"/servers/"+server, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d struct {
		Pid int `json:"pid"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || d.Pid <= 0 {
		t.Fatalf("no pid of %s in chat %s: %v", server, chat, err)
	}
	return d.Pid
}

// browserPids are the chromium browser processes (not their helpers)
// started under the process root, wherever their session is.
func browserPids(root int) []int {
	entries, _ := os.ReadDir("/proc")
	parent, comm := map[int]int{}, map[int]string{}
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st := string(b)
		i := strings.LastIndex(st, ")")
		var pid, ppid int
		fmt.Sscan(e.Name(), &pid)
		fmt.Sscan(strings.Fields(st[i+2:])[1], &ppid)
		parent[pid], comm[pid] = ppid, st[strings.Index(st, "(")+1:i]
	}
	under := func(p int) bool {
		for ; p > 1; p = parent[p] {
			if p == root {
				return true
			}
		}
		return false
	}
	var out []int
	for pid, c := range comm {
		if under(pid) && strings.Contains(c, "chrom") && !strings.Contains(comm[parent[pid]], "chrom") {
			out = append(out, pid)
		}
	}
	return out
}
