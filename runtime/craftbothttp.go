package runtime

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CraftbotHTTPOptions configure Craftbot.Handler.
type CraftbotHTTPOptions struct {
	// AdminToken, if set, is the bearer token GET /status requires;
	// without it /status answers loopback requests only.
	AdminToken string
	// MCPToken, if set, is the bearer token every MCP request requires.
	MCPToken string
}

// Handler serves the runtime over HTTP: Streamable HTTP at /mcp and at
// /chats/{id}/mcp (every chat is the same CraftBot: one set of servers,
// one list of actions; the id only keeps the volcanic gateway's URLs
// working), and GET /status. A browser page of a foreign Origin gets 403
// everywhere.
func (c *Craftbot) Handler(opts CraftbotHTTPOptions) http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return c.srv }, &mcp.StreamableHTTPOptions{})
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
		if p != "/mcp" {
			rest, ok := strings.CutPrefix(p, "/chats/")
			id, err := url.PathUnescape(strings.TrimSuffix(rest, "/mcp"))
			if !ok || !strings.HasSuffix(rest, "/mcp") || err != nil || !ChatIDPattern.MatchString(id) {
				cbWriteError(w, http.StatusNotFound, "not found: the endpoints are /mcp (also /chats/{id}/mcp, the same servers) and GET /status")
				return
			}
		}
		if tok := opts.MCPToken; tok != "" && !bearerMatches(r, tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpc"`)
			cbWriteError(w, http.StatusUnauthorized, "the MCP endpoints need the header Authorization: Bearer <token>: the token of --mcp-token-env, else the one in the MCP token file that mcpc run logged")
			return
		}
		mcpHandler.ServeHTTP(w, r)
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
