package gateway

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

// removeRemote removes a servers.json entry, as `mcpc remote remove` does.
func removeRemote(t *testing.T, ws, name string) {
	t.Helper()
	f, err := remote.Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := f.Without(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteFile(ws, f.Data, data, true); err != nil {
		t.Fatal(err)
	}
}

// `mcpc remote remove` under a running gateway takes effect at once: the
// very next call to the removed server's tool fails, saying why, without
// a tools/list first, and the client is then told the list changed.
func TestRemoteRemoveTakesEffectAtTheNextCall(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	a := remotetest.Start(t, remotetest.Options{Transport: "http"})
	h := remoteHost(t, marker, nil, nil)
	gw := NewGateway(h, GatewayOptions{})
	t.Cleanup(gw.Close)
	addRemote(t, ws, "c", remote.Server{Name: "a", URL: a.URL, Tools: []string{"echo"}}, remote.Headers{})
	chat, _ := h.Chat("c", ws)
	var changed atomic.Int32
	cs := connectInMemory(t, gw, chat, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) }})
	if got := listNames(t, cs); !slices.Equal(got, []string{"a__echo", "echo"}) {
		t.Fatalf("tools %v", got)
	}
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("a__echo before the remove: %v %+v", err, res)
	}
	n := changed.Load()

	removeRemote(t, ws, "a")
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || !res.IsError || resultText(res) != "remote server a was removed from servers.json" {
		t.Fatalf("a__echo right after the remove: %v %q", err, resultText(res))
	}
	eventually(t, "notifications/tools/list_changed after the remove", func() bool { return changed.Load() > n })
	if got := listNames(t, cs); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("tools after the remove %v", got)
	}
}

// `mcpc remote tools NAME …` under a running gateway: a tool the new
// allowlist drops fails at the next call, saying so; one it keeps is
// served by the edited entry's connection.
func TestRemoteAllowlistEditTakesEffectAtTheNextCall(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	a := remotetest.Start(t, remotetest.Options{Transport: "http", Tools: []string{"alpha", "beta"}})
	h := remoteHost(t, marker, nil, nil)
	addRemote(t, ws, "c", remote.Server{Name: "a", URL: a.URL, Tools: []string{"alpha", "beta"}}, remote.Headers{})
	chat, _ := h.Chat("c", ws)
	ctx := context.Background()
	tools, err := chat.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"echo", "a__alpha", "a__beta"}) {
		t.Fatalf("tools %v", names)
	}

	addRemote(t, ws, "c", remote.Server{Name: "a", URL: a.URL, Tools: []string{"alpha"}}, remote.Headers{})
	_, err = chat.Call(ctx, "a__beta", nil)
	if err == nil || err.Error() != "remote server a: tool beta is no longer allowed by servers.json (mcpc remote tools)" {
		t.Fatalf("a__beta after the allowlist dropped it: %v", err)
	}
	res, err := chat.Call(ctx, "a__alpha", nil)
	if err != nil || !strings.Contains(resultText(res), "alpha") {
		t.Fatalf("a__alpha after the edit: %v %q", err, resultText(res))
	}
	if got := a.Initialized.Load(); got != 2 {
		t.Errorf("%d handshakes, want 2: the edited entry connects anew", got)
	}
}
