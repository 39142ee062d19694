package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	if _, err := os.Stat(filepath.Join(testservers.Root(), "node_modules", "playwright-core", "package.json")); err != nil {
		if testservers.RequireNPM() {
			t.Fatalf("the browser test needs playwright-core: run npm ci (%v)", err)
		}
		testmain.Skip(t, "no node_modules/playwright-core: run npm ci")
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

// screenshot writes docs/NAME with -update.
func (b *browser) screenshot(name string) {
	if *golden.Update {
		b.do(map[string]any{"op": "screenshot", "path": filepath.Join(testservers.Root(), "docs", name)})
	}
}

// A CraftBot operator's session in a real browser: the rows, a server
// disabled by a click (the file changes as mcpc config would change it),
// an env value set (in the file, in no page), edits the host would not
// load refused with the file unchanged, and a removal confirmed in the
// dialog of the page's script.
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
	if n := b.count("#servers tbody tr"); n != 5 {
		t.Errorf("%d rows, want 5", n)
	}
	for sel, want := range map[string]string{
		`tr[data-server="filesystem"] td.enabled`: "yes",
		`tr[data-server="github"] td.set`:         "code",
		`tr[data-server="sentry"] td.transport`:   "sse",
		`tr[data-server="notes"] .osmark`:         `⚠ command "/Applications/Notes.app/Contents/MacOS/notes-mcp" is a macOS path (/Applications)`,
		`tr[data-server="github"] td.env`:         "GITHUB_PERSONAL_ACCESS_TOKEN GITHUB_API_URL (empty)",
	} {
		if got := b.text(sel); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := b.text(`tr[data-server="broken"] td.status`); !strings.Contains(got, "[cb-missing-command]") {
		t.Errorf("broken's status: %q", got)
	}
	b.screenshot("ui-servers.png")

	// Disable by a click.
	want := applied(t, file, craftbot.Edit{Op: craftbot.OpDisable, Name: "filesystem"}, opts)
	b.submit(`tr[data-server="filesystem"] button.disable`)
	if got := readFile(t, file); !bytes.Equal(got, want) {
		t.Errorf("the file after Disable is not what mcpc config disable writes:\n%s", got)
	}
	if got := b.text(`tr[data-server="filesystem"] td.enabled`); got != "no" {
		t.Errorf("filesystem enabled: %q after Disable", got)
	}
	if got := b.text("#notice"); got != "disabled server filesystem" {
		t.Errorf("notice: %q", got)
	}

	// Set an env value: in the file, in no page.
	const secret = "ghp_BROWSERCANARY0123456789"
	want = applied(t, file, craftbot.Edit{Op: craftbot.OpEnv, Name: "github", Key: "GITHUB_API_URL", Value: secret}, opts)
	b.fill(`tr[data-server="github"] input.key`, "GITHUB_API_URL")
	b.fill(`tr[data-server="github"] input.value`, secret)
	b.submit(`tr[data-server="github"] button.set-env`)
	if got := readFile(t, file); !bytes.Equal(got, want) || !bytes.Contains(got, []byte(secret)) {
		t.Errorf("the file after Set:\n%s", got)
	}
	if got := b.text(`tr[data-server="github"] td.env`); got != "GITHUB_PERSONAL_ACCESS_TOKEN GITHUB_API_URL" {
		t.Errorf("github's env after Set: %q", got)
	}
	if strings.Contains(b.content(), secret) {
		t.Errorf("the value is on the page")
	}

	// Refused: env on an sse server, enable of an entry the host skips.
	const refusedSecret = "sk_REFUSEDBROWSER0123456789"
	before := readFile(t, file)
	b.fill(`tr[data-server="sentry"] input.key`, "SENTRY_TOKEN")
	b.fill(`tr[data-server="sentry"] input.value`, refusedSecret)
	if a := b.submit(`tr[data-server="sentry"] button.set-env`); a.Status != 409 {
		t.Errorf("env on sse: %d", a.Status)
	}
	if got := b.text("#problem"); !strings.Contains(got, "env sentry refused") || !strings.Contains(got, "[cb-field-ignored]") {
		t.Errorf("the refusal: %q", got)
	}
	if a := b.submit(`tr[data-server="broken"] button.enable`); a.Status != 409 {
		t.Errorf("enable broken: %d", a.Status)
	}
	if got := b.text("#problem"); !strings.Contains(got, "enable broken refused") || !strings.Contains(got, "[cb-missing-command]") {
		t.Errorf("the refusal: %q", got)
	}
	if !bytes.Equal(readFile(t, file), before) {
		t.Errorf("a refused edit changed the file")
	}

	// Remove, confirmed in the script's dialog.
	want = applied(t, file, craftbot.Edit{Op: craftbot.OpRemove, Name: "notes"}, opts)
	b.gotoURL(p.base + "/")
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
	p.seen.noSecret(t, secret, refusedSecret, fileCanary, p.token)
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

// A gateway operator's session: a real gateway with a chat whose server
// runs, its state, tools and redacted stderr on the page, and Restart by a
// click.
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
		t.Fatalf("the gateway page: %d", a.Status)
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
	b.screenshot("ui-gateway.png")

	a := b.submit(row + " button.restart")
	if a.Status != 200 || !strings.HasSuffix(strings.SplitN(a.URL, "?", 2)[0], "/gateway") {
		t.Errorf("after Restart: %d %s", a.Status, a.URL)
	}
	if got := b.text("#notice"); got != "restarted server srv in chat c1" {
		t.Errorf("notice: %q", got)
	}
	if got := b.text(row + " td.state"); got != "not started" {
		t.Errorf("state after Restart: %q", got)
	}
	if d, err := g.admin().Server(context.Background(), "c2", "srv"); err != nil || d.State != "running" {
		t.Errorf("chat c2's server after c1's restart: %v %s", err, d.State)
	}
	// The volcanic servers page of the same ui, from the compiler.
	b.gotoURL(p.base + "/")
	if n := b.count("#servers tbody tr"); n != 3 {
		t.Errorf("the example's servers: %d rows", n)
	}
	if got := b.text(`tr[data-server="everything"] td.set`); got != "demo_" {
		t.Errorf("everything's tool prefix: %q", got)
	}
	p.seen.noSecret(t, adminToken, stderrCanary, "example-not-a-real-key", p.token)
}
