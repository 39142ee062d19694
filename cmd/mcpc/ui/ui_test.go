package ui

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	_ "github.com/mcpc-dev/mcpc/compile/profiles"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// testBin is the Go MCP test server (TestMain builds it).
var testBin string

func TestMain(m *testing.M) {
	testservers.Main(m, func(bin string) { testBin = bin })
}

// fileCanary is the secret the fixture's github entry holds already.
const fileCanary = "ghp_FILECANARY0123456789abcdef"

// seen records everything the page said: bodies, headers, log lines, so a
// test can check no secret is in any of it.
type seen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *seen) add(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.WriteString(text + "\n")
}

func (s *seen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// noSecret fails the test if any secret is in what the page said.
func (s *seen) noSecret(t *testing.T, secrets ...string) {
	t.Helper()
	all := s.String()
	for _, sec := range secrets {
		if testservers.LeaksPart(all, sec) {
			t.Errorf("a secret (%d characters) is in a page, a header or a log line", len(sec))
		}
	}
}

// testToken is the access token of the pages startUI serves (unless
// NoToken or a token of the test's own).
const testToken = "ui-TESTTOKEN-0123456789abcdef"

// uiPage is one running ui with a browser-like client (cookies, no
// redirects followed).
type uiPage struct {
	t      *testing.T
	base   string
	token  string // "" with NoToken
	client *http.Client
	seen   *seen
}

// startUI serves opts on 127.0.0.1 and returns a client for it that has
// presented the token (a session), as the owner's browser has.
func startUI(t *testing.T, opts Options) *uiPage {
	t.Helper()
	if opts.Token == "" && !opts.NoToken {
		opts.Token = testToken
	}
	sn := &seen{}
	opts.Log = func(line string) { sn.add("log: " + line) }
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// Every answer the page gives, to any client (a browser too), is seen.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &teeWriter{ResponseWriter: w}
		srv.ServeHTTP(tw, r)
		var hdr strings.Builder
		_ = w.Header().Write(&hdr)
		sn.add(hdr.String())
		sn.add(tw.buf.String())
	}))
	t.Cleanup(ts.Close)
	p := &uiPage{t: t, base: ts.URL, token: opts.Token, client: newClient(), seen: sn}
	if p.token != "" {
		p.login()
	}
	return p
}

// login presents the token as the address mcpc ui prints does: the
// answer sets the session cookie and sends the browser on without it.
func (p *uiPage) login() {
	p.t.Helper()
	code, hdr, body := p.get("/?token=" + url.QueryEscape(p.token))
	if code != http.StatusSeeOther || hdr.Get("Location") != "/" || !strings.HasPrefix(hdr.Get("Set-Cookie"), "mcpc_ui_session_") {
		p.t.Fatalf("presenting the token: %d %v\n%s", code, hdr, body)
	}
}

// anonymous is a client of the same page with no cookie: a local process
// that did not read the token.
func (p *uiPage) anonymous() *uiPage {
	return &uiPage{t: p.t, base: p.base, token: p.token, client: newClient(), seen: p.seen}
}

// browser is another browser of the same page that presented the token:
// a session of its own.
func (p *uiPage) browser() *uiPage {
	o := p.anonymous()
	if o.token != "" {
		o.login()
	}
	return o
}

// teeWriter keeps a copy of the body it writes.
type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

func newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// do sends a request and records the answer.
func (p *uiPage) do(req *http.Request) (int, http.Header, string) {
	p.t.Helper()
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var hdr strings.Builder
	_ = resp.Header.Write(&hdr)
	p.seen.add(hdr.String())
	p.seen.add(string(b))
	return resp.StatusCode, resp.Header, string(b)
}

func (p *uiPage) get(path string) (int, http.Header, string) {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.base+path, nil)
	return p.do(req)
}

// post submits a form as the page's own browser would: its Origin, and the
// CSRF token of the page it read last.
func (p *uiPage) post(path string, form url.Values) (int, http.Header, string) {
	p.t.Helper()
	if form.Get("csrf") == "" {
		form.Set("csrf", p.csrf())
	}
	return p.postWith(path, form, "Origin", p.base)
}

