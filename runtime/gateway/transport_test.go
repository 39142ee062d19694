package gateway

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// The runtime through its transports (package transport): a gateway
// served over LineTransport, and a server process over PipeConn.

// A gateway serves a chat over LineTransport to the SDK's own client.
func TestLineTransportGateway(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("s", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker)})
	chat, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	defer gw.Close()
	cs, served := serveLines(t, gw, chat)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over lines"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	if got := text(t, res); got != "over lines" {
		t.Errorf("echo: %q", got)
	}
	// Closes inW (the gateway's input ends) and outR: a write of the
	// gateway that was under way then fails with io.ErrClosedPipe, which is
	// the client leaving too.
	cs.Close()
	if err := <-served; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("serve: %v", err)
	}
}

// serveLines serves chat through gw over LineTransport on pipes, to the
// SDK's own client over IOTransport; served gets ServeTransport's error
// once the client's Close has ended the gateway's input.
func serveLines(t testing.TB, gw *Gateway, chat *runtime.Chat) (cs *mcp.ClientSession, served <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- gw.ServeTransport(context.Background(), chat, &transport.LineTransport{Reader: inR, Writer: outW})
		outW.Close()
		inR.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, done
}

// Messages far larger than the read buffer go through whole, both ways.
func TestLargeMessages(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("s", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker)})
	c, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
	big := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB
	res, err := c.Call(context.Background(), "echo", map[string]any{"text": big})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != big {
		t.Errorf("echo of 3 MiB came back as %d bytes", len(got))
	}
}
