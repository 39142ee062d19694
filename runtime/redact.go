package runtime

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/redact"
)

// redactResult returns res with every known secret replaced by [REDACTED]
// in every string it holds: text content, embedded resources, resource
// links, structured content (keys too) and _meta, each decoded string on
// its own (redact.JSON), so that a secret a text holds in JSON-escaped
// form is caught too and the result stays valid JSON. When nothing changed,
// res is returned as is; a result that cannot be redacted is withheld.
func redactResult(r *redact.Redactor, res *mcp.CallToolResult) *mcp.CallToolResult {
	if r.Empty() || res == nil {
		return res
	}
	return redact.Result(res, r.Redact)
}

// redactTool returns the agent's copy of a tool definition, named name,
// with every string redacted: title, description, and the input and output
// schemas, where a server could put a secret in a default or an example.
// ok is false when it could not be redacted: the tool is then not offered.
func redactTool(r *redact.Redactor, def *mcp.Tool, name string) (*mcp.Tool, bool) {
	if r.Empty() {
		out := *def
		out.Name = name
		return &out, true
	}
	out, err := redact.Tool(def, r.Redact)
	if err != nil {
		return nil, false
	}
	out.Name = name
	return out, true
}

// secretForms returns the forms of a secret value to redact besides the
// value itself and Go's JSON escaping (which compile.NewRedactor adds):
// JSON escaped without HTML escaping, as JavaScript's JSON.stringify and
// most servers write it.
func secretForms(s string) []string { return redact.SecretForms(s) }

// longestForm returns the length of the longest text a redactor built from
// forms replaces: compile.NewRedactor also replaces Go's JSON escaping of
// each form, which may be longer.
func longestForm(forms []string) int {
	n := 0
	for _, f := range forms {
		n = max(n, len(f))
		if b, err := json.Marshal(f); err == nil {
			n = max(n, len(b)-2)
		}
	}
	return n
}
