package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testmain"
)

// authProbe sends raw requests to a gateway: over TCP at base
// (http://HOST:PORT) or over the unix socket of base unix:PATH.
type authProbe struct {
	t      *testing.T
	base   string
	client *http.Client
}

func newAuthProbe(t *testing.T, base string) *authProbe {
	tr := &http.Transport{}
	if path, ok := strings.CutPrefix(base, unixAddrPrefix); ok {
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		base = "http://localhost"
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &authProbe{t: t, base: base, client: &http.Client{Transport: tr}}
}

// do sends method path with body (a JSON-RPC message, or "") and the
// bearer token tok ("": none), and returns the status and the body.
func (p *authProbe) do(method, path, tok, sid, body string) (int, string) {
	p.t.Helper()
	req, err := http.NewRequest(method, p.base+path, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const (
	initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	echoCallBody   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"unauthorized"}}}`
)

// refusesWithoutTokens checks that every admin endpoint and the MCP
// endpoint answer 401 without a token, and with the other endpoints'
// token; that an initialize creates no chat; and that a tools/call on an
// open session (sid, made with the MCP token) does not run.
func (p *authProbe) refusesWithoutTokens(admin, mcpTok, sid string) {
	p.t.Helper()
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/status", ""},
		{"GET", "/chats/a/servers/srv", ""},
		{"POST", "/chats/a/reset", ""},
		{"POST", "/chats/a/servers/srv/restart", ""},
	} {
		for _, tok := range []string{"", mcpTok, "wrong-token-0123456789"} {
			if code, body := p.do(r.method, r.path, tok, "", r.body); code != http.StatusUnauthorized || !strings.Contains(body, "admin endpoints need the header Authorization") {
				p.t.Errorf("%s %s with token %q: %d %s, want 401", r.method, r.path, tok, code, body)
			}
		}
	}
	for _, tok := range []string{"", admin} {
		if code, body := p.do("POST", "/chats/fresh/mcp", tok, "", initializeBody); code != http.StatusUnauthorized || !strings.Contains(body, "MCP endpoints need the header Authorization") {
			p.t.Errorf("initialize with token %q: %d %s, want 401", tok, code, body)
		}
		if code, body := p.do("POST", "/chats/a/mcp", tok, sid, echoCallBody); code != http.StatusUnauthorized {
			p.t.Errorf("tools/call in a session with token %q: %d %s, want 401", tok, code, body)
		}
	}
}

// readToken reads a token file, checking it is 0600.
func readToken(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no token file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want 0600", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenLength {
		t.Fatalf("%s holds %d characters", path, len(tok))
	}
	return tok
}

// mcpc run --http without token flags: the admin endpoints and the MCP
// endpoints refuse (401) a request without a token, or with the other
// one's; a tools/call without the MCP token does not run; the generated
// tokens are in 0600 files of the runtime directory (0700), which the log
// names without the values; with them everything works, mcpc status reads
// the admin token's file by itself, and the files go with the gateway.
func TestRunHTTPAuthByDefault(t *testing.T) {
	marker, bin := processTest(t)
	calls := filepath.Join(t.TempDir(), "calls")
	plan := compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", "echo,env", "-call-log", calls}},
	})
	cmd, base, stderr := startRunHTTP(t, bin, "--plan", plan, "--workspace-root", filepath.Join(t.TempDir(), "chats"), "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	stop := cmd.stopOnCleanup(t)
	dir := filepath.Join(cmd.runtimeDir, "mcpc")
	key := testTokenKey(base)
	adminFile, mcpFile := tokenFilePath(dir, key, adminTokenKind), tokenFilePath(dir, key, mcpTokenKind)
	admin, mcpTok := readToken(t, adminFile), readToken(t, mcpFile)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v, want 0700", dir, err, fi)
	}
	if admin == mcpTok || mcpTok != cmd.mcpToken {
		t.Fatalf("the tokens: admin == mcp %v", admin == mcpTok)
	}
	for _, want := range []string{"admin token (GET /status, POST …/reset and …/restart need it; mcpc status reads it): " + adminFile,
		"MCP token (/chats/{id}/mcp needs Authorization: Bearer <the file's content>): " + mcpFile} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/chats/a/mcp", HTTPClient: cmd.client(tr)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := newAuthProbe(t, base)
	p.refusesWithoutTokens(admin, mcpTok, cs.ID())
	if b, _ := os.ReadFile(calls); len(b) != 0 {
		t.Errorf("a call without the MCP token ran: %q", b)
	}
	if got := callText(t, cs, "echo", map[string]any{"text": "a=" + admin + " m=" + mcpTok}); got != "a=[REDACTED] m=[REDACTED]" {
		t.Errorf("the generated tokens are not redacted: %q", got)
	}
	if b, _ := os.ReadFile(calls); strings.Count(string(b), "\n") != 1 {
		t.Errorf("calls with the token: %q", b)
	}
	if code, body := p.do("GET", "/status", admin, "", ""); code != 200 || !strings.Contains(body, `"state": "running"`) {
		t.Errorf("status with the admin token: %d %s", code, body)
	}
	cs.Close()

	// mcpc status finds the admin token by itself (the gateway's runtime
	// directory is the test's).
	t.Setenv("XDG_RUNTIME_DIR", cmd.runtimeDir)
	if code, out, errOut := run(t, "status", "--url", base); code != ExitOK || !strings.Contains(out, "chat a (") {
		t.Errorf("mcpc status --url without flags: exit %d\n%s%s", code, out, errOut)
	}
	// Another gateway's URL (no token file for its port) is refused with
	// what to do.
	other := httptestUnauthorized(t)
	if code, _, errOut := run(t, "status", "--url", other); code != ExitUsage || !strings.Contains(errOut, "401 Unauthorized") || !strings.Contains(errOut, "give --admin-token-env NAME") {
		t.Errorf("status of a gateway without its token: exit %d %s", code, errOut)
	}

	if err := stop(); err != nil {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
	for _, f := range []string{adminFile, mcpFile} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s outlived the gateway: %v", f, err)
		}
	}
	if s := stderr.String(); strings.Contains(s, admin) || strings.Contains(s, mcpTok) {
		t.Errorf("stderr shows a token:\n%s", s)
	}
}

// httptestUnauthorized is the URL of a loopback server that answers every
// request 401, as a gateway does without its token.
func httptestUnauthorized(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			w.WriteHeader(http.StatusTeapot) // no token may be sent to it
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error": "no token"}`)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// mcpc run --http unix:PATH: the socket is 0600 (only its owner can
// connect), the tokens still apply (mcpc status --socket reads the
// admin token's file), a second gateway on the same path is refused, the
// socket goes with the gateway, and a stale one is replaced.
func TestRunHTTPUnixSocket(t *testing.T) {
	marker, bin := processTest(t)
	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}}})
	sock := filepath.Join(privateDir(t), "gw.sock")
	args := []string{"--plan", plan, "--workspace-root", filepath.Join(t.TempDir(), "chats"), "--clean-env", "--env", "PATH=" + os.Getenv("PATH"), "--env", marker}
	for round := range 2 {
		cmd, base, stderr := startRunAt(t, bin, unixAddrPrefix+sock, args...)
		stop := cmd.stopOnCleanup(t)
		if base != unixAddrPrefix+sock {
			t.Fatalf("serving at %s, want %s", base, sock)
		}
		fi, err := os.Lstat(sock)
		if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want a socket 0600", sock, err, fi)
		}
		if entries, _ := os.ReadDir(filepath.Dir(sock)); len(entries) != 1 {
			t.Errorf("beside the socket: %v", entries)
		}
		dir := filepath.Join(cmd.runtimeDir, "mcpc")
		admin := readToken(t, tokenFilePath(dir, unixTokenKey(sock), adminTokenKind))
		p := newAuthProbe(t, base)
		tr := p.client.Transport.(*http.Transport)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: "http://localhost/chats/a/mcp", HTTPClient: cmd.client(tr)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.refusesWithoutTokens(admin, cmd.mcpToken, cs.ID())
		if got := callText(t, cs, "echo", map[string]any{"text": "over the socket"}); got != "over the socket" {
			t.Errorf("echo: %q", got)
		}
		cs.Close()
		if round == 0 {
			t.Setenv("XDG_RUNTIME_DIR", cmd.runtimeDir)
			if code, out, errOut := run(t, "status", "--socket", sock); code != ExitOK || !strings.Contains(out, "chat a (") {
				t.Errorf("mcpc status --socket: exit %d\n%s%s", code, out, errOut)
			}
			if code, _, errOut := run(t, append([]string{"run", "--http", unixAddrPrefix + sock}, args...)...); code != ExitUsage || !strings.Contains(errOut, sock+": something listens on it") {
				t.Errorf("a second gateway on the socket: exit %d %s", code, errOut)
			}
		}
		if err := stop(); err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
		if _, err := os.Lstat(sock); !os.IsNotExist(err) {
			t.Errorf("the socket outlived the gateway: %v", err)
		}
		if round == 0 {
			// A stale socket: its listener gone, the file left (as after
			// SIGKILL).
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			ln.SetUnlinkOnClose(false)
			ln.Close()
		}
	}
}