func (p *uiPage) postWith(path string, form url.Values, headers ...string) (int, http.Header, string) {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return p.do(req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the CSRF token from the servers page.
func (p *uiPage) csrf() string {
	p.t.Helper()
	code, _, body := p.get("/")
	m := csrfRE.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		p.t.Fatalf("no CSRF token on the page: %d\n%s", code, body)
	}
	return m[1]
}

// craftbotUI serves a copy of the fixture (target OS linux) and returns
// the page and the copy's path.
func craftbotUI(t *testing.T) (*uiPage, string) {
	t.Helper()
	data, err := os.ReadFile("testdata/mcp_config.json")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return startUI(t, Options{Profile: craftbot.Profile.Name(), Config: file, Craftbot: craftbot.Options{TargetOS: "linux"}}), file
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rowOf is the <tr> of server name on a page.
func rowOf(t *testing.T, body, name string) string {
	t.Helper()
	i := strings.Index(body, `<tr data-server="`+name+`"`)
	if i < 0 {
		t.Fatalf("no row for %s:\n%s", name, body)
	}
	// To the next server's row or the table's end: a row holds tables of
	// its own (the provenance).
	rest := body[i+1:]
	j := len(rest)
	for _, end := range []string{`<tr data-server="`, "</tbody>\n</table>"} {
		if k := strings.Index(rest, end); k >= 0 && k < j {
			j = k
		}
	}
	return body[i : i+1+j]
}

// The craftbot rows say what mcpc config list says: source, transport,
// enabled, action set, validity with the diagnostics, the target-OS mark,
// env names with the empty ones marked; no value.
func TestCraftbotRows(t *testing.T) {
	p, file := craftbotUI(t)
	code, _, body := p.get("/")
	if code != http.StatusOK {
		t.Fatalf("%d\n%s", code, body)
	}
	for name, want := range map[string][]string{
		"filesystem": {file + ":5", ">stdio<", `class="enabled">yes<`, ">mcp_filesystem<", `class="tone-ok"`, "CraftBot starts it at startup", `value="disable"`},
		"github": {file + ":13", `class="enabled">no<`, ">code<", "GITHUB_<wbr>PERSONAL_<wbr>ACCESS_<wbr>TOKEN</span>",
			"GITHUB_<wbr>API_<wbr>URL (empty)", `value="enable"`, "needs config", `type="password"`, `name="key" value="GITHUB_API_URL"`},
		"sentry": {">sse<", "a sse server has no env"},
		"notes":  {`class="osmark"`, "macOS path", `class="tone-off"`, "off: CraftBot does not start it until it is enabled"},
		"broken": {`class="tone-off"`, "CraftBot would skip it", "without command", "[cb-missing-command]", "fix it in the file to enable it"},
	} {
		row := rowOf(t, body, name)
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("row %s lacks %q:\n%s", name, w, row)
			}
		}
	}
	if strings.Contains(rowOf(t, body, "filesystem"), "osmark") {
		t.Errorf("filesystem has a target-OS mark")
	}
	p.seen.noSecret(t, fileCanary)
}

