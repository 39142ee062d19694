package gateway

import (
	"context"
	"os/exec"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/supervisor"
)

// The real @modelcontextprotocol/server-everything, a second full-featured
// server besides the conformance fixture: its prompts, resources and
// resource templates read the same through the gateway as directly.
func TestGatewayPassesServerEverything(t *testing.T) {
	t.Parallel()
	command, args := testservers.NeedEverything(t)
	marker := noLeaks(t)
	s := testServer("everything")
	s.Command, s.Args = command, args
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", t.TempDir())
	through := connectVersion(t, gw, chat, nil, "2025-11-25")
	ctx := context.Background()
	// The chat's process starts with its first call.
	if _, err := through.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(command, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + testEnv(marker).Vars["PATH"], leakMarkerVar + "=" + marker}
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: supervisor.StopGrace}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	// server-everything does not exit when its stdin closes: the close
	// ends it after the runtime's own grace, not the SDK's default 5 s.
	t.Cleanup(func() { direct.Close() })

	names := func(cs *mcp.ClientSession) (prompts, uris, templates []string) {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, p.Name)
		}
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		for rt, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			templates = append(templates, rt.URITemplate)
		}
		slices.Sort(prompts)
		slices.Sort(uris)
		slices.Sort(templates)
		return prompts, uris, templates
	}
	dp, dr, dt := names(direct)
	tp, tr, tt := names(through)
	if len(dp) == 0 || len(dr) == 0 {
		t.Fatalf("server-everything offers no prompts or resources directly: %v %v", dp, dr)
	}
	if !slices.Equal(dp, tp) || !slices.Equal(dr, tr) || !slices.Equal(dt, tt) {
		t.Errorf("prompts %v / %v\nresources %v / %v\ntemplates %v / %v (direct / through the gateway)", dp, tp, dr, tr, dt, tt)
	}
	// A resource reads the same.
	want, err := direct.ReadResource(ctx, &mcp.ReadResourceParams{URI: dr[0]})
	if err != nil {
		t.Fatal(err)
	}
	got, err := through.ReadResource(ctx, &mcp.ReadResourceParams{URI: dr[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Contents) != len(want.Contents) || len(got.Contents) == 0 || got.Contents[0].Text != want.Contents[0].Text || string(got.Contents[0].Blob) != string(want.Contents[0].Blob) {
		t.Errorf("read %s: %+v through the gateway, %+v directly", dr[0], got.Contents, want.Contents)
	}
}
