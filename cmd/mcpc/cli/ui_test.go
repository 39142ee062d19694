package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testmain"
)

// uiConfig is the ui package's fixture.
var uiConfig = filepath.Join("..", "ui", "testdata", "mcp_config.json")

// mcpc ui refuses what it cannot serve safely or at all, before it
// listens: exit 2 with the reason.
func TestUIUsage(t *testing.T) {
	dir := t.TempDir()
	cfg := uiConfig
	t.Setenv("UI_SHORT", "short")
	t.Setenv("UI_TOKEN", "ui-token-0123456789abcdef")
	t.Setenv("UI_TOKEN_TOO", "ui-token-0123456789abcdef")
	gw := []string{"--gateway", "http://127.0.0.1:1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ui", "--profile", "craftbot", "--config", cfg}, "needs --listen"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "0.0.0.0:0", "--no-token"}, "with --no-token, mcpc ui listens on loopback only"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", ":0", "--no-token"}, "loopback only"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--no-token", "--token-env", "UI_TOKEN"}, "--no-token and --token-env"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1"}, "expected HOST:PORT"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "0.0.0.0:0", "--token-env", "UI_SHORT"}, "shorter than 16"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--token-env", "UI_NONE"}, "not set or blank"},
		{[]string{"ui", "--profile", "craftbot", "--config", filepath.Join(dir, "none.json"), "--listen", "127.0.0.1:0"}, "does not exist"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--admin-token-env", "UI_TOKEN"}, "goes with --gateway"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--gateway", "ftp://x"}, "--gateway \"ftp://x\""},
		{append([]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--token-env", "UI_TOKEN", "--admin-token-env", "UI_TOKEN"}, gw...),
			"--token-env and --admin-token-env name the same variable UI_TOKEN"},
		{append([]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--token-env", "UI_TOKEN", "--admin-token-env", "UI_TOKEN_TOO"}, gw...),
			"--token-env and --admin-token-env hold the same token"},
		{[]string{"ui", "--appsettings", filepath.Join(dir, "none.json"), "--listen", "127.0.0.1:0"}, "cannot read"},
		{[]string{"ui", "--config", cfg, "--listen", "127.0.0.1:0"}, "belongs to --profile craftbot"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, stderr)
		}
		if strings.Contains(stderr, "ui-token-0123456789abcdef") {
			t.Errorf("%v: the token is in the message", c.args)
		}
	}
}

// uiProcess is a running mcpc ui with the lines of its stderr.
type uiProcess struct {
	cmd   *exec.Cmd
	lines chan string // closed when stderr ends
	all   *syncBuffer
}

