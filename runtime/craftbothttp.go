package runtime

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/runtime/transport"
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
// working, and labels the sessions for MaxSessionsPerChat), and GET
// /status. A browser page of a foreign Origin gets 403 everywhere. The
// MCP endpoints are the volcanic gateway's transport (transport.
// StreamableServer), with the same body, Host and protocol version checks
// and the same session pool.
func (c *Craftbot) Handler(opts CraftbotHTTPOptions) http.Handler {
	pool := newSessionPool(c.clock, opts.MaxSessions, opts.MaxSessionsPerChat, opts.SessionIdleTimeout,
		func(level, _, msg string) { c.log(level, "", "%s", msg) })
	streams := transport.NewStreamableServer(c.srv, transport.StreamableOptions{EventStore: newEventStore(), Retry: sseRetry, Pool: pool})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		if !allowedOrigin(r) {
			cbWriteError(w, http.StatusForbidden, fmt.Sprintf("Origin %q is not a loopback origin: the gateway answers browser pages on this machine only", r.Header.Get("Origin")))
			return
		}
		if p == "/status" {
			if cbAdmin(w, r, opts.AdminToken) {
				cbWriteJSON(w, http.StatusOK, c.Status())
			}
			return
		}
		chat := ""
		if p != "/mcp" {
			rest, ok := strings.CutPrefix(p, "/chats/")
			id, err := url.PathUnescape(strings.TrimSuffix(rest, "/mcp"))
			if !ok || !strings.HasSuffix(rest, "/mcp") || err != nil || !ChatIDPattern.MatchString(id) {
				cbWriteError(w, http.StatusNotFound, "not found: the endpoints are /mcp (also /chats/{id}/mcp, the same servers) and GET /status")
				return
			}
			chat = id
		}
		if tok := opts.MCPToken; tok != "" && !bearerMatches(r, tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpc"`)
			cbWriteError(w, http.StatusUnauthorized, "the MCP endpoints need the header Authorization: Bearer <token>: the token of --mcp-token-env, else the one in the MCP token file that mcpc run logged")
			return
		}
		if !loopbackHostAllowed(w, r, cbWriteError) || !protocolVersionAllowed(w, r, cbWriteError) {
			return
		}
		data, ok := readRequestBody(w, r, opts.BodyTimeout, cbWriteError)
		if !ok {
			return
		}
		var body *transport.Body
		if r.Method == http.MethodPost {
			var err error
			if body, err = transport.DecodeBody(data); err != nil {
				cbWriteError(w, http.StatusBadRequest, "malformed payload: "+err.Error())
				return
			}
		}
		streams.Serve(w, r, chat, body)
	})
}

// cbAdmin authorizes GET /status.
func cbAdmin(w http.ResponseWriter, r *http.Request, tok string) bool {
	if tok != "" {
		if !bearerMatches(r, tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpc"`)
			cbWriteError(w, http.StatusUnauthorized, "the admin endpoints need the header Authorization: Bearer <token>: the token of --admin-token-env, else the one in the admin token file that mcpc run logged")
			return false
		}
	} else if !loopback.HostPort(r.Host) {
		cbWriteError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name: without an admin token the admin endpoints answer loopback requests only", r.Host))
		return false
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		cbWriteError(w, http.StatusMethodNotAllowed, "use GET")
		return false
	}
	return true
}

func cbWriteJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

func cbWriteError(w http.ResponseWriter, code int, msg string) {
	cbWriteJSON(w, code, map[string]string{"error": msg})
}