// The volcanic rows come from the compiler: origin, tool prefix, env names,
// and each server's own diagnostics; the host secret is in no page.
func TestVolcanicRows(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "appsettings.json")
	if err := os.WriteFile(app, []byte(`{"Mcp": {"Servers": {
  "good": {"Command": "node", "ToolPrefix": "g", "Env": {"TOKEN": "${env:HOST_SECRET}", "MODE": "x"}},
  "bad": {"comand": "node"}
}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "HOSTCANARY-9f8e7d6c5b4a"
	p := startUI(t, Options{Profile: compile.ProfileVolcanic, Compile: compile.Options{
		CleanEnv: true, AppSettings: []string{app}, Env: []string{"HOST_SECRET=" + secret}, AgentDir: dir}})
	code, _, body := p.get("/")
	if code != http.StatusOK {
		t.Fatalf("%d\n%s", code, body)
	}
	good, bad := rowOf(t, body, "good"), rowOf(t, body, "bad")
	for _, w := range []string{app + ":2", ">g<", "MODE", "TOKEN", "not served: the deployment has errors elsewhere", "Provenance", "<code>ToolPrefix</code>"} {
		if !strings.Contains(good, w) {
			t.Errorf("good lacks %q:\n%s", w, good)
		}
	}
	for _, w := range []string{app + ":3", `class="tone-error"`, "the host refuses the whole deployment", "[missing-command]", "[unknown-field]"} {
		if !strings.Contains(bad, w) {
			t.Errorf("bad lacks %q:\n%s", w, bad)
		}
	}
	if strings.Contains(good, "[unknown-field]") || strings.Contains(body, `action="/edit"`) {
		t.Errorf("a diagnostic of bad on good, or an edit form on a volcanic page:\n%s", body)
	}
	p.seen.noSecret(t, secret)
}

// Enable, disable, env and remove write the file exactly as mcpc config
// does (craftbot.Apply's bytes); the page then shows the change and says
// what was done, never the value.
func TestEdits(t *testing.T) {
	p, file := craftbotUI(t)
	const secret = "sk-SETCANARY-0123456789abcdef"
	for _, ed := range []craftbot.Edit{
		{Op: craftbot.OpDisable, Name: "filesystem"},
		{Op: craftbot.OpEnable, Name: "github"},
		{Op: craftbot.OpEnv, Name: "github", Key: "GITHUB_API_URL", Value: secret},
		{Op: craftbot.OpEnv, Name: "filesystem", Key: "NEW_KEY", Value: secret},
		{Op: craftbot.OpRemove, Name: "sentry"},
	} {
		before := readFile(t, file)
		want, err := craftbot.Apply(file, before, ed, craftbot.Options{TargetOS: "linux"})
		if err != nil || want.Refused != "" {
			t.Fatalf("%v: %v %s", ed.Op, err, want.Refused)
		}
		form := url.Values{"op": {string(ed.Op)}, "name": {ed.Name}, "key": {ed.Key}, "value": {ed.Value}}
		code, hdr, body := p.post("/edit", form)
		if code != http.StatusSeeOther {
			t.Fatalf("%s %s: %d\n%s", ed.Op, ed.Name, code, body)
		}
		if got := readFile(t, file); !bytes.Equal(got, want.Data) {
			t.Errorf("%s %s: the file is not what mcpc config writes:\n%s", ed.Op, ed.Name, got)
		}
		code, _, body = p.get(hdr.Get("Location"))
		if code != http.StatusOK || !strings.Contains(body, `id="notice"`) {
			t.Errorf("%s: after the edit: %d\n%s", ed.Op, code, body)
		}
	}
	_, _, body := p.get("/")
	if !strings.Contains(rowOf(t, body, "filesystem"), `class="enabled">no<`) || strings.Contains(body, `data-server="sentry"`) ||
		!strings.Contains(rowOf(t, body, "filesystem"), "NEW_<wbr>KEY</span>") {
		t.Errorf("the page does not show the edits:\n%s", body)
	}
	if !bytes.Contains(readFile(t, file), []byte(secret)) {
		t.Errorf("the value is not in the file")
	}
	if !strings.Contains(p.seen.String(), "log: set env NEW_KEY of server filesystem (the value is not shown)") {
		t.Errorf("no log line of the env edit:\n%s", p.seen.String())
	}
	p.seen.noSecret(t, secret, fileCanary)
}

// A refused edit shows why, with the diagnostics, and leaves the file
// byte-identical; so does an edit of a server the file lacks.
func TestRefusedEdits(t *testing.T) {
	p, file := craftbotUI(t)
	const secret = "sk-REFUSEDCANARY-0123456789"
	before := readFile(t, file)
	for _, c := range []struct {
		form url.Values
		code int
		want []string
	}{
		{url.Values{"op": {"env"}, "name": {"sentry"}, "key": {"API_KEY"}, "value": {secret}}, http.StatusConflict,
			[]string{"env sentry refused", "[cb-field-ignored]", "left untouched"}},
		{url.Values{"op": {"enable"}, "name": {"broken"}}, http.StatusConflict,
			[]string{"enable broken refused", "[cb-missing-command]"}},
		{url.Values{"op": {"disable"}, "name": {"nosuch"}}, http.StatusBadRequest, []string{`no server &#34;nosuch&#34;`}},
		{url.Values{"op": {"env"}, "name": {"github"}, "key": {"1BAD"}, "value": {secret}}, http.StatusBadRequest, []string{"not a variable name"}},
		{url.Values{"op": {"rename"}, "name": {"github"}}, http.StatusBadRequest, []string{"unknown edit"}},
	} {
		code, _, body := p.post("/edit", c.form)
		if code != c.code {
			t.Errorf("%v: %d, want %d\n%s", c.form, code, c.code, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%v: the page lacks %q:\n%s", c.form, w, body)
			}
		}
		if !bytes.Equal(readFile(t, file), before) {
			t.Fatalf("%v changed the file", c.form)
		}
	}
	p.seen.noSecret(t, secret, fileCanary)
}

