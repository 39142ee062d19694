package runtime

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

// heldRequests is an HTTP transport for remote connections that holds
// every request hold picks until the request itself ends, and counts those
// in flight.
type heldRequests struct {
	base     http.RoundTripper
	hold     func(*http.Request) bool
	inFlight atomic.Int32
	arrived  chan struct{} // one value per held request
}

// isPing picks a ping. The body is read and put back for the server.
func isPing(req *http.Request) bool {
	if req.Method != http.MethodPost || req.Body == nil {
		return false
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(body))
	return err == nil && bytes.Contains(body, []byte(`"method":"ping"`))
}

// isHandshake picks the first request of a connection: its initialize.
func isHandshake(req *http.Request) bool {
	return req.Method == http.MethodPost && req.Header.Get("Mcp-Session-Id") == ""
}

func (t *heldRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.hold(req) {
		return t.base.RoundTrip(req)
	}
	t.inFlight.Add(1)
	defer t.inFlight.Add(-1)
	t.arrived <- struct{}{}
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// Host.Close waits for the chat's remote work in the background: a call
// that timed out is followed by a ping that asks whether the server still
// answers (and drops the connection if not); that ping, held here until it
// is given up, has ended when Host.Close returns, not later. (This test
// held the DELETE of a dropped connection before; a failed connection is
// abandoned now and sends none.)
func TestRemoteWorkEndsBeforeHostClose(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, "c1", remote.Server{Name: "s", URL: srv.URL, Transport: "http"}, remote.Headers{})
	held := &heldRequests{base: newRemoteTransport(), hold: isPing, arrived: make(chan struct{}, 10)}
	h := heldRemoteHostWith(t, marker, held, 300*time.Millisecond)
	defer h.Close()
	chat, err := h.Chat("c1", ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chat.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A call that never ends times out (300 ms: a short timeout for the
	// one call that must time out); the ping follows in the background.
	if _, err := chat.Call(context.Background(), "s__slow", map[string]any{"ms": 600000}); err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("the slow call: %v", err)
	}
	testservers.Recv(t, "the ping after the timed-out call", held.arrived)
	h.Close()
	if n := held.inFlight.Load(); n != 0 {
		t.Errorf("Host.Close returned while %d ping(s) of the chat's remote servers still ran", n)
	}
}

// Host.Close waits for a connect in progress: a chat connects in the
// background, and its handshake, held here until it is given up, has
// ended when Host.Close returns.
func TestRemoteConnectEndsBeforeHostClose(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	addRemote(t, ws, "c1", remote.Server{Name: "s", URL: srv.URL, Transport: "http"}, remote.Headers{})
	held := &heldRequests{base: newRemoteTransport(), hold: isHandshake, arrived: make(chan struct{}, 10)}
	h := heldRemoteHost(t, marker, held)
	if _, err := h.Chat("c1", ws); err != nil {
		t.Fatal(err)
	}
	testservers.Recv(t, "the handshake of the chat's remote server", held.arrived)
	h.Close()
	if n := held.inFlight.Load(); n != 0 {
		t.Errorf("Host.Close returned while %d handshake(s) of the chat's remote servers still ran", n)
	}
}

// heldRemoteHost is a host with remote servers whose connections go
// through held.
func heldRemoteHost(t *testing.T, marker string, held *heldRequests) *Host {
	t.Helper()
	return heldRemoteHostWith(t, marker, held, 0)
}

// heldRemoteHostWith is heldRemoteHost with a remote call timeout (0: the
// default).
func heldRemoteHostWith(t *testing.T, marker string, held *heldRequests, callTimeout time.Duration) *Host {
	t.Helper()
	dial := patientDial
	dial.Transport = held
	return newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), HostOptions{
		Env:    testEnv(marker, "MCP_ENCRYPTION_SECRET="+remoteSecret),
		Remote: &RemoteOptions{Dial: dial, CallTimeout: callTimeout},
	})
}
