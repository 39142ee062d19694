// Package ui is mcpc ui: a small local web page that shows a deployment's
// servers (both profiles: searchable, filtered, each with what the host
// will do and every diagnostic), edits CraftBot's mcp_config.json the way
// its Settings → MCP page and mcpc config do, and is the console of a
// running gateway (its servers' state, restart and reset, the tools as the
// agent sees them, and calling one). Pages are html/template and embedded
// files; the only script is an embedded file (the Content-Security-Policy
// forbids inline ones), and every page works without it.
//
// It imports compile (volcanic rows and their diagnostics), craftbot (rows,
// the edits, through EditFile as mcpc config), diag, internal/inputfile,
// internal/loopback (which Host headers and listen addresses are loopback),
// plan and runtime (the gateway's admin client and status types).
package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/internal/private"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// Options are what one mcpc ui shows and may do.
type Options struct {
	// Profile is compile.ProfileVolcanic ("" too) or plan.ProfileCraftbot.
	Profile string
	// Compile are the volcanic sources (the source flags).
	Compile compile.Options
	// Config is craftbot's mcp_config.json, and Craftbot its options.
	Config   string
	Craftbot craftbot.Options
	// Gateway reads and drives a running gateway; nil shows no gateway
	// page. Its token stays on the server: no page holds it.
	Gateway *gateway.AdminClient
	// Token is the access token: a browser presents it once (?token=…)
	// and gets a session cookie; a request without a valid session is
	// refused (401). New requires one unless NoToken.
	Token string
	// TokenHint says where the owner finds the token (the address mcpc ui
	// printed, a file, a variable); the refusal page shows it. Never the
	// token itself.
	TokenHint string
	// NoToken serves without authentication: any process that can connect
	// reads the page and makes edits. The page then answers requests
	// addressed to a loopback host name only, and the caller must listen
	// on loopback.
	NoToken bool
	// Log, if set, receives a line per accepted edit and gateway action;
	// names only, never a value.
	Log func(string)
	// EditNotes, if set, gives what the page adds to its notice after an
	// accepted edit of the file it is given (a host version that applies
	// edits only at its next restart says so), asked at each edit.
	EditNotes func(configFile string) []string
	// Lint, if set, gives the deployment's diagnostics as mcpc lint
	// reports them (the compiler's, the deployment checks', the policy and
	// version packs', with mcpc.cue's severities and ignores) and the
	// compile result they are about, asked at each load of the servers
	// page; without it the page shows the compiler's diagnostics.
	Lint func() (*compile.Result, []diag.Diagnostic, error)
}

//go:embed assets
var assets embed.FS

// Edits reports whether the page edits the deployment's file (Config):
// a craftbot deployment's mcp_config.json.
func (o Options) Edits() bool { return profileViews[o.Profile].edits }

// Server is the page's HTTP handler.
type Server struct {
	opts   Options
	view   profileView // how the servers page shows opts.Profile
	key    []byte      // signs the session cookies and CSRF tokens of this process
	pages  map[string]*template.Template
	static http.Handler
}

const (
	// sessionCookie is the session's cookie name; the port of the page's
	// address is appended, so that two mcpc ui on one host (cookies do
	// not tell ports apart) do not replace each other's sessions.
	sessionCookie = "mcpc_ui_session"
	csrfField     = "csrf"
	// maxForm bounds a POST body: a name, a key and an env value.
	maxForm = 128 << 10
)

