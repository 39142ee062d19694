package transport

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

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
	remoteError(t, err, "I'm a teapot")
}

func TestSSEHandshakeTimeout(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	_, err := connectRemote(t, KindSSE, "http://"+addr+"/sse-mute?key="+querySecret, http.Header{"X-Api-Key": {canary}}, RemoteOptions{HandshakeTimeout: 200 * time.Millisecond})
	if re := remoteError(t, err, "no sse endpoint event within 200ms"); !re.Timeout {
		t.Fatal("not marked as a timeout")
	}
}