// Every POST needs this page's Origin (else Referer) and the session's
// CSRF token; a refused one changes nothing. With a token and without.
func TestCSRF(t *testing.T) {
	for _, noToken := range []bool{false, true} {
		p, file := craftbotUIWith(t, Options{NoToken: noToken})
		before := readFile(t, file)
		token := p.csrf()
		otherToken := p.browser().csrf()
		form := func(tok string) url.Values {
			return url.Values{"op": {"disable"}, "name": {"filesystem"}, "csrf": {tok}}
		}
		// Without a token a browser without a cookie gets a session of its
		// own, whose token is another; with one it gets no session (401).
		noCookie := http.StatusUnauthorized
		if noToken {
			noCookie = http.StatusForbidden
		}
		for _, c := range []struct {
			what    string
			page    *uiPage
			form    url.Values
			headers []string
			code    int
		}{
			{"no Origin or Referer", p, form(token), nil, http.StatusForbidden},
			{"a foreign Origin", p, form(token), []string{"Origin", "http://evil.example"}, http.StatusForbidden},
			{"a foreign Referer", p, form(token), []string{"Referer", "http://evil.example/"}, http.StatusForbidden},
			{"an Origin of another port", p, form(token), []string{"Origin", "http://127.0.0.1:1"}, http.StatusForbidden},
			{"no token", p, form(""), []string{"Origin", p.base}, http.StatusForbidden},
			{"a wrong token", p, form(strings.Repeat("0", 64)), []string{"Origin", p.base}, http.StatusForbidden},
			{"another session's token", p, form(otherToken), []string{"Origin", p.base}, http.StatusForbidden},
			{"a browser without a cookie", p.anonymous(), form(token), []string{"Origin", p.base}, noCookie},
		} {
			if code, _, body := c.page.postWith("/edit", c.form, c.headers...); code != c.code {
				t.Errorf("no token %v, %s: %d, want %d\n%s", noToken, c.what, code, c.code, body)
			}
		}
		if !bytes.Equal(readFile(t, file), before) {
			t.Fatalf("no token %v: a refused POST changed the file", noToken)
		}
		if code, _, body := p.postWith("/edit", form(token), "Referer", p.base+"/"); code != http.StatusSeeOther {
			t.Errorf("no token %v: the page's own form (Referer): %d\n%s", noToken, code, body)
		}
		p.seen.noSecret(t, testToken)
	}
}