// --mcp-no-auth opens the MCP endpoints, loudly; the admin endpoints keep
// their token.
func TestRunHTTPMCPNoAuth(t *testing.T) {
	marker, bin := processTest(t)
	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}}})
	cmd, base, stderr := startRunHTTP(t, bin, "--plan", plan, "--workspace-root", filepath.Join(t.TempDir(), "chats"), "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--mcp-no-auth")
	stop := cmd.stopOnCleanup(t)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
	}()
	if cmd.mcpToken != "" {
		t.Errorf("an MCP token file with --mcp-no-auth")
	}
	if !strings.Contains(stderr.String(), "mcpc: warning: --mcp-no-auth: the MCP endpoints /chats/{id}/mcp at 127.0.0.1:0 are not authenticated: every user of this machine can call every server as you") {
		t.Errorf("no warning:\n%s", stderr.String())
	}
	p := newAuthProbe(t, base)
	if code, body := p.do("POST", "/chats/a/mcp", "", "", initializeBody); code != 200 {
		t.Errorf("initialize without a token: %d %s", code, body)
	}
	if code, _ := p.do("GET", "/status", "", "", ""); code != http.StatusUnauthorized {
		t.Errorf("status without a token: %d", code)
	}
}

// A runtime directory that another user made first, or that is open to
// others, is never used: mcpc run --http (which keeps its tokens there)
// and mcpc status refuse, naming it and what to do; mcpc run --stdio runs
// without its status socket, saying why.
func TestRunRuntimeDirRefused(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, fmt.Sprintf("mcpc-%d", os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}}})
	// An address it cannot listen on (TEST-NET-1): were the directory
	// taken, the run would fail there, not serve.
	httpArgs := []string{"run", "--plan", plan, "--http", "192.0.2.1:0", "--workspace-root", t.TempDir(), "--clean-env"}
	cases := []struct {
		setup func()
		want  string
	}{{func() { os.Chmod(dir, 0o777) }, dir + " is open to other users (mode 0777)"}}
	if os.Getuid() == 0 {
		cases = append(cases, struct {
			setup func()
			want  string
		}{func() { os.Chmod(dir, 0o700); os.Chown(dir, 65534, 65534) }, dir + " belongs to uid 65534, not to you"})
	}
	for _, c := range cases {
		c.setup()
		if code, _, errOut := run(t, httpArgs...); code != ExitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "--admin-token-env NAME and --mcp-token-env NAME") {
			t.Errorf("run --http: exit %d %s, want %q", code, errOut, c.want)
		}
		if code, _, errOut := run(t, "status"); code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("status: exit %d %s, want %q", code, errOut, c.want)
		}
		cs, wait := runStdio(t, "--plan", plan, "--workspace", filepath.Join(t.TempDir(), "ws"), "--clean-env", "--env", "PATH="+os.Getenv("PATH"))
		if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); got != "hi" {
			t.Errorf("stdio echo %q", got)
		}
		if code, stderr := wait(); code != ExitOK || !strings.Contains(stderr, "warning: no status socket") || !strings.Contains(stderr, c.want) {
			t.Errorf("run --stdio: exit %d\n%s", code, stderr)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("mcpc put %v in %s", entries, dir)
		}
	}
}

