package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// lineClient is a client of a gateway's chat served over a line transport
// on pipes that writes and reads the JSON-RPC lines itself, decoding
// nothing: what it allocates is next to nothing, so that the process's
// allocations are the gateway's.
type lineClient struct {
	t    testing.TB
	w    io.Writer
	r    *bufio.Reader
	next int
}

// serveRawLines serves chat over a line transport on pipes, initializes
// the session and returns a lineClient on it.
func serveRawLines(t testing.TB, gw *Gateway, chat *runtime.Chat) *lineClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- gw.ServeTransport(context.Background(), chat, &transport.LineTransport{Reader: inR, Writer: outW})
		outW.Close()
		inR.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		// What the gateway still writes (a tools/list_changed, say) must
		// be read for its session to end: the pipe holds nothing.
		go io.Copy(io.Discard, outR)
		<-served
	})
	c := &lineClient{t: t, w: inW, r: bufio.NewReader(outR)}
	c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *lineClient) send(line string) {
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns the line of its answer, skipping the
// notifications before it.
func (c *lineClient) call(method, params string) string {
	return c.answer(c.start(method, params))
}

// start sends a request and returns its id.
func (c *lineClient) start(method, params string) int {
	c.next++
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.next, method, params))
	return c.next
}

// answer returns the line of the answer to request id, skipping the
// notifications before it.
func (c *lineClient) answer(id int) string {
	want := fmt.Sprintf(`"id":%d,`, id)
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatalf("the answer to %d: %v", id, err)
		}
		if strings.Contains(line, want) {
			return line
		}
	}
}

const rawEcho = `{"name":"echo","arguments":{"text":"ping"}}`

// A proxied call over stdio decodes each message once: the call's params
// are not decoded again with a fresh 32 KiB decoder per decode, as the
// go-sdk's server decodes them (its _meta, then the params; fastcall.go).
// What stays is the go-sdk client's decoding of the server's answer (two
// such buffers), and the rest of the call, a few KB.
func TestStdioCallDecodesOnce(t *testing.T) {
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir()})
	chat, err := h.Chat("raw", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := serveRawLines(t, gw, chat)
	for range 20 { // the chat's process starts
		if got := c.call("tools/call", rawEcho); !strings.Contains(got, `"text":"ping"`) {
			t.Fatalf("echo: %s", got)
		}
	}
	const calls = 200
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range calls {
		c.call("tools/call", rawEcho)
	}
	goruntime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / calls
	t.Logf("%d B and %d allocations per call", perCall, (after.Mallocs-before.Mallocs)/calls)
	if perCall >= 3*32<<10 {
		t.Errorf("a proxied call allocates %d B; with each message decoded once it takes less than three 32 KiB decoder buffers", perCall)
	}
}

// The gateway's own allocations per proxied call over stdio, with a
// client that decodes nothing (lineClient):
// go test ./runtime/gateway -run XXX -bench GatewayOnlyCall -benchmem.
func BenchmarkGatewayOnlyCall(b *testing.B) {
	marker := noLeaks(b)
	h := newTestHost(b, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: b.TempDir()})
	chat, err := h.Chat("raw", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	c := serveRawLines(b, gw, chat)
	for range 50 {
		c.call("tools/call", rawEcho)
	}
	b.ReportAllocs()
	for b.Loop() {
		if got := c.call("tools/call", rawEcho); !strings.Contains(got, `"text":"ping"`) {
			b.Fatalf("echo: %s", got)
		}
	}
}

// A tools/call the stdio gateway answers beside the go-sdk's session is
// cancelled by the client's notifications/cancelled as one the SDK serves:
// the server is told, and the call is answered (a tool error saying so).
func TestStdioFastCallCancelled(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	calls, cancelled := filepath.Join(dir, "calls"), filepath.Join(dir, "cancelled")
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "slow", "-call-log", calls, "-cancel-marker", cancelled)), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir()})
	chat, err := h.Chat("raw", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := serveRawLines(t, gw, chat)
	id := c.start("tools/call", `{"name":"slow","arguments":{"ms":600000}}`)
	eventually(t, "the call reaches the server", func() bool { return len(lines(t, calls)) == 1 })
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"test"}}`, id))
	got := c.answer(id)
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "was cancelled") {
		t.Errorf("the answer to the cancelled call: %s", got)
	}
	eventually(t, "the server is told", func() bool {
		_, err := os.Stat(cancelled)
		return err == nil
	})
}
