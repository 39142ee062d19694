package runtime

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// A disabled server stops like a removed one and shows as disabled; a call
// in flight on it ends unavailable, saying why, as a craftbot server's
// does: it does not restart on the next call (docs/decisions/0050-one-call-path.md).
func TestApplyDisablesAServerWithACallInFlight(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	s := testServer("s", "-tools", "slow,echo")
	h := newTestHost(t, testPlan(s), HostOptions{Env: testEnv(marker)})
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx := context.Background()
	if _, err := chat.Call(ctx, "echo", map[string]any{"text": "start"}); err != nil {
		t.Fatal(err)
	}
	callErr := make(chan error, 1)
	go func() {
		_, err := chat.Call(ctx, "slow", map[string]any{"ms": 3600000})
		callErr <- err
	}()
	eventually(t, "the slow call in flight", func() bool {
		sl := chat.slotFor(h.server("s"))
		sl.mu.Lock()
		defer sl.mu.Unlock()
		return sl.inflight == 1
	})
	off := s
	off.Enabled = false
	if _, err := h.Apply(ctx, testPlan(off)); err != nil {
		t.Fatal(err)
	}
	err := testservers.Recv(t, "the slow call's end", callErr)
	var ce *CallError
	if want := "MCP server s was stopped during the call to tool slow: it was disabled"; !errors.As(err, &ce) || ce.Kind != CallUnavailable || ce.Message != want {
		t.Fatalf("the call in flight: %v", err)
	}
	if st := chat.Status().Servers; len(st) != 1 || st[0].State != StateDisabled {
		t.Fatalf("chat status %+v", st)
	}
	tools, err := chat.Tools(ctx)
	if err != nil || len(tools) != 0 {
		t.Fatalf("tools of a disabled server: %v %v", tools, err)
	}
}

// A call that reaches a craftbot server after a reload removed it gets the
// error a chat's call gets: the tool is no longer served.
func TestCraftbotCallToRemovedServer(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	stdio := func(name string) plan.Server {
		return plan.Server{Name: name, Transport: "stdio", Command: testBin, Args: []string{"-tools", "echo"}, Enabled: true,
			Env: map[string]*string{}, StartupTimeoutSeconds: patientSeconds}
	}
	auto := true
	craftbotPlan := func(servers ...plan.Server) *plan.Plan {
		return &plan.Plan{PlanVersion: plan.Version, Profile: plan.ProfileCraftbot, AutoConnect: &auto, Servers: servers}
	}
	h, _, chat, err := NewCraftbotHost(craftbotPlan(stdio("a"), stdio("b")), CraftbotOptions{Env: testEnv(marker), Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.StartDiscovery()
	if err := h.WaitDiscoveries(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := chat.lookup(context.Background(), "mcp_b_echo") // as a call holds it once it found the action
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.apply(context.Background(), craftbotPlan(stdio("a")), nil); err != nil {
		t.Fatal(err)
	}
	_, err = chat.slotFor(b.srv).call(context.Background(), b, map[string]any{"text": "x"})
	var ce *CallError
	want := "tool mcp_b_echo is no longer served: MCP server b was removed, disabled or changed by a reload of the plan"
	if !errors.As(err, &ce) || ce.Kind != CallUnknownTool || ce.Message != want {
		t.Errorf("error %#v, want %s", err, want)
	}
}
