// Package remotetest starts real remote MCP servers for tests: go-sdk
// Streamable HTTP and SSE servers on 127.0.0.1, one that demands a bearer
// token, and a listener that never answers.
//
// Tools of every server: echo {text}; whoami (answers the Authorization and
// X-* headers of the last request, to test redaction); fail {text} (a JSON-RPC error quoting
// text and the Authorization header); slow {ms} (sleeps, or until the call
// is cancelled); drop (closes every client connection of the server mid-call,
// then waits); and the names in Options.Tools, which answer their own name.
//
// Only tests import it; it imports no package of mcpc.
package remotetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options choose the server.
type Options struct {
	// Transport is "http" (Streamable HTTP, at /mcp) or "sse" (at /sse).
	Transport string
	// Token, when set, makes every request without "Authorization: Bearer
	// <Token>" fail with 401.
	Token string
	// Tools are extra tools that answer their own name.
	Tools []string
	// Schema is the input schema of the extra tools; nil means
	// {"type": "object"}.
	Schema map[string]any
}

// Server is a running test server.
type Server struct {
	URL  string
	HTTP *httptest.Server
	// Initialized counts completed handshakes; Requests HTTP requests
	// (including rejected ones).
	Initialized atomic.Int32
	Requests    atomic.Int32
	// Hang, while set, makes the server accept every POST and never answer
	// it: a server that stopped answering mid-session.
	Hang atomic.Bool
	// Down, while set, answers every request 503 (Service Unavailable) at
	// once: a server that is down, whose failure takes no time to see.
	Down atomic.Bool

	lastAuth atomic.Value // string
	stopping chan struct{}

	mu         sync.Mutex
	calls      map[string]int
	running    map[string]int
	maxRunning map[string]int
	cancelled  map[string]int
}

// Calls returns how often tool was called.
func (s *Server) Calls(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[tool]
}

// MaxRunning returns the most calls of tool that ran at once.
func (s *Server) MaxRunning(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxRunning[tool]
}

// Cancelled returns how many calls of tool saw their context cancelled
// (the client sent notifications/cancelled, or the connection ended).
func (s *Server) Cancelled(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled[tool]
}

func (s *Server) enter(tool string) func() {
	s.mu.Lock()
	s.calls[tool]++
	s.running[tool]++
	if s.running[tool] > s.maxRunning[tool] {
		s.maxRunning[tool] = s.running[tool]
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.running[tool]--
		s.mu.Unlock()
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func args(req *mcp.CallToolRequest) map[string]any {
	var m map[string]any
	json.Unmarshal(req.Params.Arguments, &m)
	return m
}

// Start starts a server; it stops when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{calls: map[string]int{}, running: map[string]int{}, maxRunning: map[string]int{}, cancelled: map[string]int{}, stopping: make(chan struct{})}
	s.lastAuth.Store("")
	server := mcp.NewServer(&mcp.Implementation{Name: "remotetest", Version: "1.2.3"}, &mcp.ServerOptions{
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { s.Initialized.Add(1) },
	})
	schema := map[string]any{"type": "object"}
	add := func(name string, h mcp.ToolHandler) {
		server.AddTool(&mcp.Tool{Name: name, Description: "test tool " + name, InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer s.enter(name)()
			return h(ctx, req)
		})
	}
	add("echo", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t, _ := args(req)["text"].(string)
		return text(t), nil
	})
	add("whoami", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		auth := s.lastAuth.Load().(string)
		r := text("you sent: " + auth)
		r.StructuredContent = map[string]any{"authorization": auth}
		return r, nil
	})
	add("fail", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t, _ := args(req)["text"].(string)
		return nil, fmt.Errorf("refused %s with key %s", t, s.lastAuth.Load().(string))
	})
	add("slow", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ms, _ := args(req)["ms"].(float64)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return text("slept"), nil
		case <-s.stopping:
			return text("stopped"), nil
		case <-ctx.Done():
			s.mu.Lock()
			s.cancelled["slow"]++
			s.mu.Unlock()
			return nil, ctx.Err()
		}
	})
	// drop closes every client connection, the one carrying this call
	// too, before it answers: the answer has no way left to the client.
	// (It used to close them in the background and answer after 5 s, and
	// a client's session close then waited for that answer.)
	add("drop", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.HTTP.CloseClientConnections()
		return text("answered after the drop"), nil
	})
	if opts.Schema != nil {
		schema = opts.Schema
	}
	for _, name := range opts.Tools {
		name := name
		add(name, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(name), nil })
	}

	var h http.Handler
	path := "/mcp"
	switch opts.Transport {
	case "sse":
		path = "/sse"
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
	default:
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	}
	mux := http.NewServeMux()
	mux.Handle(path, h)
	s.HTTP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if s.Down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		if s.Hang.Load() && r.Method == http.MethodPost {
			select {
			case <-r.Context().Done():
			case <-s.stopping:
			}
			return
		}
		auth := r.Header.Get("Authorization")
		if opts.Token != "" && auth != "Bearer "+opts.Token {
			// The body quotes what it got: a careless server; mcpc must not
			// show it.
			http.Error(w, "unauthorized: got "+auth, http.StatusUnauthorized)
			return
		}
		var seen []string
		for name, vs := range r.Header {
			if name == "Authorization" || strings.HasPrefix(name, "X-") {
				seen = append(seen, name+": "+strings.Join(vs, ","))
			}
		}
		sort.Strings(seen)
		if len(seen) > 0 {
			s.lastAuth.Store(strings.Join(seen, "; "))
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(s.stopping)
		s.HTTP.CloseClientConnections()
		s.HTTP.Close()
		// A session whose client vanished without ending it (its DELETE
		// lost with a dropped connection, as happens on a busy machine)
		// would keep its goroutines for the life of the process.
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	s.URL = s.HTTP.URL + path
	return s
}

// NeverAnswers returns the URL of a listener on 127.0.0.1 that accepts
// connections and never answers; it stops when the test ends.
func NeverAnswers(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + l.Addr().String() + "/mcp"
}

// Refused returns a URL on 127.0.0.1 where nothing listens.
func Refused(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}
