package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// canary is a header value, and querySecret a key in a url's query, that
// must never appear in an error.
const (
	canary      = "CANARY-ws-secret-4f1d9c"
	querySecret = "QUERY-secret-9e2b"
)

// connectRemote connects an MCP client over NewRemote(kind, url, …).
func connectRemote(t *testing.T, kind, url string, headers http.Header, opts RemoteOptions) (*mcp.ClientSession, error) {
	t.Helper()
	tr, err := NewRemote(kind, url, headers, opts)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpc-test", Version: "1"}, nil)
	s, err := client.Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// mustConnect is connectRemote that must succeed.
func mustConnect(t *testing.T, kind, url string, headers http.Header, opts RemoteOptions) *mcp.ClientSession {
	t.Helper()
	s, err := connectRemote(t, kind, url, headers, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return s
}

// call calls tool with args and returns the text of its result.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (string, error) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("%s: unexpected result %+v", tool, res)
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// remoteError asserts that err is a *RemoteError whose reason contains
// want and holds no canary, and returns it.
func remoteError(t *testing.T, err error, want string) *RemoteError {
	t.Helper()
	var re *RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a *RemoteError", err, err)
	}
	if !strings.Contains(re.Reason, want) {
		t.Fatalf("reason %q does not say %q", re.Reason, want)
	}
	if strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), querySecret) {
		t.Fatalf("error leaks a header or the url's query: %v", err)
	}
	return re
}

func TestWebSocketCallsTools(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t, "-require-header", "X-Api-Key="+canary)
	const limit = 1 << 20
	s := mustConnect(t, KindWebSocket, "ws://"+addr+"/ws?key="+querySecret, http.Header{"X-Api-Key": {canary}}, RemoteOptions{MaxMessageBytes: limit})
	var names []string
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "echo") {
		t.Fatalf("tools %v lack echo", names)
	}
	if got, err := call(t, s, "echo", map[string]any{"text": "hello"}); err != nil || got != "hello" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	// A message just under the cap passes whole.
	big := strings.Repeat("x", limit-1024)
	if got, err := call(t, s, "echo", map[string]any{"text": big}); err != nil || got != big {
		t.Fatalf("echo of %d bytes: %d bytes, %v", len(big), len(got), err)
	}
	if got, _ := call(t, s, "header", map[string]any{"name": "Sec-WebSocket-Protocol"}); got != "mcp" {
		t.Fatalf("offered subprotocols %q, want mcp", got)
	}
	// Calls at once write at once; each gets its own answer.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			text := strconv.Itoa(i)
			if got, err := call(t, s, "echo", map[string]any{"text": text}); err != nil || got != text {
				t.Errorf("concurrent echo %d: %q, %v", i, got, err)
			}
		})
	}
	wg.Wait()
	s.Close()
}

// A cancelled call ends at once, and the connection goes on: the
// library closes a websocket whose write context ends during the write,
// and the SDK writes each request with its call's context (a regression:
// cancelling a call dropped the connection, 1006, for every other call).
func TestWebSocketCancelledCallKeepsTheConnection(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	s := mustConnect(t, KindWebSocket, "ws://"+addr+"/ws", nil, RemoteOptions{})
	for i := range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": testservers.Patient.Milliseconds()}})
			done <- err
		}()
		cancel() // before, during or after the request's write
		if err := testservers.Recv(t, "the cancelled call to end", done); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call %d: %v", i, err)
		}
		if got, err := call(t, s, "echo", map[string]any{"text": "after"}); err != nil || got != "after" {
			t.Fatalf("echo after cancel %d: %q, %v", i, got, err)
		}
	}
	s.Close()
}

// A call cancelled while it runs on the server: the server is told
// (notifications/cancelled) and stops it.
func TestWebSocketCancelTellsTheServer(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	s := mustConnect(t, KindWebSocket, "ws://"+addr+"/ws", nil, RemoteOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": testservers.Patient.Milliseconds()}})
		done <- err
	}()
	testservers.WaitUntil(t, "the slow call to run on the server", func() bool { return count(t, s, "slow-running") == 1 })
	cancel()
	if err := testservers.Recv(t, "the cancelled call to end", done); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	testservers.WaitUntil(t, "the server to stop the cancelled call", func() bool { return count(t, s, "cancelled") == 1 })
	s.Close()
}

