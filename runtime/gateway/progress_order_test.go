package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/internal/hooks"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// The progress a server sends before its result reaches the client before
// that result, on the path the result takes, in the order sent: over stdio
// and over HTTP (the call's own SSE stream), in both profiles, with every
// core of the machine busy (the four at once). A client drops progress for
// a request it has seen answered. Each call's server sends progressPerCall notifications and
// answers at once; the client records what it reads in the order it reads
// it, before its own SDK handles anything.
func TestProgressBeforeItsResultUnderLoad(t *testing.T) {
	marker := noLeaks(t)
	testservers.LoadCPU(t)
	const calls, progressPerCall = 50, 50
	args := map[string]any{"n": progressPerCall}
	var want []float64
	for i := range progressPerCall {
		want = append(want, float64(i+1))
	}
	overStdio := func(t *testing.T, serve func(context.Context, mcp.Transport) error, tool string) {
		callsOverStdio(t, serve, tool, args, want, calls)
	}

	// HTTP: raw POSTs, whose SSE stream is the path of the call's result.
	overHTTP := func(t *testing.T, client *http.Client, url, tool string) {
		sid := openSession(t, client, url, "2025-11-25")
		for i := range calls {
			token := fmt.Sprintf("tok-%d", i)
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"n":%d},"_meta":{"progressToken":%q}}}`,
				i+10, tool, progressPerCall, token)
			code, _, text := rawMCP(t, client, "POST", url, body, sessionHeader, sid, "Mcp-Protocol-Version", "2025-11-25")
			if code != http.StatusOK {
				t.Fatalf("call %d: %d %s", i+1, code, text)
			}
			msgs, err := sseMessages(text)
			if err == nil {
				err = progressBeforeResult(msgs, token, want)
			}
			if err != nil {
				t.Fatalf("call %d of %d: %v", i+1, calls, err)
			}
		}
	}

	volcanic := func(t *testing.T) (*runtime.Host, *Gateway) {
		h := newTestHost(t, testPlan(testServer("p", "-tools", "progress")), runtime.HostOptions{Env: testEnv(marker)})
		gw := NewGateway(h, GatewayOptions{Version: "test", WorkspaceRoot: filepath.Join(t.TempDir(), "chats")})
		t.Cleanup(gw.Close)
		return h, gw
	}
	craftbot := func(t *testing.T) *Craftbot {
		cb := newTestCraftbot(t, cbPlan(true, cbStdio("p", "-tools", "progress")), marker, runtime.CraftbotOptions{})
		startConnected(t, cb)
		return cb
	}
	t.Run("volcanic/stdio", func(t *testing.T) {
		t.Parallel()
		h, gw := volcanic(t)
		chat, err := h.Chat("a", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		overStdio(t, func(ctx context.Context, tr mcp.Transport) error { return gw.ServeTransport(ctx, chat, tr) }, "progress")
	})
	t.Run("volcanic/http", func(t *testing.T) {
		t.Parallel()
		_, gw := volcanic(t)
		base, client := httpGateway(t, gw)
		overHTTP(t, client, base+"/chats/a/mcp", "progress")
	})
	t.Run("craftbot/stdio", func(t *testing.T) {
		t.Parallel()
		cb := craftbot(t)
		overStdio(t, cb.ServeTransport, "mcp_p_progress")
	})
	t.Run("craftbot/http", func(t *testing.T) {
		t.Parallel()
		cb := craftbot(t)
		srv := httptest.NewServer(cb.Handler(CraftbotHTTPOptions{}))
		t.Cleanup(srv.Close)
		t.Cleanup(cb.CloseSessions)
		overHTTP(t, srv.Client(), srv.URL+"/mcp", "mcp_p_progress")
	})
}

// callsOverStdio makes calls calls of tool with args, each with a progress
// token of its own, from an MCP client over an in-memory pipe served by
// serve, and checks that the progress want of each came before its
// result, as the client's connection read them.
func callsOverStdio(t *testing.T, serve func(context.Context, mcp.Transport) error, tool string, args any, want []float64, calls int) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { defer close(served); _ = serve(sctx, st) }()
	t.Cleanup(func() { cancel(); <-served })
	rec := &readLog{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &readRecordingTransport{ct, rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range calls {
		token := fmt.Sprintf("tok-%d", i)
		rec.reset()
		params := &mcp.CallToolParams{Name: tool, Arguments: args}
		params.SetProgressToken(token)
		if _, err := cs.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
		// CallTool returns after its response was read: rec holds it.
		if err := progressBeforeResult(rec.messages(), token, want); err != nil {
			t.Fatalf("call %d of %d: %v", i+1, calls, err)
		}
	}
}

// Remote servers too: the progress of a Streamable HTTP or SSE server of a
// chat's servers.json, and of an SSE server of a craftbot plan, reaches
// the client before the result, with every core busy. The conformance
// fixture's progress tool answers right behind its last notification.
func TestRemoteProgressBeforeItsResultUnderLoad(t *testing.T) {
	marker := noLeaks(t)
	url := conformanceOverHTTP(t, marker)
	sseURL := strings.TrimSuffix(url, "/mcp") + "/sse"
	testservers.LoadCPU(t)
	const calls = 50
	want := []float64{0, 50, 100}
	t.Run("volcanic", func(t *testing.T) {
		t.Parallel()
		ws := t.TempDir()
		addRemote(t, ws, "c1", remote.Server{Name: "conf", URL: url, Transport: remote.TransportHTTP}, bearer(t, remoteCanary))
		addRemote(t, ws, "c1", remote.Server{Name: "confsse", URL: sseURL, Transport: remote.TransportSSE}, bearer(t, remoteCanary))
		gw, chat := remoteChat(t, marker, ws)
		serve := func(ctx context.Context, tr mcp.Transport) error { return gw.ServeTransport(ctx, chat, tr) }
		for _, tool := range []string{"conf__test_tool_with_progress", "confsse__test_tool_with_progress"} {
			t.Run(tool, func(t *testing.T) {
				t.Parallel()
				callsOverStdio(t, serve, tool, nil, want, calls)
			})
		}
	})
	t.Run("craftbot/sse", func(t *testing.T) {
		t.Parallel()
		cb := newTestCraftbot(t, cbPlan(true, cbRemote("conf", "sse", sseURL)), marker, runtime.CraftbotOptions{})
		startConnected(t, cb)
		callsOverStdio(t, cb.ServeTransport, "mcp_conf_test_tool_with_progress", nil, want, calls)
	})
}

// However long the gateway takes to pass a notification on, the call's
// answer waits for it: with the first progress notification (or log
// message) of a call held in the gateway until the server's answer was
// read, every notification of the call still reaches the client before
// the answer. In the SDK's client the answer would have overtaken them.
func TestAnswerWaitsForHeldNotifications(t *testing.T) {
	// The fixture as a Streamable HTTP server of the chat's servers.json:
	// its answer waits in its event stream (notifyorder.go).
	remoteGateway := func(t *testing.T) (*Gateway, *runtime.Chat) {
		marker := noLeaks(t)
		ws := t.TempDir()
		addRemote(t, ws, "c1", remote.Server{Name: "conf", URL: conformanceOverHTTP(t, marker), Transport: remote.TransportHTTP}, bearer(t, remoteCanary))
		return remoteChat(t, marker, ws)
	}
	for _, c := range []struct {
		name, tool, method string
		hook               *func()
		gateway            func(*testing.T) (*Gateway, *runtime.Chat)
	}{
		{"progress", "test_tool_with_progress", "notifications/progress", &hooks.ForwardProgress, conformanceGateway},
		{"log", "test_tool_with_logging", "notifications/message", &hookForwardLogRead, conformanceGateway},
		{"remote-progress", "conf__test_tool_with_progress", "notifications/progress", &hooks.ForwardProgress, remoteGateway},
		{"remote-log", "conf__test_tool_with_logging", "notifications/message", &hookForwardLogRead, remoteGateway},
	} {
		t.Run(c.name, func(t *testing.T) {
			gw, chat := c.gateway(t)
			st, ct := mcp.NewInMemoryTransports()
			served := make(chan struct{})
			go func() { defer close(served); _ = gw.ServeTransport(context.Background(), chat, st) }()
			rec := &readLog{}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &readRecordingTransport{ct, rec}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close(); <-served })
			if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
			answerRead := make(chan struct{})
			hooks.ResponseBehindBarrier = func() {
				hooks.ResponseBehindBarrier = nil
				close(answerRead)
			}
			t.Cleanup(func() { hooks.ResponseBehindBarrier = nil })
			held, release := holdFirst(t, c.hook)
			rec.reset()
			params := &mcp.CallToolParams{Name: c.tool}
			params.SetProgressToken("tok-held")
			called := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(context.Background(), params)
				called <- err
			}()
			<-held
			<-answerRead // the gateway has the server's answer; the notification is still held
			close(release)
			if err := <-called; err != nil {
				t.Fatal(err)
			}
			var before []string
			for _, m := range rec.messages() {
				if _, ok := m.(*jsonrpc.Response); ok {
					break
				}
				if r, ok := m.(*jsonrpc.Request); ok && r.Method == c.method {
					before = append(before, string(r.Params))
				}
			}
			if len(before) != 3 {
				t.Errorf("%d %s before the answer, want 3: %v", len(before), c.method, before)
			}
		})
	}
}

// progressBeforeResult checks msgs, in the order one path delivered them:
// the first response comes after the progress notifications of token,
// exactly want, in that order.
func progressBeforeResult(msgs []jsonrpc.Message, token string, want []float64) error {
	var seen []float64
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Response:
			if len(seen) != len(want) {
				return fmt.Errorf("%d of the %d progress notifications came before the result (progress %v)", len(seen), len(want), seen)
			}
			if !slices.Equal(seen, want) {
				return fmt.Errorf("progress before the result %v, want %v", seen, want)
			}
			return nil
		case *jsonrpc.Request:
			if m.Method != "notifications/progress" {
				continue
			}
			var p mcp.ProgressNotificationParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				return fmt.Errorf("progress notification %s: %v", m.Params, err)
			}
			if p.ProgressToken == token {
				seen = append(seen, p.Progress)
			}
		}
	}
	return fmt.Errorf("no result (%d progress notifications of %s)", len(seen), token)
}

// sseMessages decodes the messages of an SSE stream's data lines, in order.
func sseMessages(stream string) ([]jsonrpc.Message, error) {
	var out []jsonrpc.Message
	for _, line := range strings.Split(stream, "\n") {
		data, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:")
		if data = strings.TrimSpace(data); !ok || data == "" {
			continue
		}
		m, err := jsonrpc.DecodeMessage([]byte(data))
		if err != nil {
			return nil, fmt.Errorf("event %q: %v", data, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// readLog records the messages a client connection reads, in order.
type readLog struct {
	mu   sync.Mutex
	msgs []jsonrpc.Message
}

func (l *readLog) add(m jsonrpc.Message) {
	l.mu.Lock()
	l.msgs = append(l.msgs, m)
	l.mu.Unlock()
}

func (l *readLog) reset() {
	l.mu.Lock()
	l.msgs = nil
	l.mu.Unlock()
}

func (l *readLog) messages() []jsonrpc.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]jsonrpc.Message(nil), l.msgs...)
}

// readRecordingTransport is a client transport whose connection records in rec
// what it reads, as its read loop reads it.
type readRecordingTransport struct {
	inner mcp.Transport
	rec   *readLog
}

func (t *readRecordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &readRecordingConn{Connection: c, rec: t.rec}, nil
}

type readRecordingConn struct {
	mcp.Connection
	rec *readLog
}

func (c *readRecordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.rec.add(m)
	}
	return m, err
}
