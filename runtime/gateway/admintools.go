package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime"
)

// The admin endpoints of a chat's tools, for an operator's console (mcpc
// ui): GET …/tools lists the tools as the chat's agent sees them (names,
// descriptions, input schemas), POST …/tools/call calls one. They are
// admin endpoints, not the MCP endpoint, so that the answer goes through
// the gateway's one redacting writer (writeStatusJSON), which knows every
// secret of the host; and an operator needs only the admin token.

// AdminTool is one tool of a chat as GET …/tools lists it.
type AdminTool struct {
	// Name is the agent-visible name.
	Name string `json:"name"`
	// Server offers it (a remote server of the chat when Remote); Tool
	// is the server's own name for it.
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Remote      bool   `json:"remote,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema,omitempty"`
}

// AdminCall is the body of POST …/tools/call.
type AdminCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// AdminCallResult is its answer: the result, as the agent gets it, or the
// error of a call that has none (unknown tool, the server's JSON-RPC
// error).
type AdminCallResult struct {
	Result *mcp.CallToolResult `json:"result,omitempty"`
	Error  string              `json:"error,omitempty"`
}

// maxCallBody bounds the body of POST …/tools/call.
const maxCallBody = 1 << 20

// serveAdminTools answers GET …/tools for chat.
func serveAdminTools(w http.ResponseWriter, r *http.Request, chat *runtime.Chat, redact func(string) string) {
	tools, err := chat.Tools(r.Context())
	if err != nil {
		writeStatusError(w, http.StatusServiceUnavailable, err.Error(), redact)
		return
	}
	out := make([]AdminTool, 0, len(tools))
	for _, t := range tools {
		at := AdminTool{Name: t.Name, Server: t.Server, Tool: t.ServerTool, Remote: t.Remote}
		if t.Def != nil {
			at.Title, at.Description, at.InputSchema = t.Def.Title, t.Def.Description, t.Def.InputSchema
		}
		out = append(out, at)
	}
	writeStatusJSON(w, http.StatusOK, out, redact)
}

// serveAdminCall answers POST …/tools/call for chat: the call as an agent
// would make it (Chat.Call), its result or error redacted.
func serveAdminCall(w http.ResponseWriter, r *http.Request, chat *runtime.Chat, redact func(string) string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCallBody+1))
	if err != nil || len(body) > maxCallBody {
		writeStatusError(w, http.StatusBadRequest, fmt.Sprintf("the call's body could not be read (at most %d bytes)", maxCallBody), redact)
		return
	}
	var c AdminCall
	if err := json.Unmarshal(body, &c); err != nil || c.Name == "" {
		writeStatusError(w, http.StatusBadRequest, `the body is {"name": TOOL, "arguments": {…}}`, redact)
		return
	}
	var args any = c.Arguments
	if len(c.Arguments) == 0 {
		args = nil
	}
	res, err := chat.Call(r.Context(), c.Name, args)
	var ce *runtime.CallError
	switch {
	case err == nil:
		writeStatusJSON(w, http.StatusOK, AdminCallResult{Result: res}, redact)
	case errors.As(err, &ce) && (ce.Kind == runtime.CallUnknownTool || ce.Kind == runtime.CallServerError):
		writeStatusJSON(w, http.StatusOK, AdminCallResult{Error: ce.Message}, redact)
	default:
		// What the agent gets: a tool result with isError (callResult).
		res, _ := callResult(nil, err)
		if res == nil {
			writeStatusJSON(w, http.StatusOK, AdminCallResult{Error: err.Error()}, redact)
			return
		}
		writeStatusJSON(w, http.StatusOK, AdminCallResult{Result: res}, redact)
	}
}