// count calls a tool of the test server that answers a number.
func count(t *testing.T, s *mcp.ClientSession, tool string) int {
	t.Helper()
	got, err := call(t, s, tool, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(got)
	if err != nil {
		t.Fatalf("%s: %q", tool, got)
	}
	return n
}

func TestWebSocketSubprotocol(t *testing.T) {
	noLeaks(t)
	// A server that names no subprotocol is served (as Python's client
	// does); one that names another is refused.
	none := testservers.StartWSServer(t, "-subprotocol", "")
	s := mustConnect(t, KindWebSocket, "ws://"+none+"/ws", nil, RemoteOptions{})
	if got, err := call(t, s, "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	s.Close()
	_, err := connectRemote(t, KindWebSocket, "ws://"+none+"/ws-wrong-protocol", nil, RemoteOptions{})
	remoteError(t, err, `the websocket handshake failed: WebSocket protocol violation: unexpected Sec-WebSocket-Protocol from server: "graphql-ws"`)
}

func TestWebSocketHandshakeRefused(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t, "-require-header", "X-Api-Key=right-key")
	_, err := connectRemote(t, KindWebSocket, "ws://"+addr+"/ws?key="+querySecret, http.Header{"X-Api-Key": {canary}}, RemoteOptions{})
	re := remoteError(t, err, "the server refused the websocket handshake: 401 (Unauthorized)")
	if re.Status != 401 {
		t.Fatalf("status %d", re.Status)
	}
}

func TestWebSocketHandshakeTimeout(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	// A TCP listener that accepts and never says a word: not even HTTP.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mute.Close() })
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	for _, url := range []string{
		"ws://" + addr + "/ws-hang?key=" + querySecret, // HTTP, never upgraded
		"ws://" + mute.Addr().String() + "/ws?key=" + querySecret,
	} {
		_, err := connectRemote(t, KindWebSocket, url, nil, RemoteOptions{HandshakeTimeout: 200 * time.Millisecond})
		if re := remoteError(t, err, "no websocket handshake within 200ms"); !re.Timeout {
			t.Fatal("not marked as a timeout")
		}
	}
}

func TestWebSocketConnectionRefused(t *testing.T) {
	noLeaks(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close()
	_, err := connectRemote(t, KindWebSocket, "ws://"+addr+"/ws?key="+querySecret, nil, RemoteOptions{})
	remoteError(t, err, "connection refused")
}

// startTLSServer starts the test server over TLS and returns its address
// and an HTTP transport that trusts its certificate.
func startTLSServer(t *testing.T) (string, *http.Transport) {
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	addr := testservers.StartWSServer(t, "-tls-cert", certFile)
	pemData, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemData) {
		t.Fatal("no certificate in " + certFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	t.Cleanup(tr.CloseIdleConnections)
	return addr, tr
}

func TestRemoteOverTLS(t *testing.T) {
	noLeaks(t)
	addr, trusting := startTLSServer(t)
	for _, tc := range []struct{ kind, url string }{
		{KindWebSocket, "wss://" + addr + "/ws"},
		{KindSSE, "https://" + addr + "/sse"},
	} {
		s := mustConnect(t, tc.kind, tc.url, http.Header{"X-Api-Key": {canary}}, RemoteOptions{Transport: trusting})
		if got, err := call(t, s, "header", map[string]any{"name": "X-Api-Key"}); err != nil || got != canary {
			t.Fatalf("%s: header %q, %v", tc.kind, got, err)
		}
		s.Close()
		// Without the test's certificate in the roots, the server is not
		// trusted.
		_, err := connectRemote(t, tc.kind, tc.url+"?key="+querySecret, http.Header{"X-Api-Key": {canary}}, RemoteOptions{})
		if err == nil || !strings.Contains(err.Error(), "TLS certificate is signed by an unknown authority") || strings.Contains(err.Error(), querySecret) {
			t.Fatalf("%s without the certificate: %v", tc.kind, err)
		}
	}
}

// foreignServer is a real HTTP server on 127.0.0.1, another origin, that
// counts the requests reaching it.
func foreignServer(t *testing.T) (url string, hits *atomic.Int32) {
	hits = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "foreign", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

func TestWebSocketRedirectToAnotherOriginRefused(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	foreign, hits := foreignServer(t)
	_, err := connectRemote(t, KindWebSocket, "ws://"+addr+"/ws-redirect?to="+foreign+"/ws", http.Header{"X-Api-Key": {canary}}, RemoteOptions{})
	remoteError(t, err, "the server sent mcpc to another origin (http://"+strings.TrimPrefix(foreign, "http://")+")")
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the other origin", n)
	}
}

func TestWebSocketBadServerMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		opts RemoteOptions
		want string
		code int
	}{
		{name: "binary message", tool: "binary",
			want: "the server sent a binary websocket message; MCP over websocket is text only"},
		{name: "text that is not JSON-RPC", tool: "garbage",
			want: "the server sent a message that is not JSON-RPC: invalid character 'h' in literal true (expecting 'r')"},
		{name: "oversized message", tool: "big", args: map[string]any{"bytes": 1 << 20}, opts: RemoteOptions{MaxMessageBytes: 64 << 10},
			want: "the server sent a websocket message larger than the cap of 64 KiB"},
		{name: "going away mid-call", tool: "close", args: map[string]any{"code": 1001, "reason": "shutting down"},
			want: "the server is going away (websocket close 1001): shutting down", code: 1001},
		{name: "policy violation mid-call", tool: "close", args: map[string]any{"code": 1008, "reason": "bad token " + canary},
			want: "the server closed the websocket for a policy violation (1008): bad token [REDACTED]", code: 1008},
		{name: "normal closure mid-call", tool: "close", args: map[string]any{"code": 1000},
			want: "the server closed the websocket (1000, normal closure)", code: 1000},
		{name: "internal error mid-call", tool: "close", args: map[string]any{"code": 1011},
			want: "the server closed the websocket on an internal error (1011)", code: 1011},
		{name: "dropped mid-call", tool: "drop",
			want: "the connection to the server was lost without a websocket close (1006, abnormal closure)", code: 1006},
		{name: "ping flood", tool: "flood-pings", opts: RemoteOptions{PingBurst: 20, PingRate: 1},
			want: "the server flooded the websocket with pings (more than 20 at once, or 1 a second)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			addr := testservers.StartWSServer(t)
			s := mustConnect(t, KindWebSocket, "ws://"+addr+"/ws?key="+querySecret, http.Header{"X-Api-Key": {canary}}, tc.opts)
			_, err := call(t, s, tc.tool, tc.args)
			re := remoteError(t, err, tc.want)
			if re.CloseCode != tc.code {
				t.Errorf("close code %d, want %d", re.CloseCode, tc.code)
			}
			// The session is over, and says why to the next call at once.
			s.Wait()
			if _, err := call(t, s, "echo", map[string]any{"text": "again"}); err == nil {
				t.Fatal("a call on the dead session succeeded")
			}
		})
	}
}