// craftbotUIWith is craftbotUI with opts's token settings.
func craftbotUIWith(t *testing.T, opts Options) (*uiPage, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.WriteFile(file, readFile(t, "testdata/mcp_config.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.Profile, opts.Config, opts.Craftbot = craftbot.Profile.Name(), file, craftbot.Options{TargetOS: "linux"}
	return startUI(t, opts), file
}

// A local process that did not read the token (another user, a sidecar)
// gets nothing: whatever Origin it sets, no page, no data, no CSRF token,
// no edit, and the config file stays byte-identical; the owner's browser,
// with the session its token got, reads and edits.
func TestUnauthenticatedLocalClient(t *testing.T) {
	g := startGateway(t)
	file := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.WriteFile(file, readFile(t, "testdata/mcp_config.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	owner := startUI(t, Options{Profile: craftbot.Profile.Name(), Config: file, Craftbot: craftbot.Options{TargetOS: "linux"},
		Gateway: g.admin(), TokenHint: "the address in mcpc ui's standard error, or the token in /run/user/0/mcpc/ui-1.token"})
	ownerCSRF := owner.csrf()
	before := readFile(t, file)
	local := owner.anonymous()
	for _, path := range []string{"/", "/gateway", "/gateway/tools", "/state", "/?done=disable&name=filesystem", "/nosuch", "/favicon.ico"} {
		code, hdr, body := local.get(path)
		if code != http.StatusUnauthorized || strings.Contains(body, "data-server") || strings.Contains(body, `name="csrf"`) ||
			strings.Contains(body, "filesystem") || hdr.Get("Set-Cookie") != "" {
			t.Errorf("GET %s without a session: %d %v\n%s", path, code, hdr, body)
		}
		if !strings.Contains(body, "/run/user/0/mcpc/ui-1.token") {
			t.Errorf("GET %s: the refusal does not say how to get in:\n%s", path, body)
		}
	}
	for _, c := range []struct{ path, csrf string }{
		{"/edit", ""}, {"/edit", ownerCSRF}, {"/gateway/restart", ownerCSRF}, {"/gateway/reset", ownerCSRF}, {"/gateway/call", ownerCSRF},
	} {
		for _, form := range []url.Values{
			{"op": {"disable"}, "name": {"filesystem"}},
			{"op": {"env"}, "name": {"filesystem"}, "key": {"LD_PRELOAD"}, "value": {"/tmp/evil.so"}},
			{"chat": {"c1"}, "name": {"srv"}},
			{"chat": {"c1"}, "tool": {"echo"}, "arg.text": {"hi"}},
		} {
			form.Set("csrf", c.csrf)
			if code, _, body := local.postWith(c.path, form, "Origin", local.base); code != http.StatusUnauthorized {
				t.Errorf("POST %s %v without a session: %d\n%s", c.path, form, code, body)
			}
		}
	}
	// A cookie it makes up, and one another mcpc ui made.
	other := startUI(t, Options{Profile: craftbot.Profile.Name(), Config: file})
	u, _ := url.Parse(other.base)
	for _, value := range []string{strings.Repeat("a", 32) + "." + strings.Repeat("0", 64), other.client.Jar.Cookies(u)[0].Value} {
		form := url.Values{"op": {"disable"}, "name": {"filesystem"}, "csrf": {ownerCSRF}}
		req, _ := http.NewRequest(http.MethodPost, local.base+"/edit", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", local.base)
		req.AddCookie(&http.Cookie{Name: cookieName(strings.TrimPrefix(local.base, "http://")), Value: value})
		if code, _, body := local.do(req); code != http.StatusUnauthorized {
			t.Errorf("a forged session cookie: %d\n%s", code, body)
		}
	}
	if !bytes.Equal(readFile(t, file), before) {
		t.Fatalf("a client without a session changed the file:\n%s", readFile(t, file))
	}
	if code, _, body := owner.post("/edit", url.Values{"op": {"disable"}, "name": {"filesystem"}}); code != http.StatusSeeOther {
		t.Fatalf("the owner's disable: %d\n%s", code, body)
	}
	if bytes.Equal(readFile(t, file), before) {
		t.Errorf("the owner's disable did not change the file")
	}
	if code, _, body := owner.get("/gateway"); code != http.StatusOK || !strings.Contains(body, `data-chat=`) && !strings.Contains(body, "Console") {
		t.Errorf("the owner's gateway page: %d\n%s", code, body)
	}
	owner.seen.noSecret(t, testToken, adminToken, fileCanary)
}

// The token is presented as ?token= in a GET and nowhere else: a wrong
// one, or one in a POST, gets no session; a right one a new session
// (also for a browser that had one), with the other query kept and the
// token dropped from the address. Without a token the page answers
// loopback host names only (DNS rebinding); with one any name.
func TestAccess(t *testing.T) {
	p, _ := craftbotUIWith(t, Options{NoToken: true})
	req, _ := http.NewRequest(http.MethodGet, p.base+"/", nil)
	req.Host = "rebind.example:80"
	if code, _, _ := p.do(req); code != http.StatusForbidden {
		t.Errorf("a foreign Host: %d", code)
	}
	if code, _, body := p.get("/"); code != http.StatusOK || !strings.Contains(body, `data-server="filesystem"`) {
		t.Errorf("without a token, a loopback Host: %d\n%s", code, body)
	}

	const token = "ui-TOKENCANARY-0123456789"
	tp, _ := craftbotUIWith(t, Options{Token: token})
	anon := tp.anonymous()
	for _, path := range []string{"/", "/?token=wrong", "/?token=", "/?token=" + token + "x", "/gateway?token=wrong"} {
		if code, hdr, _ := anon.get(path); code != http.StatusUnauthorized || hdr.Get("Set-Cookie") != "" {
			t.Errorf("%s: %d %v", path, code, hdr)
		}
	}
	if code, _, body := anon.postWith("/?token="+token, url.Values{}, "Origin", anon.base); code != http.StatusUnauthorized {
		t.Errorf("the token in a POST: %d\n%s", code, body)
	}
	if code, hdr, _ := anon.get("/static/ui.css"); code != http.StatusOK || hdr.Get("Set-Cookie") != "" {
		t.Errorf("the style sheet: %d %v", code, hdr)
	}
	code, hdr, _ := anon.get("/?done=disable&name=x&token=" + token)
	if code != http.StatusSeeOther || hdr.Get("Location") != "/?done=disable&name=x" {
		t.Fatalf("the token: %d %v", code, hdr)
	}
	c := hdr.Get("Set-Cookie")
	for _, attr := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(c, attr) {
			t.Errorf("the session cookie lacks %s: %s", attr, c)
		}
	}
	req, _ = http.NewRequest(http.MethodGet, tp.base+"/", nil)
	req.Host = "ui.example:80" // a token allows any name
	u, _ := url.Parse(tp.base)
	for _, c := range anon.client.Jar.Cookies(u) {
		req.AddCookie(&http.Cookie{Name: "mcpc_ui_session_80", Value: c.Value}) // the name goes by the port the browser asked
	}
	if code, _, body := anon.do(req); code != http.StatusOK || !strings.Contains(body, `data-server="filesystem"`) {
		t.Errorf("with a session: %d\n%s", code, body)
	}
	// Presented again, it makes another session: the old page's forms
	// are refused, the new one's accepted.
	old := anon.csrf()
	anon.login()
	if code, _, _ := anon.post("/edit", url.Values{"op": {"disable"}, "name": {"filesystem"}, "csrf": {old}}); code != http.StatusForbidden {
		t.Errorf("the old session's CSRF token after a new session: %d", code)
	}
	if code, _, _ := tp.anonymous().get("/"); code != http.StatusUnauthorized {
		t.Errorf("another browser without the token: %d", code)
	}
	if !strings.Contains(tp.seen.String(), "log: a browser presented the token: a new session") {
		t.Errorf("no log line of the new session:\n%s", tp.seen.String())
	}
	// The Location header held no token; the request URL did, and only that.
	tp.seen.noSecret(t, token)
}

// A page is served with a token or, said so, without one; never by default.
func TestNewNeedsTokenOrNoToken(t *testing.T) {
	for _, opts := range []Options{{}, {Token: testToken, NoToken: true}} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(token %q, NoToken %v) serves", opts.Token, opts.NoToken)
		}
	}
}

