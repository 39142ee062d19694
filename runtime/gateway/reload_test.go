package gateway

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// A reload under a connected client: the removed server's process stops
// and its tools go before Apply returns (a call fails at once), the
// changed server restarts with its new tools, the added one is discovered,
// the unchanged one keeps its process, and the client is told
// (notifications/tools/list_changed).
func TestApplyRemovesRestartsAddsAndTellsClients(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	pid := func(name string) string { return filepath.Join(dir, name+".pid") }
	keep := testServer("keep", "-tools", "echo", "-pidfile", pid("keep"))
	keep.ToolPrefix = "k_"
	gone := testServer("gone", "-tools", "echo", "-pidfile", pid("gone"))
	gone.ToolPrefix = "g_"
	changed := testServer("changed", "-tools", "echo", "-pidfile", pid("changed"))
	changed.ToolPrefix = "c_"
	logs := &logRecorder{}
	h := newTestHost(t, testPlan(keep, gone, changed), runtime.HostOptions{Env: testEnv(marker), Log: logs.log})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	var notified atomic.Int64
	cs := connectInMemory(t, gw, chat, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		notified.Add(1)
	}})
	ctx := context.Background()
	if got, want := listNames(t, cs), []string{"c_echo", "g_echo", "k_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	for _, tool := range []string{"k_echo", "g_echo", "c_echo"} {
		if got := testservers.CallText(t, cs, tool, map[string]any{"text": "hi"}); got != "hi" {
			t.Fatalf("%s: %q", tool, got)
		}
	}
	keepPid, gonePid, changedPid := testservers.ReadPid(t, pid("keep")), testservers.ReadPid(t, pid("gone")), testservers.ReadPid(t, pid("changed"))
	before := notified.Load()

	changed2 := changed
	changed2.Args = []string{"-tools", "echo,fail", "-pidfile", pid("changed")}
	added := testServer("added", "-tools", "echo")
	added.ToolPrefix = "a_"
	res, err := h.Apply(ctx, testPlan(keep, changed2, added))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Stopped, []string{"gone"}) || !slices.Equal(res.Restarted, []string{"changed"}) || !slices.Equal(res.Started, []string{"added"}) {
		t.Fatalf("Apply: stopped %v, restarted %v, started %v", res.Stopped, res.Restarted, res.Started)
	}
	// Before anything else: the removed server is gone, its tools too.
	if testservers.Alive(gonePid) || testservers.Alive(changedPid) {
		t.Errorf("after Apply, the removed server's process alive: %v, the changed one's: %v", testservers.Alive(gonePid), testservers.Alive(changedPid))
	}
	_, err = chat.Call(ctx, "g_echo", map[string]any{"text": "hi"})
	var ce *runtime.CallError
	if !errors.As(err, &ce) || ce.Kind != runtime.CallUnknownTool {
		t.Fatalf("a call to the removed server's tool: %v, want an unknown tool", err)
	}
	eventually(t, "notifications/tools/list_changed after the reload", func() bool { return notified.Load() > before })
	if got, want := listNames(t, cs), []string{"a_echo", "c_echo", "c_fail", "k_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools after the reload %v, want %v", got, want)
	}
	if got := testservers.CallText(t, cs, "a_echo", map[string]any{"text": "new"}); got != "new" {
		t.Errorf("the added server's tool: %q", got)
	}
	if got := testservers.CallText(t, cs, "k_echo", map[string]any{"text": "still"}); got != "still" {
		t.Errorf("the unchanged server's tool: %q", got)
	}
	if p := testservers.ReadPid(t, pid("keep")); p != keepPid || !testservers.Alive(keepPid) {
		t.Errorf("the unchanged server was restarted (pid %d, was %d)", p, keepPid)
	}
	testservers.CallText(t, cs, "c_echo", map[string]any{"text": "x"})
	if p := testservers.ReadPid(t, pid("changed")); p == changedPid {
		t.Errorf("the changed server still runs its old process %d", p)
	}
	if !strings.Contains(logs.text(), "plan reloaded: stopped gone; restarted changed; started added") {
		t.Errorf("log:\n%s", logs.text())
	}
	var names []string
	for _, s := range h.Status().Servers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"keep", "changed", "added"}) {
		t.Errorf("status lists %v", names)
	}
}