func TestWebSocketPingTimeout(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t, "-no-pong")
	s := mustConnect(t, KindWebSocket, "ws://"+addr+"/ws", nil, RemoteOptions{PingInterval: 20 * time.Millisecond, PingTimeout: 200 * time.Millisecond})
	// The call would sleep for a day: the keepalive ends it.
	_, err := call(t, s, "slow", map[string]any{"ms": testservers.Patient.Milliseconds()})
	if re := remoteError(t, err, "the server did not answer a websocket ping within 200ms"); !re.Timeout {
		t.Fatal("not marked as a timeout")
	}
}

func TestWebSocketPingsKeepAlive(t *testing.T) {
	noLeaks(t)
	addr := testservers.StartWSServer(t)
	s := mustConnect(t, KindWebSocket, "ws://"+addr+"/ws", nil, RemoteOptions{PingInterval: 10 * time.Millisecond, PingTimeout: testservers.Patient})
	// The server sees the pings, answers them, and the session goes on.
	testservers.WaitUntil(t, "the server has seen 3 pings", func() bool { return count(t, s, "pings") >= 3 })
	if got, err := call(t, s, "echo", map[string]any{"text": "alive"}); err != nil || got != "alive" {
		t.Fatalf("echo: %q, %v", got, err)
	}
}

func TestNewRemoteRefusesBadArguments(t *testing.T) {
	for _, tc := range []struct{ kind, url, want string }{
		{"websocket", "http://example.com/ws", "a websocket url starts with ws:// or wss://, not http://"},
		{"sse", "wss://example.com/sse", "an sse url starts with http:// or https://, not wss://"},
		{"stdio", "ws://example.com", `unknown remote transport "stdio" (sse or websocket)`},
		{"websocket", "/relative", "the url is not an absolute URL"},
		{"websocket", "ws://[::1", "the url is not an absolute URL"},
	} {
		_, err := NewRemote(tc.kind, tc.url, nil, RemoteOptions{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("NewRemote(%q, %q): %v, want %q", tc.kind, tc.url, err, tc.want)
		}
	}
}

// BenchmarkRemoteCall measures a tools/call round trip (echo) over each
// remote transport to the test server on 127.0.0.1.
func BenchmarkRemoteCall(b *testing.B) {
	for _, tc := range []struct{ kind, scheme, path string }{
		{KindWebSocket, "ws", "/ws"},
		{KindSSE, "http", "/sse"},
	} {
		b.Run(tc.kind, func(b *testing.B) {
			addr := testservers.StartWSServer(b)
			tr, err := NewRemote(tc.kind, tc.scheme+"://"+addr+tc.path, nil, RemoteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			s, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), tr, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
			for b.Loop() {
				if _, err := s.CallTool(context.Background(), params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
