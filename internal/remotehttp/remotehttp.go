// Package remotehttp is how mcpc talks HTTP to a remote MCP server, for
// both profiles: which server urls travel in clear text (the one url
// policy), what a url's origin is, and the one guard every request of a
// connection goes through, which sends the configured headers to the url's
// origin only and refuses a request to any other origin, so that neither
// the headers nor the session's messages (the user's tool arguments)
// follow a redirect or an SSE endpoint event elsewhere.
package remotehttp

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpc-dev/mcpc/internal/loopback"
)

// Insecure reports whether rawURL sends its messages, and any credential,
// in clear text over the network: ws:// or http:// to a host that is not
// the loopback interface (localhost, 127.0.0.0/8, ::1). reason says so in
// a sentence for a lint warning. A url that does not parse is not
// insecure: validation reports it.
func Insecure(rawURL string) (insecure bool, reason string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return false, ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "ws" && scheme != "http" {
		return false, ""
	}
	if loopback.Host(u.Hostname()) {
		return false, ""
	}
	secure := map[string]string{"ws": "wss", "http": "https"}[scheme]
	return true, fmt.Sprintf("%s:// to %s sends the messages and any credential in clear text over the network; use %s://", scheme, u.Hostname(), secure)
}

// Origin is scheme://host:port of u, lower case, with the scheme's
// default port; ws and wss count as http and https (the websocket
// handshake is an HTTP request).
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "ws":
		scheme = "http"
	case "wss":
		scheme = "https"
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// ForeignOrigin is the error of a request the guard refused: the server
// sent mcpc to another origin.
type ForeignOrigin struct {
	Origin string // scheme://host:port, never a path or query
}

func (e *ForeignOrigin) Error() string {
	return "the server sent mcpc to another origin (" + e.Origin + "); mcpc talks only to the origin of the configured url and sent nothing there"
}

// Guard is the HTTP transport at the bottom of a remote connection: it
// adds the headers to requests to the url's origin, refuses every request
// to another origin (nothing is sent there), and hands the rest to its base
// transport. The caller's own bookkeeping (statuses, body caps) wraps it.
type Guard struct {
	origin  string
	headers http.Header
	base    http.RoundTripper
	owned   *http.Transport // base, when the guard made it

	mu      sync.Mutex
	refused *ForeignOrigin // the first request refused
}

// NewGuard returns the guard of a connection to the server at u. base nil
// means a clone of http.DefaultTransport, owned by the guard (see
// CloseIdleConnections).
func NewGuard(u *url.URL, headers http.Header, base http.RoundTripper) *Guard {
	g := &Guard{origin: Origin(u), headers: headers.Clone(), base: base}
	if base == nil {
		g.owned = http.DefaultTransport.(*http.Transport).Clone()
		g.base = g.owned
	}
	return g
}

// Client is the HTTP client of a connection whose requests go through rt,
// a transport that ends in a Guard: redirects within the origin are
// followed (the client's default of at most 10), any other is refused by
// the guard before it is sent.
func Client(rt http.RoundTripper) *http.Client { return &http.Client{Transport: rt} }

// RoundTrip sends req to the url's origin with the headers, or refuses it.
func (g *Guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if origin := Origin(req.URL); origin != g.origin {
		err := &ForeignOrigin{Origin: origin}
		g.mu.Lock()
		if g.refused == nil {
			g.refused = err
		}
		g.mu.Unlock()
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if len(g.headers) > 0 {
		req = req.Clone(req.Context())
		for name, vs := range g.headers {
			req.Header[http.CanonicalHeaderKey(name)] = vs
		}
	}
	return g.base.RoundTrip(req)
}

// Refused is the first request the guard refused, or nil. The go-sdk
// passes some transport errors on as text only; this keeps the cause.
func (g *Guard) Refused() *ForeignOrigin {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

// CloseIdleConnections closes the idle connections of a base transport
// the guard made, so that their goroutines end with the connection.
func (g *Guard) CloseIdleConnections() {
	if g.owned != nil {
		g.owned.CloseIdleConnections()
	}
}
