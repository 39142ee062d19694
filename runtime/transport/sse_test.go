package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

func TestSSECallsToolsOfAGoServer(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	s := mustConnect(t, KindSSE, "http://"+addr+"/sse", http.Header{"X-Api-Key": {canary}}, RemoteOptions{})
	if got, err := call(t, s, "echo", map[string]any{"text": "hello"}); err != nil || got != "hello" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	// The header reached the server's own origin.
	if got, err := call(t, s, "header", map[string]any{"name": "X-Api-Key"}); err != nil || got != canary {
		t.Fatalf("header: %q, %v", got, err)
	}
	s.Close()
}

func TestSSECallsToolsOfServerEverything(t *testing.T) {
	noLeaks(t)
	url := testservers.StartEverythingSSE(t)
	s := mustConnect(t, KindSSE, url, nil, RemoteOptions{})
	var names []string
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !strings.Contains(","+strings.Join(names, ",")+",", ",echo,") {
		t.Fatalf("tools %v lack echo", names)
	}
	if got, err := call(t, s, "echo", map[string]any{"message": "over sse"}); err != nil || !strings.Contains(got, "over sse") {
		t.Fatalf("echo: %q, %v", got, err)
	}
	s.Close()
}

// An SSE server whose endpoint event names another origin: mcpc sends
// nothing there, neither the headers nor the session's messages.
func TestSSEForeignEndpointRefused(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	foreign, hits := foreignServer(t)
	_, err := connectRemote(t, KindSSE, "http://"+addr+"/sse-foreign?to="+foreign+"/message", http.Header{"X-Api-Key": {canary}}, RemoteOptions{})
	// The refusal fails the SDK's first POST (initialize); the SDK passes
	// a write error on as text (%v), so only its words survive.
	want := "the server sent mcpc to another origin (http://" + strings.TrimPrefix(foreign, "http://") + "); mcpc talks only to the origin of the configured url and sent nothing there"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), canary) {
		t.Fatalf("error %v, want one that says %q", err, want)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the other origin", n)
	}
}

func TestSSEHandshakeRefused(t *testing.T) {
	noLeaks(t)
	foreign, _ := foreignServer(t) // answers 418 to everything
	_, err := connectRemote(t, KindSSE, foreign+"/sse?key="+querySecret, http.Header{"X-Api-Key": {canary}}, RemoteOptions{})
	if re := remoteError(t, err, "the server refused the sse stream: 418 (I'm a teapot)"); re.Status != 418 {
		t.Fatalf("status %d", re.Status)
	}
}

// Cancelled calls end at once and the session goes on.
func TestSSECancelledCallKeepsTheConnection(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	s := mustConnect(t, KindSSE, "http://"+addr+"/sse", nil, RemoteOptions{})
	for i := range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": testservers.Patient.Milliseconds()}})
			done <- err
		}()
		cancel()
		if err := testservers.Recv(t, "the cancelled call to end", done); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call %d: %v", i, err)
		}
		if got, err := call(t, s, "echo", map[string]any{"text": "after"}); err != nil || got != "after" {
			t.Fatalf("echo after cancel %d: %q, %v", i, got, err)
		}
	}
	s.Close()
}

func TestSSEHandshakeTimeout(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	_, err := connectRemote(t, KindSSE, "http://"+addr+"/sse-mute?key="+querySecret, http.Header{"X-Api-Key": {canary}}, RemoteOptions{HandshakeTimeout: 200 * time.Millisecond})
	if re := remoteError(t, err, "no sse endpoint event within 200ms"); !re.Timeout {
		t.Fatal("not marked as a timeout")
	}
}

// An answer over the cap ends the stream, and the call says why. The SDK's
// reader ends the stream without a word; the transport watches the sizes.
func TestSSEOversizedEvent(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	s := mustConnect(t, KindSSE, "http://"+addr+"/sse", nil, RemoteOptions{MaxMessageBytes: 64 << 10})
	// Just under the cap passes whole.
	fits := strings.Repeat("x", 60<<10)
	if got, err := call(t, s, "echo", map[string]any{"text": fits}); err != nil || got != fits {
		t.Fatalf("echo of %d bytes: %d bytes, %v", len(fits), len(got), err)
	}
	_, err := call(t, s, "echo", map[string]any{"text": strings.Repeat("x", 100<<10)})
	remoteError(t, err, "the server sent an sse event larger than the cap of 64 KiB")
}

// eventSizes finds an event over the cap whatever the line endings, and
// never sums the events of a stream.
func TestEventSizes(t *testing.T) {
	event := func(n int, eol string) string {
		return "event: message" + eol + "data: " + strings.Repeat("x", n) + eol + eol
	}
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		for _, tc := range []struct {
			stream string
			want   bool
		}{
			{strings.Repeat(event(40, eol), 100), false}, // 100 events of 60 bytes, cap 100
			{event(40, eol) + event(120, eol) + event(10, eol), true},
			{"data: " + strings.Repeat("x", 60) + eol + "data: " + strings.Repeat("y", 60) + eol + eol, true}, // one event of two lines
		} {
			g := &originGuard{}
			r := &eventSizes{ReadCloser: io.NopCloser(strings.NewReader(tc.stream)), max: 100, g: g, lineStart: true}
			// Read in small pieces: a \r\n may be split between reads.
			buf := make([]byte, 7)
			for {
				if _, err := r.Read(buf); err != nil {
					break
				}
			}
			if g.sawOversized() != tc.want {
				t.Errorf("eol %q, stream of %d bytes: oversized %v, want %v", eol, len(tc.stream), g.sawOversized(), tc.want)
			}
		}
	}
}