// A plan the host cannot run is refused and the running plan stays: its
// tools answer as before.
func TestApplyRefusesAndKeepsTheRunningPlan(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	h := newTestHost(t, testPlan(testServer("s", "-tools", "echo")), runtime.HostOptions{
		Env: testEnv(marker, "PLAIN_VAR=not-a-denied-name-value")})
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx := context.Background()
	sse := testServer("s")
	sse.Transport = "sse"
	withNewSecret := testServer("s", "-tools", "echo")
	withNewSecret.Env = map[string]*string{"V": ptr("${env:PLAIN_VAR}")}
	craftbot := testPlan(testServer("s"))
	craftbot.Profile = "craftbot"
	for _, c := range []struct {
		name string
		p    *plan.Plan
		want string
	}{
		{"sse", testPlan(sse), `transport "sse" is not run by this runtime`},
		{"twice", testPlan(testServer("s"), testServer("s")), "defined twice"},
		{"profile", craftbot, "runtime: a craftbot plan is not a volcanic plan"},
		{"new secret", testPlan(withNewSecret), "s (${env:PLAIN_VAR}) read host variables that the running gateway does not redact"},
	} {
		_, err := h.Apply(ctx, c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "not-a-denied-name-value") {
			t.Errorf("%s: the error shows a secret: %v", c.name, err)
		}
		res, err := chat.Call(ctx, "echo", map[string]any{"text": "still"})
		if err != nil || resultText(res) != "still" {
			t.Fatalf("%s: the running plan's tool after a refused reload: %v", c.name, err)
		}
	}
}

// A host runs a volcanic plan only: a craftbot plan is refused when the
// host is made, as it is at a reload and by the craftbot runtime the other
// way round (one plan check, checkPlan).
func TestNewHostRefusesACraftbotPlan(t *testing.T) {
	t.Parallel()
	p := testPlan(testServer("s", "-tools", "echo"))
	p.Profile = plan.ProfileCraftbot
	if h, err := runtime.NewHost(p, runtime.HostOptions{}); err == nil || err.Error() != "runtime: a craftbot plan is not a volcanic plan" {
		if h != nil {
			h.Close()
		}
		t.Errorf("NewHost of a craftbot plan: %v", err)
	}
	if _, err := NewCraftbot(testPlan(testServer("s")), runtime.CraftbotOptions{}); err == nil || err.Error() != "runtime: a volcanic plan is not a craftbot plan" {
		t.Errorf("NewCraftbot of a volcanic plan: %v", err)
	}
}

// Calls, listings and status running while plans are applied one after
// the other: the kept server answers every call; the removed one's calls
// that start after its Apply returned all fail; nothing races (-race).
func TestApplyUnderConcurrentCalls(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	keep := testServer("keep", "-tools", "echo")
	keep.ToolPrefix = "k_"
	flip := testServer("flip", "-tools", "echo")
	flip.ToolPrefix = "f_"
	h := newTestHost(t, testPlan(keep, flip), runtime.HostOptions{Env: testEnv(marker)})
	chat, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx := context.Background()
	if _, err := chat.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var removedAt atomic.Int64 // the generation of the Apply that removed flip, while it is removed
	go func() {
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			if _, err := chat.Call(ctx, "k_echo", map[string]any{"text": "k"}); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			gen := removedAt.Load()
			_, err := chat.Call(ctx, "f_echo", map[string]any{"text": "f"})
			if gen != 0 && removedAt.Load() == gen && err == nil {
				errs <- errors.New("a call that began after flip was removed reached it")
				return
			}
		}
	}()
	go func() {
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			h.Status()
			chat.Status()
		}
	}()
	for i := 1; i <= 6; i++ {
		p := testPlan(keep, flip)
		if i%2 == 1 {
			p = testPlan(keep)
		}
		if _, err := h.Apply(ctx, p); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			removedAt.Store(int64(i))
		} else {
			removedAt.Store(0)
		}
		if _, err := chat.Tools(ctx); err != nil { // the re-added server discovered
			t.Fatal(err)
		}
	}
	close(stop)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
