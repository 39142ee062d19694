package remote

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// redactResult returns res with every known secret replaced by [REDACTED]
// in every string it holds (text, structured content, resources, _meta),
// also in JSON-escaped form: the result goes through JSON, redacted as
// text, and back.
func redactResult(res *mcp.CallToolResult, redact func(string) string) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	data, err := json.Marshal(res)
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the result of the remote tool could not be encoded"}}}
	}
	red := redact(string(data))
	if red == string(data) {
		return res
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal([]byte(red), &out); err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the result of the remote tool held a secret and could not be redacted safely; it was dropped"}}}
	}
	return &out
}