// startUIProcess starts mcpc ui with args (and XDG_RUNTIME_DIR runtimeDir)
// and returns it once it said the first of its start lines.
func startUIProcess(t *testing.T, runtimeDir string, args ...string) *uiProcess {
	t.Helper()
	_, bin := processTest(t)
	cmd := exec.Command(bin, append([]string{"ui"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatal(err)
	}
	p := &uiProcess{cmd: cmd, lines: make(chan string, 64), all: &syncBuffer{}}
	go func() {
		defer close(p.lines)
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.all.Write([]byte(sc.Text() + "\n"))
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

// line is the next line of stderr, matched against re.
func (p *uiProcess) line(t *testing.T, re string) []string {
	t.Helper()
	l, ok := <-p.lines
	if !ok {
		t.Fatalf("mcpc ui's stderr ended (%v), want %s:\n%s", p.cmd.Wait(), re, p.all.String())
	}
	m := regexp.MustCompile(re).FindStringSubmatch(l)
	if m == nil {
		t.Fatalf("line %q, want %s", l, re)
	}
	return m
}

// stop sends SIGTERM and wants exit 0 and the rest of stderr.
func (p *uiProcess) stop(t *testing.T) string {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range p.lines {
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("mcpc ui after SIGTERM: %v", err)
	}
	return p.all.String()
}

// copyUIConfig is a copy of the fixture in a directory of its own.
func copyUIConfig(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(uiConfig)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func uiRequest(t *testing.T, client *http.Client, method, u string, form url.Values, origin string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// By default mcpc ui makes an access token, prints the page's address
// with it once, and writes it to a file only its user reads, in a
// directory only its user enters. A client without it (a local process,
// any Origin it likes) reads nothing and edits nothing; a browser that
// opened the address has a session and edits; SIGTERM exits 0 and
// removes the file.
func TestUIServes(t *testing.T) {
	file := copyUIConfig(t)
	before, _ := os.ReadFile(file)
	runtimeDir := privateDir(t)
	p := startUIProcess(t, runtimeDir, "--profile", "craftbot", "--config", file, "--target-os", "linux", "--listen", "127.0.0.1:0")
	base := p.line(t, `^mcpc ui: serving (http://127\.0\.0\.1:\d+)/$`)[1]
	// First what a client without the token gets (before the lines that
	// follow, which an mcpc ui without a token never prints).
	// A local process: it reads the page for a cookie and a CSRF token,
	// then posts with an Origin of its own choosing.
	localJar, _ := cookiejar.New(nil)
	local := &http.Client{Jar: localJar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	csrf := ""
	for _, path := range []string{"/?token=" + strings.Repeat("0", 64), "/"} {
		code, body := uiRequest(t, local, http.MethodGet, base+path, nil, base)
		if code != http.StatusUnauthorized || strings.Contains(body, "data-server") {
			t.Errorf("GET %s without the token: %d\n%s", path, code, body)
		}
		if m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body); m != nil {
			csrf = m[1]
		}
	}
	for _, form := range []url.Values{
		{"op": {"disable"}, "name": {"filesystem"}, "csrf": {csrf}},
		{"op": {"env"}, "name": {"filesystem"}, "key": {"LD_PRELOAD"}, "value": {"/tmp/evil.so"}, "csrf": {csrf}},
	} {
		if code, body := uiRequest(t, local, http.MethodPost, base+"/edit", form, base); code != http.StatusUnauthorized {
			t.Errorf("POST %v without the token: %d\n%s", form, code, body)
		}
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, before) {
		t.Errorf("a client without the token changed the file:\n%s", got)
	}
	if t.Failed() {
		t.FailNow() // the lines below would never come
	}
	tok := p.line(t, `^mcpc ui: open `+regexp.QuoteMeta(base)+`/\?token=([0-9a-f]{64})$`)[1]
	tokenFile := p.line(t, `^mcpc ui: the token is also in (\S+) \(yours only; removed when mcpc ui ends\)$`)[1]

	if want := filepath.Join(runtimeDir, "mcpc", "ui-"+base[strings.LastIndex(base, ":")+1:]+".token"); tokenFile != want {
		t.Errorf("the token file %s, want %s", tokenFile, want)
	}
	if b, err := os.ReadFile(tokenFile); err != nil || string(b) != tok+"\n" {
		t.Errorf("the token file holds %q (%v)", b, err)
	}
	for path, want := range map[string]os.FileMode{tokenFile: 0o600, filepath.Dir(tokenFile): 0o700 | os.ModeDir} {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode() != want || int(fi.Sys().(*syscall.Stat_t).Uid) != os.Geteuid() {
			t.Errorf("%s: %v %v, want %v and this user's", path, fi.Mode(), err, want)
		}
	}

	jar, _ := cookiejar.New(nil)
	owner := &http.Client{Jar: jar}
	code, body := uiRequest(t, owner, http.MethodGet, base+"/?token="+tok, nil, "")
	if code != 200 || !strings.Contains(body, `data-server="github"`) || strings.Contains(body, "FILECANARY") || strings.Contains(body, tok) {
		t.Fatalf("the page after the token: %d\n%s", code, body)
	}
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token:\n%s", body)
	}
	if code, body := uiRequest(t, owner, http.MethodPost, base+"/edit", url.Values{"op": {"disable"}, "name": {"filesystem"}, "csrf": {m[1]}}, base); code != 200 || !strings.Contains(body, "disabled server filesystem") {
		t.Errorf("the owner's disable: %d\n%s", code, body)
	}
	if got, _ := os.ReadFile(file); bytes.Equal(got, before) {
		t.Errorf("the owner's disable did not change the file")
	}

	stderr := p.stop(t)
	if n := strings.Count(stderr, tok); n != 1 {
		t.Errorf("the token is %d times on stderr, want once (the address):\n%s", n, stderr)
	}
	if _, err := os.Lstat(tokenFile); !os.IsNotExist(err) {
		t.Errorf("the token file after SIGTERM: %v", err)
	}
}

// --token-env: the token is the variable's, no file is written and the
// token is not printed.
func TestUITokenEnv(t *testing.T) {
	const tok = "ui-ENVTOKEN-0123456789abcdef"
	runtimeDir := privateDir(t)
	t.Setenv("UI_PAGE_TOKEN", tok)
	p := startUIProcess(t, runtimeDir, "--profile", "craftbot", "--config", copyUIConfig(t), "--listen", "127.0.0.1:0", "--token-env", "UI_PAGE_TOKEN")
	base := p.line(t, `^mcpc ui: serving (http://127\.0\.0\.1:\d+)/ \(open it once with \?token= and the token in \$UI_PAGE_TOKEN\)$`)[1]
	if code, _ := uiRequest(t, http.DefaultClient, http.MethodGet, base+"/", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	jar, _ := cookiejar.New(nil)
	if code, body := uiRequest(t, &http.Client{Jar: jar}, http.MethodGet, base+"/?token="+tok, nil, ""); code != 200 || !strings.Contains(body, `data-server="github"`) {
		t.Errorf("with the token: %d\n%s", code, body)
	}
	if stderr := p.stop(t); strings.Contains(stderr, tok) {
		t.Errorf("the token is on stderr:\n%s", stderr)
	}
	if _, err := os.Lstat(filepath.Join(runtimeDir, "mcpc")); !os.IsNotExist(err) {
		t.Errorf("a token directory with --token-env: %v", err)
	}
}

// --no-token serves without authentication, and says so loudly at every
// start: what anyone on the machine can then do.
func TestUINoTokenWarns(t *testing.T) {
	file := copyUIConfig(t)
	runtimeDir := privateDir(t)
	p := startUIProcess(t, runtimeDir, "--profile", "craftbot", "--config", file, "--listen", "127.0.0.1:0", "--no-token")
	base := p.line(t, `^mcpc ui: serving (http://127\.0\.0\.1:\d+)/$`)[1]
	p.line(t, `^mcpc ui: WARNING: --no-token: no authentication; any local user or process that connects to 127\.0\.0\.1:\d+ can read the page and edit `+
		regexp.QuoteMeta(file)+` \(enable, disable, remove, set env, add\)$`)
	if code, body := uiRequest(t, http.DefaultClient, http.MethodGet, base+"/", nil, ""); code != 200 || !strings.Contains(body, `data-server="github"`) {
		t.Errorf("without a token: %d\n%s", code, body)
	}
	if stderr := p.stop(t); strings.Contains(stderr, "token=") {
		t.Errorf("an address with a token:\n%s", stderr)
	}
	if _, err := os.Lstat(filepath.Join(runtimeDir, "mcpc")); !os.IsNotExist(err) {
		t.Errorf("a token directory with --no-token: %v", err)
	}
}

// The token goes into the runtime directory mcpc run uses (private.Dir),
// never into one that another user owns or may enter: refused, nothing
// written; a runtime directory ($XDG_RUNTIME_DIR) open to others is not
// used at all.
func TestUITokenDirRefused(t *testing.T) {
	check := func(what, want string) {
		t.Helper()
		path, _, err := writeUIToken(8090, "0123456789abcdef0123456789abcdef")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %s %v, want %q", what, path, err, want)
		}
	}
	parent := privateDir(t)
	t.Setenv("XDG_RUNTIME_DIR", parent)
	dir := filepath.Join(parent, "mcpc")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	check("a directory others may enter", "is open to other users (mode 0755)")
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), dir); err != nil {
		t.Fatal(err)
	}
	check("a symbolic link", "is not a directory")
	if os.Geteuid() == 0 {
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		check("another user's directory", "belongs to uid 65534, not to you")
	}
	if entries, _ := filepath.Glob(filepath.Join(parent, "*", "*.token")); len(entries) != 0 {
		t.Errorf("token files written: %v", entries)
	}
	// A runtime directory others may write to is passed over for
	// $TMPDIR/mcpc-<uid>.
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", open)
	tmp := privateDir(t)
	t.Setenv("TMPDIR", tmp)
	path, remove, err := writeUIToken(8090, "0123456789abcdef0123456789abcdef")
	if err != nil || filepath.Dir(path) != filepath.Join(tmp, fmt.Sprintf("mcpc-%d", os.Getuid())) {
		t.Fatalf("with an open XDG_RUNTIME_DIR: %s %v", path, err)
	}
	// The directory it makes is 0700, the file 0600.
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode(), err, want)
		}
	}
	remove()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("after remove: %v", err)
	}
}

