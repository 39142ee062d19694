package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// The two profiles make a call on one path (callOn, conn.go). These tests
// pin what the volcanic chat and the craftbot runtime did differently
// before (docs/decisions/0050-one-call-path.md).

// Null, empty or absent arguments reach a chat's server as {}, as a
// craftbot server's do: servers validate the arguments as an object, and
// null fails there.
func TestChatCallNullArgumentsAreAnObject(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(selfServer("self", nil)), runtime.HostOptions{Env: testEnv(marker, "SELF_TOKEN="+canaryToken)})
	c, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
	for _, args := range []any{nil, json.RawMessage("null"), json.RawMessage(" "), map[string]any(nil), json.RawMessage(`{"a":1}`)} {
		res, err := c.Call(context.Background(), "args", args)
		if err != nil {
			t.Fatal(err)
		}
		want := "{}"
		if raw, ok := args.(json.RawMessage); ok && strings.HasPrefix(string(raw), "{") {
			want = string(raw)
		}
		if got := text(t, res); got != want {
			t.Errorf("arguments %#v reached the server as %s, want %s", args, got, want)
		}
	}
}

// A craftbot call's errors name the tool as the agent knows it (the
// action), as a chat's do, not the server's own name of it.
func TestCraftbotCallErrorNamesTheAction(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("fs", "-tools", "fail")), marker, runtime.CraftbotOptions{})
	startConnected(t, cb)
	_, err := cb.Call(context.Background(), "mcp_fs_fail", map[string]any{"text": "boom"})
	var ce *runtime.CallError
	if !errors.As(err, &ce) || ce.Kind != runtime.CallServerError || !strings.HasPrefix(ce.Message, "MCP server fs: tool mcp_fs_fail: ") {
		t.Errorf("error %#v", err)
	}
}

// A call to a tool a reload removed is a protocol error for the client
// (unknown now; the client was told the list changed). The error the call
// gets is the host's (TestCraftbotCallToRemovedServer in package runtime).
func TestCraftbotCallToRemovedServer(t *testing.T) {
	t.Parallel()
	err := &runtime.CallError{Kind: runtime.CallUnknownTool, Tool: "mcp_b_echo",
		Message: "tool mcp_b_echo is no longer served: MCP server b was removed, disabled or changed by a reload of the plan"}
	if _, err := callResult(nil, err); err == nil {
		t.Error("the client gets an error result, want a protocol error")
	}
}

// A craftbot server's progress notifications during a call reach the
// client that made it, with the client's own token, as a chat's do.
func TestCraftbotRelaysProgress(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	conf := cbStdio("conf")
	conf.Command = testservers.Conformance(t)
	cb := newTestCraftbot(t, cbPlan(true, conf), marker, runtime.CraftbotOptions{})
	startConnected(t, cb)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = cb.ServeTransport(ctx, st)
	}()
	t.Cleanup(func() { cancel(); <-served })
	pc := &passClient{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, pc.options()).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "mcp_conf_test_tool_with_progress"}
	params.SetProgressToken("tok-cb")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); !strings.HasPrefix(got, "mcpc-") {
		t.Fatalf("the server saw progress token %q, want the runtime's own", got)
	}
	pc.awaitProgress(t, 3)
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for _, p := range pc.progress {
		if p.ProgressToken != "tok-cb" {
			t.Errorf("progress %+v, want the client's token", p)
		}
	}
}

// A call of an action no server serves gets the chat's error, word for
// word: one unknown-tool error for both profiles.
func TestCraftbotUnknownToolIsTheChatsError(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("fs", "-tools", "echo")), marker, runtime.CraftbotOptions{})
	startConnected(t, cb)
	_, err := cb.Call(context.Background(), "mcp_fs_nothing", nil)
	var ce *runtime.CallError
	if want := `unknown tool "mcp_fs_nothing"`; !errors.As(err, &ce) || ce.Kind != runtime.CallUnknownTool || ce.Message != want {
		t.Errorf("error %#v, want %s", err, want)
	}
}

// A craftbot server whose connect failed is connected again by a listing
// once the host's retry interval has passed, as a failed discovery is: the
// interval is the runtime's option, not a fixed 60 s.
func TestCraftbotRetryIsTheHostsInterval(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	fault := filepath.Join(ws, "fault")
	if err := os.WriteFile(fault, []byte("exit:3"), 0o600); err != nil {
		t.Fatal(err)
	}
	clock := clocktest.New()
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("fs", "-tools", "echo", "-fault-file", "fault")), marker,
		runtime.CraftbotOptions{Clock: clock, Workspace: ws, DiscoveryRetry: 5 * time.Second})
	startConnected(t, cb)
	os.Remove(fault)
	clock.Advance(5 * time.Second)
	cb.Tools(context.Background())
	if err := cb.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := serverStatus(cb, "fs"); st.Starts != 2 || st.State != runtime.StateRunning {
		t.Errorf("after the host's retry interval: %+v", st)
	}
}
