package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/internal/golden"
	"github.com/mcpc-dev/mcpc/internal/testmain"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// -update (golden.Update) makes the browser test write the screenshots of
// the README and docs: go test ./cmd/mcpc/ui -run TestBrowser -update.

// systemChromium is the headless Chromium the test drives.
const systemChromium = testservers.HeadlessChromium

// browser is a headless Chromium driven by testdata/driver.cjs
// (playwright-core).
type browser struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

// needBrowser ends the test unless chromium, node and playwright-core are
// there: skipped (with the reason in the binary's summary), or failed with
// MCPC_REQUIRE_BROWSER=1 or MCPC_REQUIRE_NPM=1 (CI), as the Playwright
// preset's test does.
func needBrowser(t *testing.T) (node string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if _, err := os.Stat(systemChromium); err != nil {
		if testservers.RequireBrowser() || testservers.RequireNPM() {
			t.Fatalf("the browser test needs %s (apt-get install chromium-headless-shell): %v", systemChromium, err)
		}
		testmain.Skip(t, "no "+systemChromium+": apt-get install chromium-headless-shell")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if testservers.RequireNPM() {
			t.Fatalf("the browser test needs node: %v", err)
		}
		testmain.Skip(t, "no node: install Node.js 22")
	}
	for _, pkg := range []string{"playwright-core", "axe-core"} {
		if _, err := os.Stat(filepath.Join(testservers.Root(), "node_modules", pkg, "package.json")); err != nil {
			if testservers.RequireNPM() {
				t.Fatalf("the browser test needs %s: run npm ci (%v)", pkg, err)
			}
			testmain.Skip(t, "no node_modules/"+pkg+": run npm ci")
		}
	}
	return node
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	node := needBrowser(t)
	driver := filepath.Join(testservers.Root(), "cmd", "mcpc", "ui", "testdata", "driver.cjs")
	cmd := exec.Command(node, driver, systemChromium)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close() // the driver closes the browser and exits
		if err := cmd.Wait(); err != nil {
			t.Errorf("the browser driver: %v\n%s", err, stderr.String())
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	return &browser{t: t, in: in, out: sc}
}

// answer is the driver's answer to one command.
type answer struct {
	OK      bool     `json:"ok"`
	Error   string   `json:"error"`
	Status  int      `json:"status"`
	URL     string   `json:"url"`
	Text    string   `json:"text"`
	Count   int      `json:"count"`
	Dialogs []string `json:"dialogs"`
}

func (b *browser) do(cmd map[string]any) answer {
	b.t.Helper()
	line, _ := json.Marshal(cmd)
	if _, err := b.in.Write(append(line, '\n')); err != nil {
		b.t.Fatal(err)
	}
	if !b.out.Scan() {
		b.t.Fatalf("the browser driver ended: %v", b.out.Err())
	}
	var a answer
	if err := json.Unmarshal(b.out.Bytes(), &a); err != nil {
		b.t.Fatalf("%v: %s", err, b.out.Text())
	}
	if !a.OK {
		b.t.Fatalf("%v: %s", cmd, a.Error)
	}
	return a
}

func (b *browser) gotoURL(url string) answer {
	return b.do(map[string]any{"op": "goto", "url": url})
}

// login opens the address mcpc ui prints, URL/?token=TOKEN, as its owner
// does; the page answers with a session cookie and the address without the
// token.
func (b *browser) login(p *uiPage) answer {
	b.t.Helper()
	if a := b.gotoURL(p.base + "/"); a.Status != 401 {
		b.t.Fatalf("the page before the token: %d", a.Status)
	}
	return b.gotoURL(p.base + "/?token=" + p.token)
}

func (b *browser) submit(selector string) answer {
	return b.do(map[string]any{"op": "submit", "selector": selector})
}

func (b *browser) fill(selector, value string) {
	b.do(map[string]any{"op": "fill", "selector": selector, "value": value})
}

func (b *browser) text(selector string) string {
	return b.do(map[string]any{"op": "text", "selector": selector}).Text
}

func (b *browser) count(selector string) int {
	return b.do(map[string]any{"op": "count", "selector": selector}).Count
}

func (b *browser) content() string { return b.do(map[string]any{"op": "content"}).Text }

// screenshot writes docs/NAME with -update: the window (1280×800), what
// an operator sees without scrolling.
func (b *browser) screenshot(name string) {
	if *golden.Update {
		b.do(map[string]any{"op": "screenshot", "path": filepath.Join(testservers.Root(), "docs", name)})
	}
}

func (b *browser) click(selector string) answer {
	return b.do(map[string]any{"op": "click", "selector": selector})
}

func (b *browser) press(key string, navigate bool) answer {
	return b.do(map[string]any{"op": "press", "key": key, "navigate": navigate})
}

func (b *browser) focus(selector string) { b.do(map[string]any{"op": "focus", "selector": selector}) }

func (b *browser) typeText(value string) { b.do(map[string]any{"op": "type", "value": value}) }

// focused is the focused element: tag|name|class|text.
func (b *browser) focused() string { return b.do(map[string]any{"op": "focused"}).Text }

func (b *browser) selectOption(selector, value string) {
	b.do(map[string]any{"op": "select", "selector": selector, "value": value})
}

func (b *browser) visible(selector string) int {
	return b.do(map[string]any{"op": "visible", "selector": selector}).Count
}

// waitText waits until the page's script has put want in selector's text.
func (b *browser) waitText(selector, want string) {
	b.do(map[string]any{"op": "waitText", "selector": selector, "value": want})
}

// fits fails the test if the page scrolls sideways at 1280×800.
func (b *browser) fits(what string) {
	b.t.Helper()
	if n := b.do(map[string]any{"op": "overflow"}).Count; n > 0 {
		b.t.Errorf("%s: the page is %d px wider than the 1280 px window", what, n)
	}
}

// accessible runs axe-core on the page and fails the test on a serious or
// critical violation (the others are logged).
func (b *browser) accessible(what string) {
	b.t.Helper()
	a := b.do(map[string]any{"op": "axe", "path": filepath.Join(testservers.Root(), "node_modules", "axe-core", "axe.min.js")})
	for _, v := range strings.Split(a.Text, "\n") {
		switch {
		case v == "":
		case strings.HasPrefix(v, "serious ") || strings.HasPrefix(v, "critical "):
			b.t.Errorf("%s: axe-core: %s", what, v)
		default:
			b.t.Logf("%s: axe-core: %s", what, v)
		}
	}
}

// A CraftBot operator's session in a real browser at 1280×800: the rows
// (no sideways scroll, no serious accessibility violation), search and
// filters by the page's script, Disable by keyboard alone, a value set
// for a listed env key and a key added (in the file, in no page), no env
// form where the host ignores env, a refused add with the file unchanged,
// a stdio server and a websocket one added, and a removal confirmed in
// the script's dialog; each edit writes what mcpc config writes.
func TestBrowserServers(t *testing.T) {
	b := startBrowser(t)
	// A relative --config, as an operator in CraftBot's directory gives it.
	dir := t.TempDir()
	t.Chdir(dir)
	file := filepath.Join("app", "config", "mcp_config.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, readFile(t, filepath.Join(testservers.Root(), "cmd", "mcpc", "ui", "testdata", "mcp_config.json")), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := craftbot.Options{TargetOS: "linux"}
	p := startUI(t, Options{Profile: craftbot.Profile.Name(), Config: file, Craftbot: opts})

	if a := b.login(p); a.Status != 200 || a.URL != p.base+"/" {
		t.Fatalf("the page: %d %s", a.Status, a.URL)
	}
	rows := "#servers tbody tr[data-server]"
	if n := b.count(rows); n != 5 {
		t.Errorf("%d rows, want 5", n)
	}
	for sel, want := range map[string]string{
		`tr[data-server="filesystem"] td.enabled`:      "yes",
		`tr[data-server="filesystem"] .verdict-text`:   "CraftBot starts it at startup",
		`tr[data-server="filesystem"] .desc`:           "Read, write, and manage files and directories",
		`tr[data-server="github"] td.set`:              "code",
		`tr[data-server="github"] .badge.needs`:        "needs config",
		`tr[data-server="sentry"] td.transport`:        "sse",
		`tr[data-server="notes"] .osmark`:              `⚠ command "/Applications/Notes.app/Contents/MacOS/notes-mcp" is a macOS path (/Applications)`,
		`tr[data-server="github"] td.env`:              "GITHUB_PERSONAL_ACCESS_TOKEN GITHUB_API_URL (empty)",
		`tr[data-server="broken"] ul.diagnostics .sev`: "warning",
	} {
		if got := b.text(sel); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := b.text(`tr[data-server="broken"] td.verdict`); !strings.Contains(got, "[cb-missing-command]") || !strings.Contains(got, "CraftBot would skip it") {
		t.Errorf("broken's verdict: %q", got)
	}
	b.fits("the servers page")
	b.accessible("the servers page")
	b.click(`tr[data-server="github"] details.edit summary`)
	b.fits("the servers page with an edit panel open")
	b.accessible("the servers page with an edit panel open")
	b.screenshot("ui-servers.png")
	b.click(`tr[data-server="github"] details.edit summary`)

	// Search and filters, as one types: the script hides the other rows.
	b.focus("#q")
	b.typeText("GIT")
	if n, shown := b.visible(rows), b.text("#shown"); n != 1 || shown != "1" {
		t.Errorf("search git: %d rows visible, %s shown", n, shown)
	}
	b.fill("#q", "")
	// In this order: "" (every row) last, so that the rows used below are
	// visible (a map's order would leave a filter on now and then).
	for _, c := range []struct {
		show string
		want int
	}{{"needs-config", 1}, {"enabled", 1}, {"", 5}} {
		b.selectOption("#show", c.show)
		if n := b.visible(rows); n != c.want {
			t.Errorf("show %q: %d rows visible, want %d", c.show, n, c.want)
		}
	}

	// Disable by keyboard alone: the row's Edit, then its first button.
	want := applied(t, file, craftbot.Edit{Op: craftbot.OpDisable, Name: "filesystem"}, opts)
	b.focus(`tr[data-server="filesystem"] details.edit summary`)
	b.press("Enter", false)
	b.press("Tab", false)
	if got := b.focused(); got != "button|op|disable|Disable" {
		t.Fatalf("after Edit and Tab the focus is on %q", got)
	}
	b.press("Enter", true)
	if got := readFile(t, file); !bytes.Equal(got, want) {
		t.Errorf("the file after Disable is not what mcpc config disable writes:\n%s", got)
	}
	if got := b.text(`tr[data-server="filesystem"] td.enabled`); got != "no" {
		t.Errorf("filesystem enabled: %q after Disable", got)
	}
	if got := b.text("#notice"); !strings.HasPrefix(got, "disabled server filesystem. "+takesEffect) {
		t.Errorf("notice: %q", got)
	}

	// A value for a listed key, then a new key: in the file, in no page.
	const secret = "ghp_BROWSERCANARY0123456789"
	const secret2 = "tok_ADDEDKEYCANARY0123456789"
	want = applied(t, file, craftbot.Edit{Op: craftbot.OpEnv, Name: "github", Key: "GITHUB_API_URL", Value: secret}, opts)
	gh := `tr[data-server="github"] `
	b.click(gh + "details.edit summary")
	b.fill(gh+`form[data-key="GITHUB_API_URL"] input.value`, secret)
	b.submit(gh + `form[data-key="GITHUB_API_URL"] button.set-env`)
	if got := readFile(t, file); !bytes.Equal(got, want) || !bytes.Contains(got, []byte(secret)) {
		t.Errorf("the file after Set:\n%s", got)
	}
	if got := b.text(gh + "td.env"); got != "GITHUB_PERSONAL_ACCESS_TOKEN GITHUB_API_URL" {
		t.Errorf("github's env after Set: %q", got)
	}
	want = applied(t, file, craftbot.Edit{Op: craftbot.OpEnv, Name: "github", Key: "GITHUB_TOOLSETS", Value: secret2}, opts)
	b.click(gh + "details.edit summary")
	b.fill(gh+"form.add-key input.key", "GITHUB_TOOLSETS")
	b.fill(gh+"form.add-key input.value", secret2)
	b.submit(gh + "form.add-key button.add-key")
	if got := readFile(t, file); !bytes.Equal(got, want) {
		t.Errorf("the file after Add key:\n%s", got)
	}
	if strings.Contains(b.content(), secret) || strings.Contains(b.content(), secret2) {
		t.Errorf("a value is on the page")
	}

	// Forms only where the edit is allowed: no env on sse, no enable of
	// an entry the host skips.
	if n := b.count(`tr[data-server="sentry"] form.env-form`) + b.count(`tr[data-server="broken"] button.enable`); n != 0 {
		t.Errorf("%d forms of edits the host would refuse", n)
	}

	// Add: refused (an sse entry without url), then a stdio server and a
	// websocket one.
	before := readFile(t, file)
	b.fill("#addj-name", "nourl")
	b.fill("#addj-json", `{"transport": "sse", "enabled": true}`)
	if a := b.submit("button.add-json"); a.Status != 409 {
		t.Errorf("add-json without url: %d", a.Status)
	}
	if got := b.text("#problem"); !strings.Contains(got, "add-json nourl refused") {
		t.Errorf("the refusal: %q", got)
	}
	if !bytes.Equal(readFile(t, file), before) {
		t.Errorf("a refused edit changed the file")
	}
	want = applied(t, file, craftbot.Edit{Op: craftbot.OpAddJSON, Name: "memory",
		JSON: stdioEntry("memory", "", "npx", []string{"-y", "@modelcontextprotocol/server-memory"}, []string{"MEMORY_FILE_PATH"}, true)}, opts)
	b.fill("#add-name", "memory")
	b.fill("#add-command", "npx")
	b.fill("#add-args", "-y\n@modelcontextprotocol/server-memory\n")
	b.fill("#add-env", "MEMORY_FILE_PATH")
	b.submit("button.add")
	if got := readFile(t, file); !bytes.Equal(got, want) {
		t.Errorf("the file after Add:\n%s", got)
	}
	if got := b.text(`tr[data-server="memory"] .verdict-text`); got != "CraftBot starts it at startup, with MEMORY_FILE_PATH empty: calls that need it fail" {
		t.Errorf("memory's verdict: %q", got)
	}
	const ws = `{"transport": "websocket", "url": "wss://rt.example.com/mcp", "enabled": false}`
	want = applied(t, file, craftbot.Edit{Op: craftbot.OpAddJSON, Name: "realtime", JSON: ws}, opts)
	b.fill("#addj-name", "realtime")
	b.fill("#addj-json", ws)
	b.submit("button.add-json")
	if got := readFile(t, file); !bytes.Equal(got, want) {
		t.Errorf("the file after Add JSON:\n%s", got)
	}

	// Remove, confirmed in the script's dialog.
	want = applied(t, file, craftbot.Edit{Op: craftbot.OpRemove, Name: "notes"}, opts)
	b.click(`tr[data-server="notes"] details.edit summary`)
	a := b.submit(`tr[data-server="notes"] button.remove`)
	if len(a.Dialogs) != 1 || !strings.Contains(a.Dialogs[0], "Remove server notes") {
		t.Errorf("no confirmation: %v", a.Dialogs)
	}
	if got := readFile(t, file); !bytes.Equal(got, want) {
		t.Errorf("the file after Remove:\n%s", got)
	}
	if n := b.count(`tr[data-server="notes"]`); n != 0 {
		t.Errorf("notes is still listed")
	}
	b.accessible("the servers page after an edit")
	p.seen.noSecret(t, secret, secret2, fileCanary, p.token)
}

// applied is the file after ed, as mcpc config would write it.
func applied(t *testing.T, file string, ed craftbot.Edit, opts craftbot.Options) []byte {
	t.Helper()
	ch, err := craftbot.Apply(file, readFile(t, file), ed, opts)
	if err != nil || ch.Refused != "" {
		t.Fatalf("%v %v: %v %s", ed.Op, ed.Name, err, ch.Refused)
	}
	return ch.Data
}

// catalogSize is the number of servers CraftBot's shipped catalog lists.
const catalogSize = 157

// catalog is a CraftBot catalog of catalogSize servers: the example's
// (which are the shipped catalog's first), then more in the catalog's
// shape (disabled, a credential key empty, a description).
func catalog(t *testing.T) []byte {
	t.Helper()
	var cfg struct {
		AutoConnect bool             `json:"auto_connect"`
		Servers     []map[string]any `json:"mcp_servers"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(testservers.Root(), "examples", "craftbot", "app", "config", "mcp_config.json")), &cfg); err != nil {
		t.Fatal(err)
	}
	for i := len(cfg.Servers); i < catalogSize; i++ {
		cfg.Servers = append(cfg.Servers, map[string]any{
			"name": fmt.Sprintf("service-%03d", i), "description": fmt.Sprintf("Tools of service number %d (a catalog entry)", i),
			"transport": "stdio", "command": "npx", "args": []string{"-y", fmt.Sprintf("@example/mcp-service-%03d@1.0.0", i)},
			"env": map[string]string{fmt.Sprintf("SERVICE_%03d_API_KEY", i): ""}, "enabled": false})
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The shipped catalog's 157 servers render in the window's width and are
// found by search and filter.
func TestBrowserCatalog(t *testing.T) {
	b := startBrowser(t)
	file := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.WriteFile(file, catalog(t), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startUI(t, Options{Profile: craftbot.Profile.Name(), Config: file, Craftbot: craftbot.Options{TargetOS: "linux"}})
	b.login(p)
	rows := "#servers tbody tr[data-server]"
	if n := b.count(rows); n != catalogSize {
		t.Fatalf("%d rows, want %d", n, catalogSize)
	}
	if got := b.text("#count"); got != fmt.Sprintf("%d of %d servers", catalogSize, catalogSize) {
		t.Errorf("count: %q", got)
	}
	b.fits("the catalog")
	b.focus("#q")
	b.typeText("stripe")
	if n := b.visible(rows); n != 1 || b.visible(`tr[data-server="stripe"]`) != 1 {
		t.Errorf("search stripe: %d rows", n)
	}
	b.fill("#q", "service-15")
	if n := b.visible(rows); n != 7 { // service-150 … service-156
		t.Errorf("search service-15: %d rows", n)
	}
	b.fill("#q", "")
	b.selectOption("#show", "enabled")
	if n := b.visible(rows); n != 2 { // filesystem and playwright
		t.Errorf("enabled: %d rows", n)
	}
	// The same filter without the script: the form's address.
	if a := b.gotoURL(p.base + "/?q=telegram&show="); a.Status != 200 || b.count(rows) != 1 {
		t.Errorf("/?q=telegram: %d, %d rows", a.Status, b.count(rows))
	}
	b.accessible("the catalog")
}

// A gateway operator's session: a real gateway with two chats whose
// server runs; the console's state, tools, starts and redacted stderr;
// Restart by a click; a restart made elsewhere shown without a reload; the
// chat's tools with a form from the schema, and a call's result; the
// volcanic servers page of the same ui with the provenance of a field.
func TestBrowserGateway(t *testing.T) {
	b := startBrowser(t)
	g := startGateway(t)
	g.call(t, "c1")
	g.stderrSeen(t, "c1")
	g.call(t, "c2")
	g.stderrSeen(t, "c2")
	root := testservers.Root()
	p := startUI(t, Options{Profile: compile.ProfileVolcanic, Gateway: g.admin(), Compile: compile.Options{CleanEnv: true,
		AppSettings: []string{filepath.Join(root, "examples", "volcanic", "appsettings.json")},
		EnvFiles:    []string{filepath.Join(root, "examples", "volcanic", "host.env")},
		AgentDir:    filepath.Join(root, "examples", "volcanic", "agent")}})

	if a := b.login(p); a.Status != 200 || a.URL != p.base+"/" {
		t.Fatalf("the page: %d %s", a.Status, a.URL)
	}
	if a := b.gotoURL(p.base + "/gateway"); a.Status != 200 {
		t.Fatalf("the console: %d", a.Status)
	}
	if got := b.text("#summary"); got != "2 server processes running or starting in 2 chats" {
		t.Errorf("summary: %q", got)
	}
	row := `section[data-chat="c1"] tr[data-server="srv"]`
	for sel, want := range map[string]string{row + " td.state": "running", row + " td.tools": "1", row + " td.starts": "1"} {
		if got := b.text(sel); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := b.text(row + " pre.stderr"); !strings.Contains(got, "SRV_SECRET=[REDACTED]") {
		t.Errorf("stderr tail: %q", got)
	}
	b.click(row + " td.tail summary")
	b.fits("the console")
	b.accessible("the console")
	b.screenshot("ui-gateway.png")

	a := b.submit(row + " button.restart")
	if a.Status != 200 || !strings.HasSuffix(strings.SplitN(a.URL, "?", 2)[0], "/gateway") {
		t.Errorf("after Restart: %d %s", a.Status, a.URL)
	}
	if got := b.text("#notice"); got != "restarted server srv in chat c1: the next call starts it again" {
		t.Errorf("notice: %q", got)
	}
	if got := b.text(row + " td.state"); got != "not started" {
		t.Errorf("state after Restart: %q", got)
	}
	// Restarted elsewhere (mcpc status's operator): the page follows.
	if err := g.admin().Restart(context.Background(), "c2", "srv"); err != nil {
		t.Fatal(err)
	}
	b.waitText(`section[data-chat="c2"] tr[data-server="srv"] td.state`, "not started")
	b.waitText("#summary", "0 server processes")

	// The chat's tools, and a call from the schema's form.
	if a := b.gotoURL(p.base + "/gateway/tools?chat=c1"); a.Status != 200 {
		t.Fatalf("the tools: %d", a.Status)
	}
	tool := `li[data-tool="echo"] `
	b.click(tool + "summary")
	b.fill(tool+`input[name="arg.text"]`, "hello from the console")
	b.submit(tool + "button.call")
	if got := b.text("#result"); !strings.Contains(got, "✓ echo") || !strings.Contains(got, "hello from the console") {
		t.Errorf("the call's result: %q", got)
	}
	b.fits("the tools")
	b.accessible("the tools")
	b.screenshot("ui-console.png")
	if st, err := g.admin().Server(context.Background(), "c1", "srv"); err != nil || st.Starts != 2 {
		t.Errorf("the call did not start c1's server again: %v %d", err, st.Starts)
	}

	// The volcanic servers page of the same ui, from the compiler: read
	// only, the provenance of each field, the gateway's state beside.
	b.gotoURL(p.base + "/")
	if n := b.count("#servers tbody tr[data-server]"); n != 3 {
		t.Errorf("the example's servers: %d rows", n)
	}
	if got := b.text(`tr[data-server="everything"] td.set`); got != "demo_" {
		t.Errorf("everything's tool prefix: %q", got)
	}
	if got := b.text(`tr[data-server="everything"] td.runtime`); got != "not in the running plan" {
		t.Errorf("everything's gateway state: %q", got)
	}
	b.click(`tr[data-server="everything"] details.prov summary`)
	if n := b.visible(`tr[data-server="everything"] table.provenance tbody tr`); n < 3 {
		t.Errorf("provenance: %d fields", n)
	}
	if n := b.count(`form[action="/edit"]`); n != 0 {
		t.Errorf("%d edit forms on a volcanic page", n)
	}
	b.fits("the volcanic servers")
	b.accessible("the volcanic servers")
	p.seen.noSecret(t, adminToken, stderrCanary, "example-not-a-real-key", p.token)
}

// A craftbot gateway's console in the browser: its servers without chats,
// Restart by a click, and the actions' tools.
func TestBrowserCraftbotConsole(t *testing.T) {
	b := startBrowser(t)
	g := startCraftbotGateway(t)
	p, _ := craftbotConsoleUI(t, g)
	b.login(p)
	if got := b.text(`tr[data-server="fs"] td.runtime`); got != "running · 1 actions" {
		t.Errorf("fs's gateway state on the servers page: %q", got)
	}
	b.fits("the servers page with a gateway")
	b.accessible("the servers page with a gateway")
	b.gotoURL(p.base + "/gateway")
	if n := b.count("section.chat"); n != 0 {
		t.Errorf("%d chat sections on a craftbot console", n)
	}
	b.accessible("the craftbot console")
	a := b.submit(`tr[data-server="fs"] button.restart`)
	if a.Status != 200 || b.text("#notice") != "restarted server fs: the next call starts it again" {
		t.Errorf("restart: %d %q", a.Status, b.text("#notice"))
	}
	if got := b.text(`tr[data-server="fs"] td.state`); got == "running" {
		t.Errorf("fs after its restart: %q", got)
	}
	b.gotoURL(p.base + "/gateway/tools")
	if n := b.count(`li[data-tool="mcp_fs_echo"]`); n != 1 {
		t.Errorf("the actions: %d", n)
	}
	p.seen.noSecret(t, adminToken, stderrCanary, p.token)
}
