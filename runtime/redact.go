package runtime

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile"
)

// redactResult returns res with every known secret replaced by [REDACTED]
// in every string it holds: text content, embedded resources, resource
// links, structured content (keys too) and _meta.
//
// The result is encoded and decoded generically, and each string is
// redacted on its own (in raw and JSON-escaped forms). Working on decoded
// strings, rather than on the encoded result, catches a secret that a text
// holds in JSON-escaped form (encoding again would escape it twice), and
// keeps the result valid JSON whatever the secret contains. When nothing
// changed, res is returned as is.
func redactResult(r *compile.Redactor, res *mcp.CallToolResult) *mcp.CallToolResult {
	if r.Empty() || res == nil {
		return res
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return withheld()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return withheld()
	}
	changed := false
	v = redactValue(r, v, &changed)
	if !changed {
		return res
	}
	clean, err := json.Marshal(v)
	if err != nil {
		return withheld()
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(clean, &out); err != nil {
		return withheld()
	}
	return &out
}

// redactValue redacts every string of a decoded JSON value, in place where
// it can, and records whether anything changed.
func redactValue(r *compile.Redactor, v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		y := r.Redact(x)
		if y != x {
			*changed = true
		}
		return y
	case []any:
		for i := range x {
			x[i] = redactValue(r, x[i], changed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[redactValue(r, k, changed).(string)] = redactValue(r, e, changed)
		}
		return out
	default:
		return v
	}
}

// secretForms returns the forms of a secret value to redact besides the
// value itself and Go's JSON escaping (which compile.NewRedactor adds):
// JSON escaped without HTML escaping, as JavaScript's JSON.stringify and
// most servers write it.
func secretForms(s string) []string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return []string{s}
	}
	b := bytes.TrimSpace(buf.Bytes())
	return []string{s, string(b[1 : len(b)-1])}
}

// withheld replaces a result that held a secret mcpc could not take out:
// better no result than a leaked secret.
func withheld() *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
		Text: "the tool result was withheld: it held a secret value that mcpc could not redact"}}}
}