// contentSecurityPolicy allows the page's own files and nothing else: no
// inline script or style, no other origin, no framing; the script reads
// GET /state of its own origin (connect-src).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// New builds the page's handler.
func New(opts Options) (*Server, error) {
	if opts.Token == "" && !opts.NoToken {
		return nil, errors.New("ui: no access token (Options.NoToken serves without one)")
	}
	if opts.Token != "" && opts.NoToken {
		return nil, errors.New("ui: an access token and NoToken")
	}
	profile := opts.Profile
	if profile == "" {
		profile = compile.ProfileVolcanic
	}
	view, ok := profileViews[profile]
	if !ok {
		return nil, fmt.Errorf("ui: profile %q has no servers page", opts.Profile)
	}
	s := &Server{opts: opts, view: view, key: make([]byte, 32), pages: map[string]*template.Template{}}
	if _, err := rand.Read(s.key); err != nil {
		return nil, err
	}
	funcs := template.FuncMap{"yesNo": yesNo, "join": strings.Join, "wbr": wbr}
	for _, page := range []string{"servers", "gateway", "tools", "message"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/"+page+".html")
		if err != nil {
			return nil, err
		}
		s.pages[page] = t
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	s.static = http.StripPrefix("/static/", http.FileServerFS(static))
	return s, nil
}

// ServeHTTP checks every request (host, session, CSRF), then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if s.opts.NoToken && !loopback.HostPort(r.Host) {
		// DNS rebinding: a foreign name that resolves to 127.0.0.1.
		s.fail(w, r, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name: without a token mcpc ui answers this machine only", r.Host))
		return
	}
	if strings.HasPrefix(r.URL.Path, "/static/") && r.Method == http.MethodGet && !r.URL.Query().Has("token") {
		// The page's own style and script, the same in every mcpc: public,
		// so that the refusal page has its style too.
		s.static.ServeHTTP(w, r)
		return
	}
	sess, ok := s.session(w, r)
	if !ok {
		return
	}
	if r.Method == http.MethodPost && !s.sameOriginPost(w, r, sess) {
		return
	}
	switch p := r.URL.Path; {
	case p == "/" && r.Method == http.MethodGet:
		s.serversPage(w, r, sess)
	case p == "/edit" && r.Method == http.MethodPost:
		s.edit(w, r, sess)
	case p == "/gateway" && r.Method == http.MethodGet && s.opts.Gateway != nil:
		s.gatewayPage(w, r, sess)
	case (p == "/gateway/restart" || p == "/gateway/reset") && r.Method == http.MethodPost && s.opts.Gateway != nil:
		s.gatewayAction(w, r, sess, strings.TrimPrefix(p, "/gateway/"))
	case p == "/gateway/tools" && r.Method == http.MethodGet && s.opts.Gateway != nil:
		s.toolsPage(w, r, sess)
	case p == "/gateway/call" && r.Method == http.MethodPost && s.opts.Gateway != nil:
		s.callTool(w, r, sess)
	case p == "/state" && r.Method == http.MethodGet && s.opts.Gateway != nil:
		s.serveState(w, r)
	case p == "/favicon.ico":
		w.WriteHeader(http.StatusNoContent)
	default:
		s.fail(w, r, http.StatusNotFound, "not found: the pages are / (servers)"+gatewayHint(s.opts.Gateway != nil))
	}
}

func gatewayHint(on bool) string {
	if on {
		return ", /gateway (the console) and /gateway/tools"
	}
	return ""
}

// session returns the request's session id. A session is a random id in
// a cookie with its HMAC under this process's key, so only this process
// makes one. With a token, one is made only for a GET that presents the
// token (?token=…): the answer sets the cookie and sends the browser to
// the same address without the token, so that it stays in neither the
// address bar nor the history; any other request without a valid session
// is answered 401 here (ok false). Without a token every browser gets a
// session on its first request.
func (s *Server) session(w http.ResponseWriter, r *http.Request) (id string, ok bool) {
	name := cookieName(r.Host)
	id, valid := s.sessionOf(r, name)
	if s.opts.NoToken {
		if !valid {
			id = s.newSession(w, name) // this request's page's forms carry its CSRF token
		}
		return id, true
	}
	if r.URL.Query().Has("token") {
		// Presented again by a browser with a session, the token makes a
		// new one too: the address is the way in, whatever the cookie.
		if r.Method != http.MethodGet || !private.SameToken(r.URL.Query().Get("token"), s.opts.Token) {
			s.fail(w, r, http.StatusUnauthorized, "that is not this mcpc ui's token: "+s.howToGetIn())
			return "", false
		}
		s.newSession(w, name)
		s.log("a browser presented the token: a new session")
		q := r.URL.Query()
		q.Del("token")
		to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, to.String(), http.StatusSeeOther)
		return "", false
	}
	if !valid {
		s.fail(w, r, http.StatusUnauthorized, "this browser has no session of this mcpc ui: "+s.howToGetIn())
		return "", false
	}
	return id, true
}

// howToGetIn is the refusal page's advice.
func (s *Server) howToGetIn() string {
	hint := s.opts.TokenHint
	if hint == "" {
		hint = "the address mcpc ui printed when it started"
	}
	return "open " + hint + " (it ends in ?token=…); that gives this browser a session"
}