// Each profile has its view of the page: the default (volcanic, or no
// profile named) lists the servers, craftbot edits its file; a profile
// without one is refused rather than shown as another.
func TestEachProfileHasItsView(t *testing.T) {
	for profile, edits := range map[string]bool{"": false, compile.ProfileVolcanic: false, craftbot.Profile.Name(): true} {
		opts := Options{Profile: profile, NoToken: true}
		if _, err := New(opts); err != nil || opts.Edits() != edits {
			t.Errorf("profile %q: %v, edits %v", profile, err, opts.Edits())
		}
	}
	if _, err := New(Options{Profile: "nosuch", NoToken: true}); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("an unknown profile: %v", err)
	}
}

// Every answer carries the Content-Security-Policy; no page has an inline
// script, event handler or style, and the script is a file of its own.
func TestContentSecurityPolicy(t *testing.T) {
	p, _ := craftbotUI(t)
	// A script tag without src, one with content, an event handler
	// attribute, a style element or attribute.
	inline := regexp.MustCompile(`(?i)<script>|<script\s[^>]*>[^<]|\son[a-z]+=|<style|\sstyle=`)
	scripts := regexp.MustCompile(`(?i)<script[^>]*>`)
	for _, path := range []string{"/", "/nosuch", "/static/ui.js", "/static/ui.css"} {
		code, hdr, body := p.get(path)
		csp := hdr.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if strings.HasSuffix(path, ".js") {
			if code != 200 || !strings.Contains(hdr.Get("Content-Type"), "javascript") || !strings.Contains(body, "data-confirm") {
				t.Errorf("%s: %d %s", path, code, hdr.Get("Content-Type"))
			}
			continue
		}
		if strings.HasSuffix(path, ".css") {
			continue
		}
		if m := inline.FindString(body); m != "" {
			t.Errorf("%s: inline script or style %q", path, m)
		}
		for _, tag := range scripts.FindAllString(body, -1) {
			if !strings.Contains(tag, ` src="/static/`) {
				t.Errorf("%s: a script not from the page's files: %s", path, tag)
			}
		}
	}
	_, _, body := p.get("/")
	if !strings.Contains(body, `<script src="/static/ui.js" defer></script>`) {
		t.Errorf("the page does not load its script file")
	}
}
