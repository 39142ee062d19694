package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON redacts each decoded string on its own, object keys too, keeps
// members in order and numbers as written, and fails on anything that is
// not one JSON value.
func TestJSON(t *testing.T) {
	key := `CANARY-"q"<9f8e>`
	red := New(SecretForms(key))
	out, changed, err := JSON([]byte(`{"a `+key[:7]+`":[1.50,true,null,{"`+strings.ReplaceAll(key, `"`, `\"`)+`":"x"}],"b":"\u003c"}`), red.Redact)
	if err != nil || !changed || string(out) != `{"a CANARY-":[1.50,true,null,{"[REDACTED]":"x"}],"b":"\u003c"}` {
		t.Errorf("JSON: %v %v %s", err, changed, out)
	}
	for _, bad := range []string{``, `{`, `{"a":1}{}`, `[1,]`, `"x`} {
		if _, _, err := JSON([]byte(bad), strings.ToUpper); err == nil {
			t.Errorf("JSON(%q) did not fail", bad)
		}
	}
}

// A result holding a secret in Go's and JavaScript's JSON escaping is
// redacted in every string; an unchanged result comes back as is; a tool
// definition keeps its name.
func TestResultAndTool(t *testing.T) {
	key := `CANARY-"q"<9f8e>`
	red := New(SecretForms(key)).Redact
	goEscaped, _ := json.Marshal(key)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(key)
	for _, text := range []string{"key " + key, string(goEscaped), strings.TrimSpace(buf.String())} {
		res := Result(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: map[string]any{key: text}}, red)
		b, _ := json.Marshal(res)
		if strings.Contains(string(b), "CANARY") || !strings.Contains(string(b), "[REDACTED]") {
			t.Errorf("%s: %s", text, b)
		}
	}
	plain := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "nothing secret"}}}
	if Result(plain, red) != plain {
		t.Error("an unchanged result was copied")
	}
	tool, err := Tool(&mcp.Tool{Name: "n " + key, Description: "uses " + key, InputSchema: map[string]any{"type": "object"}}, red)
	if err != nil || tool.Name != "n "+key || tool.Description != "uses [REDACTED]" {
		t.Errorf("Tool: %+v, %v", tool, err)
	}
}