// cookieName is the session cookie's name for a page addressed as host
// (host:port): the port appended when it is one.
func cookieName(host string) string {
	_, port, err := net.SplitHostPort(host)
	if err != nil || port == "" || strings.Trim(port, "0123456789") != "" {
		return sessionCookie
	}
	return sessionCookie + "_" + port
}

// sessionOf is the request's session id if its cookie is one this
// process made.
func (s *Server) sessionOf(r *http.Request, name string) (string, bool) {
	c, err := r.Cookie(name)
	if err != nil {
		return "", false
	}
	id, _, _ := strings.Cut(c.Value, ".")
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" || !hmac.Equal([]byte(c.Value), []byte(s.sessionValue(id))) {
		return "", false
	}
	return id, true
}

// newSession makes a session and sets its cookie.
func (s *Server) newSession(w http.ResponseWriter, name string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: name, Value: s.sessionValue(id), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return id
}

// sessionValue is the cookie of session id.
func (s *Server) sessionValue(id string) string { return id + "." + s.sign("session\x00"+id) }

// sign is the HMAC of what, with this process's key.
func (s *Server) sign(what string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(what))
	return hex.EncodeToString(m.Sum(nil))
}

// csrfToken is the token a session's forms carry: bound to the session,
// so one read in another session (or another mcpc ui) is refused.
func (s *Server) csrfToken(sess string) string { return s.sign("csrf\x00" + sess) }

// sameOriginPost refuses a POST that another site's page could have sent:
// its Origin (else its Referer) must be this page's own, and its form must
// carry the session's CSRF token.
func (s *Server) sameOriginPost(w http.ResponseWriter, r *http.Request, sess string) bool {
	self := "http://" + r.Host
	if r.TLS != nil {
		self = "https://" + r.Host
	}
	origin := r.Header.Get("Origin")
	switch {
	case origin != "":
		if origin != self {
			s.fail(w, r, http.StatusForbidden, fmt.Sprintf("Origin %q is not this page's (%s): refused", origin, self))
			return false
		}
	case r.Referer() != "":
		if ref := r.Referer(); ref != self && !strings.HasPrefix(ref, self+"/") {
			s.fail(w, r, http.StatusForbidden, "the Referer is not this page: refused")
			return false
		}
	default:
		s.fail(w, r, http.StatusForbidden, "a POST needs an Origin or Referer header of this page: refused")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, http.StatusBadRequest, "the form could not be read")
		return false
	}
	if !hmac.Equal([]byte(r.PostForm.Get(csrfField)), []byte(s.csrfToken(sess))) {
		s.fail(w, r, http.StatusForbidden, "the form's CSRF token is not this session's (reload the page): refused")
		return false
	}
	return true
}

// page is what every page's layout shows.
type page struct {
	Title   string
	Nav     string // the page: servers, gateway or tools
	Gateway bool   // the gateway page exists
	CSRF    string
	Notice  string // what the last action did
	Problem string // why it was refused
	// Details are the diagnostics or messages of a refusal.
	Details []string
	Body    any
	// Live: the page's script polls GET /state and updates the cells
	// marked data-live.
	Live bool
}

// render writes a page; a template error is the server's fault.
func (s *Server) render(w http.ResponseWriter, code int, name string, p page) {
	p.Gateway = s.opts.Gateway != nil
	p.Live = p.Live && p.Gateway
	var b strings.Builder
	if err := s.pages[name].Execute(&b, p); err != nil {
		http.Error(w, "mcpc ui: cannot render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = fmt.Fprint(w, b.String())
}

// fail answers with a page that says what went wrong.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s.render(w, code, "message", page{Title: http.StatusText(code), Problem: msg})
}

func (s *Server) log(format string, args ...any) {
	if s.opts.Log != nil {
		s.opts.Log(fmt.Sprintf(format, args...))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// wbr is s, escaped, with a line-break opportunity after each underscore:
// a long env key (GITHUB_PERSONAL_ACCESS_TOKEN) wraps between its words,
// not mid-word.
func wbr(s string) template.HTML {
	parts := strings.Split(s, "_")
	for i := range parts {
		parts[i] = template.HTMLEscapeString(parts[i])
	}
	return template.HTML(strings.Join(parts, "_<wbr>"))
}
