// Package ui is mcpc ui: a small local web page that shows a deployment's
// servers (both profiles), edits CraftBot's mcp_config.json the way its
// Settings → MCP page and mcpc config do, and shows and drives a running
// gateway (its status, restart and reset). Pages are html/template and
// embedded files; the only script is an embedded file (the
// Content-Security-Policy forbids inline ones).
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
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/craftbot"
	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/runtime"
)

// Options are what one mcpc ui shows and may do.
type Options struct {
	// Profile is compile.ProfileVolcanic or compile.ProfileCraftbot.
	Profile string
	// Compile are the volcanic sources (the source flags).
	Compile compile.Options
	// Config is craftbot's mcp_config.json, and Craftbot its options.
	Config   string
	Craftbot craftbot.Options
	// Gateway reads and drives a running gateway; nil shows no gateway
	// page. Its token stays on the server: no page holds it.
	Gateway *runtime.AdminClient
	// Token, when set, is the access token a browser must present once
	// (?token=…) before the page answers it; without one the page answers
	// requests addressed to a loopback host name only, and the caller must
	// listen on loopback.
	Token string
	// Log, if set, receives a line per accepted edit and gateway action;
	// names only, never a value.
	Log func(string)
}

//go:embed assets
var assets embed.FS

// Server is the page's HTTP handler.
type Server struct {
	opts   Options
	key    []byte // signs the CSRF and access cookies of this process
	pages  map[string]*template.Template
	static http.Handler
}

// Cookies: the session (random), and in token mode the proof that this
// session presented the token.
const (
	sessionCookie = "mcpc_ui_session"
	accessCookie  = "mcpc_ui_access"
	csrfField     = "csrf"
	// maxForm bounds a POST body: a name, a key and an env value.
	maxForm = 128 << 10
)

// contentSecurityPolicy allows the page's own files and nothing else: no
// inline script or style, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// New builds the page's handler.
func New(opts Options) (*Server, error) {
	s := &Server{opts: opts, key: make([]byte, 32), pages: map[string]*template.Template{}}
	if _, err := rand.Read(s.key); err != nil {
		return nil, err
	}
	funcs := template.FuncMap{"yesNo": yesNo}
	for _, page := range []string{"servers", "gateway", "message"} {
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

// ServeHTTP checks every request (host, access, CSRF), then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if s.opts.Token == "" && !loopback.HostPort(r.Host) {
		// DNS rebinding: a foreign name that resolves to 127.0.0.1.
		s.fail(w, r, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name: without a token mcpc ui answers this machine only", r.Host))
		return
	}
	sess := s.session(w, r)
	if s.opts.Token != "" && !s.access(w, r, sess) {
		return
	}
	if r.Method == http.MethodPost && !s.sameOriginPost(w, r, sess) {
		return
	}
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/static/") && r.Method == http.MethodGet:
		s.static.ServeHTTP(w, r)
	case p == "/" && r.Method == http.MethodGet:
		s.serversPage(w, r, sess)
	case p == "/edit" && r.Method == http.MethodPost:
		s.edit(w, r, sess)
	case p == "/gateway" && r.Method == http.MethodGet && s.opts.Gateway != nil:
		s.gatewayPage(w, r, sess)
	case (p == "/gateway/restart" || p == "/gateway/reset") && r.Method == http.MethodPost && s.opts.Gateway != nil:
		s.gatewayAction(w, r, sess, strings.TrimPrefix(p, "/gateway/"))
	case p == "/favicon.ico":
		w.WriteHeader(http.StatusNoContent)
	default:
		s.fail(w, r, http.StatusNotFound, "not found: the pages are / (servers)"+gatewayHint(s.opts.Gateway != nil))
	}
}

func gatewayHint(on bool) string {
	if on {
		return " and /gateway"
	}
	return ""
}

// session returns the browser's session id, making one (a cookie) for a
// browser that has none.
func (s *Server) session(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil && len(c.Value) == 64 {
		if _, err := hex.DecodeString(c.Value); err == nil {
			return c.Value
		}
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	// The request goes on with it: its page's forms carry its CSRF token.
	r.AddCookie(&http.Cookie{Name: sessionCookie, Value: id})
	return id
}

// sign is the HMAC of what, with this process's key.
func (s *Server) sign(what string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(what))
	return hex.EncodeToString(m.Sum(nil))
}

// csrfToken is the token a session's forms carry.
func (s *Server) csrfToken(sess string) string { return s.sign("csrf\x00" + sess) }

// access lets in a browser that presented the token: once as ?token=… (the
// answer sets a cookie bound to its session and sends it to the same page
// without the token), then by that cookie.
func (s *Server) access(w http.ResponseWriter, r *http.Request, sess string) bool {
	want := s.sign("access\x00" + sess)
	if c, err := r.Cookie(accessCookie); err == nil && hmac.Equal([]byte(c.Value), []byte(want)) {
		return true
	}
	if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet &&
		subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) == 1 {
		http.SetCookie(w, &http.Cookie{Name: accessCookie, Value: want, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q := r.URL.Query()
		q.Del("token")
		to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, to.String(), http.StatusSeeOther)
		return false
	}
	s.fail(w, r, http.StatusUnauthorized, "open the address mcpc ui printed, with ?token= and the token of its --token-env variable")
	return false
}

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
	Nav     string // the page: servers or gateway
	Gateway bool   // the gateway page exists
	CSRF    string
	Notice  string // what the last action did
	Problem string // why it was refused
	// Details are the diagnostics or messages of a refusal.
	Details []string
	Body    any
}

// render writes a page; a template error is the server's fault.
func (s *Server) render(w http.ResponseWriter, code int, name string, p page) {
	p.Gateway = s.opts.Gateway != nil
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