// As another local user (nobody), on a real mcpc ui of root's: no page,
// no edit whatever Origin it sends, no token file to read.
func TestUIAnotherLocalUser(t *testing.T) {
	setpriv, err1 := exec.LookPath("setpriv")
	curl, err2 := exec.LookPath("curl")
	if os.Geteuid() != 0 || err1 != nil || err2 != nil {
		testmain.Skip(t, "needs root, setpriv and curl: runs curl as user nobody")
	}
	file := copyUIConfig(t)
	before, _ := os.ReadFile(file)
	p := startUIProcess(t, privateDir(t), "--profile", "craftbot", "--config", file, "--listen", "127.0.0.1:0")
	base := p.line(t, `^mcpc ui: serving (http://127\.0\.0\.1:\d+)/$`)[1]
	asNobody := func(args ...string) (string, error) {
		cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := asNobody(curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Origin: "+base, base+"/"); err != nil || out != "401" {
		t.Errorf("GET / as nobody: %q %v", out, err)
	}
	// The whole attack: read the page for a cookie and a CSRF token, then
	// post with an Origin of its own choosing.
	const attack = `jar=$(mktemp) && csrf=$(curl -s -c "$jar" "$1/" | sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -n 1) &&
curl -s -o /dev/null -w '%{http_code}' -b "$jar" -H "Origin: $1" --data "$2&csrf=$csrf" "$1/edit"; rm -f "$jar"`
	for _, form := range []string{"op=disable&name=filesystem", "op=env&name=filesystem&key=LD_PRELOAD&value=/tmp/evil.so"} {
		if out, err := asNobody("sh", "-c", attack, "sh", base, form); err != nil || out != "401" {
			t.Errorf("POST %s as nobody: %q %v", form, out, err)
		}
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, before) {
		t.Errorf("nobody changed the file:\n%s", got)
	}
	if t.Failed() {
		t.FailNow() // the lines below would never come
	}
	tok := p.line(t, `^mcpc ui: open \S+\?token=(\S+)$`)[1]
	tokenFile := p.line(t, `^mcpc ui: the token is also in (\S+) `)[1]
	if out, err := asNobody("cat", tokenFile); err == nil || strings.Contains(out, tok) {
		t.Errorf("nobody reads the token file: %q %v", out, err)
	}
	p.stop(t)
}
