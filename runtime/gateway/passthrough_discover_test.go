package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// wireRecorder is a client transport that keeps the requests the client
// sends and the answers it reads, by request id.
type wireRecorder struct {
	inner mcp.Transport

	mu      sync.Mutex
	methods map[string]string            // request id → method
	answers map[string]*jsonrpc.Response // method → its last answer
}

func (w *wireRecorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, w: w}, nil
}

func (w *wireRecorder) answer(method string) *jsonrpc.Response {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.answers[method]
}

type recordingConn struct {
	mcp.Connection
	w *wireRecorder
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.w.mu.Lock()
		c.w.methods[jsonOf(req.ID.Raw())] = req.Method
		c.w.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.w.mu.Lock()
		if m := c.w.methods[jsonOf(resp.ID.Raw())]; m != "" {
			c.w.answers[m] = resp
		}
		c.w.mu.Unlock()
	}
	return msg, err
}

// httpRecorder keeps the HTTP status of the requests a client sends, by
// JSON-RPC method (an in-memory wireRecorder would hide the go-sdk
// connection's own methods, which its HTTP transport needs).
type httpRecorder struct {
	base http.RoundTripper

	mu     sync.Mutex
	status map[string]int
}

func (r *httpRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var method string
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var m struct{ Method string }
		_ = json.Unmarshal(body, &m)
		method = m.Method
	}
	resp, err := r.base.RoundTrip(req)
	if err == nil && method != "" {
		r.mu.Lock()
		r.status[method] = resp.StatusCode
		r.mu.Unlock()
	}
	return resp, err
}

func (r *httpRecorder) statusOf(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status[method]
}

// The go-sdk v1.8 client opens every connection with server/discover at
// protocol 2026-07-28 (SEP-2575), which the gateway does not speak: it
// answers -32022 listing the versions it does speak, over stdio and HTTP,
// and the client falls back to initialize, whose answer carries the
// gateway's capabilities and instructions.
func TestGatewayDiscoverFallsBackToInitialize(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	s := testServer("conf")
	s.Command = testservers.Conformance(t)
	s.PromptSection = ptr("Use the conformance tools.")
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "test", WorkspaceRoot: t.TempDir()})
	t.Cleanup(gw.Close)
	chat, _ := h.Chat("c", t.TempDir())
	base, client := httpGateway(t, gw)

	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- gw.ServeTransport(ctx, chat, st) }()
	// No ProtocolVersion: the client's default, 2026-07-28.
	connect := func(t *testing.T, tr mcp.Transport) *mcp.InitializeResult {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs.InitializeResult()
	}
	checkInit := func(t *testing.T, init *mcp.InitializeResult) {
		if init.ProtocolVersion != GatewayProtocolVersions()[0] {
			t.Errorf("negotiated %q, want %q", init.ProtocolVersion, GatewayProtocolVersions()[0])
		}
		if want := "Use the conformance tools.\n\nMCP server conf:\nThe conformance fixture"; !strings.HasPrefix(init.Instructions, want) {
			t.Errorf("instructions = %q, want them to start with %q", init.Instructions, want)
		}
		if c := init.Capabilities; c == nil || c.Tools == nil || c.Prompts == nil || c.Resources == nil || c.Logging == nil || c.Completions == nil {
			t.Errorf("capabilities = %s, want tools, prompts, resources, logging and completions", jsonOf(c))
		}
	}

	t.Run("stdio", func(t *testing.T) {
		rec := &wireRecorder{inner: ct, methods: map[string]string{}, answers: map[string]*jsonrpc.Response{}}
		init := connect(t, rec)
		disc := rec.answer("server/discover")
		if disc == nil {
			t.Fatal("the client sent no server/discover, or it got no answer")
		}
		var werr *jsonrpc.Error
		if !errors.As(disc.Error, &werr) || werr.Code != mcp.CodeUnsupportedProtocolVersion {
			t.Fatalf("server/discover answered %v, want error -32022", disc.Error)
		}
		var data mcp.UnsupportedProtocolVersionData
		if err := json.Unmarshal(werr.Data, &data); err != nil || !slices.Equal(data.Supported, GatewayProtocolVersions()) {
			t.Errorf("server/discover's error data = %s, want the gateway's versions %v", werr.Data, GatewayProtocolVersions())
		}
		if rec.answer("initialize") == nil {
			t.Fatal("the client did not fall back to initialize")
		}
		checkInit(t, init)
	})
	t.Run("http", func(t *testing.T) {
		rec := &httpRecorder{base: client.Transport, status: map[string]int{}}
		init := connect(t, &mcp.StreamableClientTransport{Endpoint: base + "/chats/h/mcp", HTTPClient: &http.Client{Transport: rec}})
		if got := rec.statusOf("server/discover"); got != http.StatusBadRequest {
			t.Errorf("server/discover got HTTP %d, want 400 (an MCP-Protocol-Version the gateway does not accept)", got)
		}
		if got := rec.statusOf("initialize"); got != http.StatusOK {
			t.Errorf("initialize got HTTP %d, want 200", got)
		}
		checkInit(t, init)
	})
	cancel()
	<-served
}
