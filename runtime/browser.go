package runtime

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The browser of the Playwright preset can die without its server:
// @playwright/mcp starts chromium in a session of its own, and when that
// process is killed (or crashes, or runs out of memory) the server lives on,
// answers the next call with an error that names no lost state, and the
// call after that silently opens a new, empty browser. The agent is told
// instead, as when the server itself dies (SPEC §4).

// browserClosed is what @playwright/mcp (0.0.82) answers a call with once
// its browser is gone.
const browserClosed = "Target page, context or browser has been closed"

// browserLost turns the error result of a playwright call whose browser is
// gone into the message of SPEC §4: browser state was lost, the next call
// starts a new browser. The server's own text (the browser's whole log)
// is cut to its first line. Other results are returned as they are.
func browserLost(server string, res *mcp.CallToolResult) *mcp.CallToolResult {
	if server != "playwright" || res == nil || !res.IsError {
		return res
	}
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok || !strings.Contains(tc.Text, browserClosed) {
			continue
		}
		first := ""
		for _, line := range strings.Split(tc.Text, "\n") {
			if strings.Contains(line, browserClosed) {
				first = strings.TrimSpace(line)
				break
			}
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: "The browser of MCP server playwright closed or died (" + first + "). The next call starts a new browser; browser state was lost.",
		}}}
	}
	return res
}
