package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/internal/private"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// The HTTP front of the MCP endpoints, one for both profiles: Streamable
// HTTP is the go-sdk's handler (mcp.StreamableHTTPHandler: sessions, SSE
// streams, resumption from its event store); in front of it, as ordinary
// middleware, what mcpc adds: the MCP token, the Host check against DNS
// rebinding, the protocol versions the gateway negotiates, the body's size
// and time limits, the session caps and expiry (transport.SessionPool, on
// the runtime's Clock), unknown methods answered as JSON-RPC errors, the
// retry hint of every SSE answer, and JSON-RPC ids sent back exactly as
// they came (transport.SDKBody, transport.RestoreIDs). The Origin check
// and the routing are the gateway's and the Craftbot's, before it.

const (
	// DefaultBodyTimeout is GatewayOptions.BodyTimeout's default.
	DefaultBodyTimeout = 10 * time.Second
	// minBodyRate is the slowest rate at which a body may arrive: every
	// minBodyRate bytes read add a second to the body's time.
	minBodyRate = 64 << 10
	// maxBodyBytes caps a request body, as the SDK does by default.
	maxBodyBytes = mcp.DefaultMaxRequestBodyBytes
	// bodyPrealloc bounds the buffer a request body is read into before
	// its bytes arrive.
	bodyPrealloc = 64 << 10
	// sessionHeader is the Streamable HTTP session header.
	sessionHeader = "Mcp-Session-Id"
)

// mcpFront is the front of one gateway's MCP endpoints.
type mcpFront struct {
	token       string        // the MCP token; "": none
	bodyTimeout time.Duration // 0: DefaultBodyTimeout
	pool        *transport.SessionPool
	redact      func(string) string // what the answers it writes go through
}

// newMCPFront returns the front of a gateway's MCP endpoints, its sessions
// capped and expired on clock.
func newMCPFront(clock runtime.Clock, token string, bodyTimeout time.Duration, max, perChat int, idle time.Duration, redact func(string) string, log func(level, chat, msg string)) *mcpFront {
	return &mcpFront{token: token, bodyTimeout: bodyTimeout, redact: redact,
		pool: transport.NewSessionPool(transport.SessionPoolOptions{
			Max: max, MaxPerChat: perChat, Idle: idle,
			Clock: clock,
			Log:   log,
		})}
}

// newSDKHandler is the go-sdk's Streamable HTTP handler of one endpoint's
// server. The front checks the Host, the Origin and the body's size before
// it, and expires the sessions itself (on the runtime's Clock, counting
// the calls in flight): the SDK's own checks and timeout are off.
func newSDKHandler(server *mcp.Server) *mcp.StreamableHTTPHandler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		EventStore:                 newEventStore(),
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        -1,
	})
}

func (f *mcpFront) writeError(w http.ResponseWriter, code int, msg string) {
	writeStatusError(w, code, msg, f.redact)
}

// mcpRequest is a request to an MCP endpoint, checked and read.
type mcpRequest struct {
	sid     string
	data    []byte          // the body as read
	body    *transport.Body // a POST's body, decoded; nil if bodyErr
	bodyErr error
	init    bool // one initialize request, without a session id
	initID  jsonrpc.ID
}

// check authorizes r (the MCP token), checks its Host and protocol
// version, and reads its body within its size and time. nil: answered.
func (f *mcpFront) check(w http.ResponseWriter, r *http.Request) *mcpRequest {
	if f.token != "" && !bearerMatches(r, f.token) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpc"`)
		f.writeError(w, http.StatusUnauthorized, "the MCP endpoints need the header Authorization: Bearer <token>: the token of --mcp-token-env, else the one in the MCP token file that mcpc run logged")
		return nil
	}
	if !loopbackHostAllowed(w, r, f.writeError) || !protocolVersionAllowed(w, r, f.writeError) {
		return nil
	}
	data, ok := readRequestBody(w, r, f.bodyTimeout, f.writeError)
	if !ok {
		return nil
	}
	m := &mcpRequest{sid: r.Header.Get(sessionHeader), data: data}
	if r.Method == http.MethodPost {
		// Decoded here, once, for the front; the SDK reads it again.
		m.body, m.bodyErr = transport.DecodeBody(data)
		if m.sid == "" {
			m.initID, m.init = initializeRequest(m.body)
		}
	}
	return m
}

// serve hands a checked request to handler, the SDK's handler of server
// (newSDKHandler), for chat: the label of a session an initialize opens,
// for the cap per chat.
func (f *mcpFront) serve(w http.ResponseWriter, r *http.Request, m *mcpRequest, chat string, server *mcp.Server, handler *mcp.StreamableHTTPHandler) {
	if r.Method == http.MethodPost {
		if m.bodyErr != nil {
			f.writeError(w, http.StatusBadRequest, "malformed payload: "+m.bodyErr.Error())
			return
		}
		if m.sid != "" && f.pool.Has(m.sid, handler) {
			// A session of the endpoint: what the SDK's handler would
			// refuse with a plain-text 400 is answered as over stdio.
			if beforeSession(w, m.body) {
				return
			}
		}
		data, err := transport.SDKBody(m.data, m.body)
		if err != nil {
			f.writeError(w, http.StatusBadRequest, "malformed payload: "+err.Error())
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	}
	fw := &frontWriter{ResponseWriter: w}
	switch {
	case m.init:
		e, refused := f.pool.Admit(chat, handler)
		if refused != "" {
			writeRPCError(w, http.StatusServiceUnavailable, m.initID, refused)
			return
		}
		fw.onHeader = func(h http.Header) { f.pool.Bind(e, h.Get(sessionHeader)) }
		defer f.pool.End(e)
		defer f.attach(e, server, &fw.sid)
	case m.sid != "":
		end := f.pool.Begin(m.sid, r.Method != http.MethodGet)
		defer end()
	}
	handler.ServeHTTP(fw, r)
	if r.Method == http.MethodDelete && fw.code == http.StatusNoContent {
		f.pool.RemoveID(m.sid)
	}
}

// attach gives the pool the session an initialize opened, once the SDK
// answered it: a session that the SDK refused, or that closed already,
// leaves the pool. The pool forgets the session when it ends.
func (f *mcpFront) attach(e *transport.PoolSession, server *mcp.Server, sid *string) {
	var ss *mcp.ServerSession
	if *sid != "" {
		for s := range server.Sessions() {
			if s.ID() == *sid {
				ss = s
				break
			}
		}
	}
	if ss == nil || ss.InitializeParams() == nil || !f.pool.Attach(e, func() { _ = ss.Close() }) {
		f.pool.Remove(e)
		return
	}
	go func() {
		_ = ss.Wait()
		f.pool.Remove(e)
	}()
}

// countCalls is a receiving middleware of a server the front serves: a
// call in flight keeps its session from expiring and from being closed for
// a new one.
func (f *mcpFront) countCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s := req.GetSession(); s != nil && s.ID() != "" && !strings.HasPrefix(method, "notifications/") {
			defer f.pool.Call(s.ID())()
		}
		return next(ctx, method, req)
	}
}