// Another local user (nobody) is refused by a default mcpc run --http:
// 401 on the admin and MCP endpoints, no access to the token files, no
// connection to a unix socket gateway. It needs root (to become nobody)
// and setpriv and curl.
func TestRunHTTPRefusesAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		testmain.Skip(t, "becoming another user needs root")
	}
	setpriv, err1 := exec.LookPath("setpriv")
	curl, err2 := exec.LookPath("curl")
	if err1 != nil || err2 != nil {
		testmain.Skip(t, "needs setpriv and curl")
	}
	marker, bin := processTest(t)
	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}}})
	args := []string{"--plan", plan, "--workspace-root", filepath.Join(t.TempDir(), "chats"), "--clean-env", "--env", "PATH=" + os.Getenv("PATH"), "--env", marker}
	asNobody := func(name string, arg ...string) (string, error) {
		out, err := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", name}, arg...)...).CombinedOutput()
		return string(bytes.TrimSpace(out)), err
	}
	// The temporary directories must be passable for nobody to reach the
	// socket: a 0711 directory of root's.
	sockDir := t.TempDir()
	os.Chmod(sockDir, 0o711)
	sock := filepath.Join(sockDir, "gw.sock")
	for _, addr := range []string{"127.0.0.1:0", unixAddrPrefix + sock} {
		cmd, base, stderr := startRunAt(t, bin, addr, args...)
		stop := cmd.stopOnCleanup(t)
		tokenFile := tokenFilePath(filepath.Join(cmd.runtimeDir, "mcpc"), testTokenKey(base), adminTokenKind)
		if out, err := asNobody("cat", tokenFile); err == nil {
			t.Errorf("nobody read the admin token file: %s", out)
		}
		if path, ok := strings.CutPrefix(base, unixAddrPrefix); ok {
			out, err := asNobody(curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", path, "http://localhost/status")
			if code, ok := err.(*exec.ExitError); !ok || code.ExitCode() != 7 { // 7: could not connect
				t.Errorf("nobody over the unix socket: %v %s", err, out)
			}
		} else {
			for _, r := range [][]string{{"GET", "/status"}, {"POST", "/chats/a/reset"}, {"POST", "/chats/a/servers/srv/restart"}} {
				out, err := asNobody(curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", r[0], base+r[1])
				if err != nil || out != "401" {
					t.Errorf("nobody: %s %s: %s %v", r[0], r[1], out, err)
				}
			}
			out, err := asNobody(curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
				"-H", "Accept: application/json, text/event-stream", "--data", initializeBody, base+"/chats/a/mcp")
			if err != nil || out != "401" {
				t.Errorf("nobody: initialize: %s %v", out, err)
			}
		}
		if err := stop(); err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
	}
}

// A generated admin token goes only to the address its gateway bound (or
// one that address holds): another user may listen on the same port of
// another loopback address, and a host name may resolve to it.
func TestAdminTokenFileOnlyForTheBoundAddress(t *testing.T) {
	key := func(addr string) string {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return tokenFileKey(a)
	}
	for _, c := range []struct {
		bound, url string
		sent       bool
	}{
		{"127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"127.0.0.1:8080", "http://[::1]:8080", false},
		{"127.0.0.1:8080", "http://localhost:8080", false},
		{"127.0.0.1:8080", "http://127.0.0.2:8080", false},
		{"127.0.0.1:8080", "http://127.0.0.1:8081", false},
		{"[::1]:8080", "http://[::1]:8080", true},
		{"[::1]:8080", "http://127.0.0.1:8080", false},
		{"0.0.0.0:8080", "http://127.0.0.1:8080", true},
		{"0.0.0.0:8080", "http://[::1]:8080", false},
		{"[::]:8080", "http://127.0.0.1:8080", true},
		{"[::]:8080", "http://[::1]:8080", true},
		{"192.0.2.7:8080", "http://127.0.0.1:8080", false},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		keys, local := urlTokenKeys(u)
		if sent := local && slices.Contains(keys, key(c.bound)); sent != c.sent {
			t.Errorf("gateway on %s, status of %s: token sent %v, want %v (keys %v)", c.bound, c.url, sent, c.sent, keys)
		}
	}
}
