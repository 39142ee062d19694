package gateway

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// CraftbotHTTPOptions configure Craftbot.Handler.
type CraftbotHTTPOptions struct {
	// AdminToken, if set, is the bearer token GET /status requires;
	// without it /status answers loopback requests only.
	AdminToken string
	// MCPToken, if set, is the bearer token every MCP request requires.
	MCPToken string
	// MaxSessions, MaxSessionsPerChat and SessionIdleTimeout cap and
	// expire the MCP sessions as GatewayOptions' do (transport.SessionPool,
	// on the Craftbot's Clock); the chat of a session is the id of the
	// /chats/{id}/mcp it initialized on, "" for /mcp. 0: no cap, never.
	MaxSessions        int
	MaxSessionsPerChat int
	SessionIdleTimeout time.Duration
	// BodyTimeout bounds reading a request body, as GatewayOptions'
	// does. 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
}

// Handler serves the runtime over HTTP: Streamable HTTP at /mcp and at
// /chats/{id}/mcp (every chat is the same CraftBot: one set of servers,
// one list of actions; the id only keeps the volcanic gateway's URLs
// working, and labels the sessions for MaxSessionsPerChat), GET /status,
// and for an operator's console POST /servers/{name}/restart, GET /tools
// and POST /tools/call (admintools.go). A browser page of a foreign Origin gets 403 everywhere. The
// MCP endpoints are the go-sdk's Streamable HTTP handler behind the
// volcanic gateway's front (httpfront.go): the same token, body, Host and
// protocol version checks and the same session pool; the admin check and
// the status writer are the gateway's too.
func (c *Craftbot) Handler(opts CraftbotHTTPOptions) http.Handler {
	front := newMCPFront(c.h.Clock(), opts.MCPToken, opts.BodyTimeout, opts.MaxSessions, opts.MaxSessionsPerChat, opts.SessionIdleTimeout,
		c.Redact, func(level, _, msg string) { c.h.Log(level, "", "", "%s", msg) })
	c.srv.AddReceivingMiddleware(front.countCalls)
	streams := newSDKHandler(c.srv)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		if !allowedOrigin(r) {
			front.writeError(w, http.StatusForbidden, fmt.Sprintf("Origin %q is not a loopback origin: the gateway answers browser pages on this machine only", r.Header.Get("Origin")))
			return
		}
		if p == "/status" {
			if adminAllowed(w, r, opts.AdminToken, http.MethodGet, c.Redact) {
				writeStatusJSON(w, http.StatusOK, c.Status(), c.Redact)
			}
			return
		}
		if c.serveAdmin(w, r, p, opts.AdminToken) {
			return
		}
		chat := ""
		if p != "/mcp" {
			rest, ok := strings.CutPrefix(p, "/chats/")
			id, err := url.PathUnescape(strings.TrimSuffix(rest, "/mcp"))
			if !ok || !strings.HasSuffix(rest, "/mcp") || err != nil || !ChatIDPattern.MatchString(id) {
				front.writeError(w, http.StatusNotFound, "not found: the endpoints are /mcp (also /chats/{id}/mcp, the same servers), GET /status, POST /servers/{name}/restart, GET /tools and POST /tools/call")
				return
			}
			chat = id
		}
		if m := front.check(w, r); m != nil {
			front.serve(w, r, m, chat, c.srv, streams)
		}
	})
}

// serveAdmin answers the admin endpoints besides /status: POST
// /servers/{name}/restart (the server's connection or process stops; the
// next use starts it again), GET /tools and POST /tools/call. It reports
// whether p is one of them.
func (c *Craftbot) serveAdmin(w http.ResponseWriter, r *http.Request, p, token string) bool {
	switch {
	case p == "/tools":
		if adminAllowed(w, r, token, http.MethodGet, c.Redact) {
			serveAdminTools(w, r, c.chat, c.Redact)
		}
	case p == "/tools/call":
		if adminAllowed(w, r, token, http.MethodPost, c.Redact) {
			serveAdminCall(w, r, c.chat, c.Redact)
		}
	case strings.HasPrefix(p, "/servers/") && strings.HasSuffix(p, "/restart"):
		if !adminAllowed(w, r, token, http.MethodPost, c.Redact) {
			return true
		}
		name, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(p, "/servers/"), "/restart"))
		if err != nil {
			writeStatusError(w, http.StatusBadRequest, "the server name is not a valid URL path segment", c.Redact)
			return true
		}
		if err := c.chat.Restart(name); err != nil {
			writeStatusError(w, http.StatusNotFound, err.Error(), c.Redact)
			return true
		}
		writeStatusJSON(w, http.StatusOK, map[string]any{"server": name, "restarted": true}, c.Redact)
	default:
		return false
	}
	return true
}
