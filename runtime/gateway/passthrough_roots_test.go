package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// A client's notifications/roots/list_changed reaches the chat's servers,
// and their next roots/list sees the new roots: the conformance fixture
// logs the roots it lists when told they changed.
func TestGatewayPassesRootsListChanged(t *testing.T) {
	t.Parallel()
	gw, chat := conformanceGateway(t)

	logs := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			if req.Params.Logger == "conf/roots" {
				logs <- req.Params.Data.(string)
			}
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///first"})
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- gw.ServeTransport(context.Background(), chat, st) }()
	ctx := context.Background()
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		<-served
	})
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	// The chat's process starts with the first call, and asks the client.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_roots"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); got != "file:///first" {
		t.Fatalf("roots = %q, want the client's", got)
	}

	client.AddRoots(&mcp.Root{URI: "file:///second"})
	got := testservers.Recv(t, "the server's log of its new roots", logs)
	if want := "roots changed: file:///first file:///second"; got != want {
		t.Errorf("the server logged %q, want %q", got, want)
	}
	if strings.Contains(got, "mcpc:roots-changed") {
		t.Errorf("the server saw the gateway's marker root: %q", got)
	}
}