// frontWriter is the ResponseWriter the SDK's handler writes to: it tells
// the front the answer's header (the session id of an initialize), starts
// every SSE answer with the retry hint, and writes JSON-RPC ids back as
// they came.
type frontWriter struct {
	http.ResponseWriter
	onHeader func(http.Header)
	started  bool
	code     int
	sid      string
}

func (w *frontWriter) WriteHeader(code int) {
	if w.started {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.started, w.code = true, code
	h := w.Header()
	w.sid = h.Get(sessionHeader)
	if w.onHeader != nil {
		w.onHeader(h)
	}
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		_, _ = w.ResponseWriter.Write(retryHint)
	}
}

func (w *frontWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	out := transport.RestoreIDs(b)
	n, err := w.ResponseWriter.Write(out)
	if err != nil {
		return min(n, len(b)), err
	}
	return len(b), nil
}

// Flush and Unwrap keep http.ResponseController working through it.
func (w *frontWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *frontWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// retryHint starts every SSE answer: how long a client that lost the
// stream waits before it reconnects with Last-Event-ID.
var retryHint = []byte("retry: " + strconv.FormatInt(sseRetry.Milliseconds(), 10) + "\n\n")

// loopbackHostAllowed refuses (403) a request that reached a loopback
// address under a name that is not a loopback name: a page of another
// site that had its name resolved to 127.0.0.1 (DNS rebinding).
func loopbackHostAllowed(w http.ResponseWriter, r *http.Request, writeError func(http.ResponseWriter, int, string)) bool {
	if loopback.HostPort(r.Host) {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback.HostPort(local.String()) {
		return true
	}
	writeError(w, http.StatusForbidden, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host))
	return false
}

// initializeRequest reports whether body is one JSON-RPC initialize
// request, and its id.
func initializeRequest(body *transport.Body) (jsonrpc.ID, bool) {
	if body == nil || len(body.Messages) != 1 {
		return jsonrpc.ID{}, false
	}
	req, ok := body.Messages[0].(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method != "initialize" {
		return jsonrpc.ID{}, false
	}
	return req.ID, true
}

// readRequestBody reads the request body whole, at most maxBodyBytes (413
// beyond), and at least at minBodyRate after the first timeout (0:
// DefaultBodyTimeout; 408 otherwise, and the connection is closed): a
// client cannot hold a connection, and its descriptor, by sending slowly
// or not at all.
func readRequestBody(w http.ResponseWriter, r *http.Request, timeout time.Duration, writeError func(http.ResponseWriter, int, string)) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(timeout)
	// A server that cannot set deadlines (not a net/http connection) reads
	// without one.
	limited := rc.SetReadDeadline(deadline) == nil
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	// Read straight into one buffer, of the declared length (and a byte to
	// see the end without growing), as a client almost always declares it,
	// up to bodyPrealloc: beyond, it grows as the body arrives, so that a
	// length declared but never sent costs nothing.
	size := 512
	if r.ContentLength > 0 {
		size = int(min(r.ContentLength+1, bodyPrealloc))
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		// More time only while more is to come: a body that arrived whole
		// (its declared length) needs no other deadline.
		if n > 0 && limited && err == nil && (r.ContentLength < 0 || int64(len(buf)) < r.ContentLength) {
			deadline = deadline.Add(time.Duration(n) * time.Second / minBodyRate)
			_ = rc.SetReadDeadline(deadline)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", maxBodyBytes))
			case errors.Is(err, os.ErrDeadlineExceeded):
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive in time (%s, plus 1s per %d KiB)", transport.FormatDuration(timeout), minBodyRate>>10))
			default:
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusBadRequest, "the request body could not be read")
			}
			return nil, false
		}
	}
	if limited {
		_ = rc.SetReadDeadline(time.Time{}) // a stream answer may last
	}
	return buf, true
}

// bearerMatches reports whether r carries "Authorization: Bearer <tok>",
// compared in constant time.
func bearerMatches(r *http.Request, tok string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return private.SameToken(got, tok) && ok
}

// writeRPCError answers a JSON-RPC request with an error, as the SDK does
// for requests it refuses before serving them.
func writeRPCError(w http.ResponseWriter, code int, id jsonrpc.ID, msg string) {
	data, err := transport.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: transport.CodeLimit, Message: msg}})
	if err != nil {
		data = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"refused"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}
