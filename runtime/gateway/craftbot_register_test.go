package gateway

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/internal/hooks"
)

// A call that comes after the host published a tool table with its action
// and before the host told the gateway reaches the action: the gateway
// registers what the table holds before it answers (it used to answer
// "unknown tool" from the MCP server's own registry). Not parallel: the
// hook is global.
func TestCraftbotCallWhileTableIsRegistered(t *testing.T) {
	marker := noLeaks(t)
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("fs", "-tools", "echo")), marker, runtime.CraftbotOptions{})
	cs := cbClient(t, cb, nil)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan outcome, 1)
	var once sync.Once
	hooks.TablePublished = func() {
		if cb.h.CurrentTable().ByName()["mcp_fs_echo"] == nil {
			return
		}
		once.Do(func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fs_echo", Arguments: map[string]any{"text": "hi"}})
			got <- outcome{res, err}
		})
	}
	t.Cleanup(func() { hooks.TablePublished = nil })
	startConnected(t, cb)
	o := <-got
	if o.err != nil {
		t.Fatalf("the call while the table was being registered: %v", o.err)
	}
	if txt := text(t, o.res); txt != "hi" {
		t.Errorf("result %q, want hi", txt)
	}
}
