package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/mcpc-dev/mcpc/internal/remotehttp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The remote transports of a CraftBot server entry (SPEC §5).
const (
	KindSSE       = "sse"
	KindWebSocket = "websocket"
)

// NewRemote returns the transport of kind ("sse" or "websocket") to the
// server at rawURL, sending headers with every request to the url's origin
// and refusing every request to another one. It only checks its arguments:
// the transport's Connect dials. Neither the url's query nor any header
// value appears in its errors.
func NewRemote(kind, rawURL string, headers http.Header, opts RemoteOptions) (mcp.Transport, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, &RemoteError{Reason: "the url is not an absolute URL"}
	}
	scheme := strings.ToLower(u.Scheme)
	opts = opts.withDefaults()
	switch kind {
	case KindWebSocket:
		if scheme != "ws" && scheme != "wss" {
			return nil, &RemoteError{Reason: fmt.Sprintf("a websocket url starts with ws:// or wss://, not %s://", CutText(scheme, 16))}
		}
		guard := newOriginGuard(u, headers, opts.Transport)
		return &WebSocketTransport{url: rawURL, guard: guard, opts: opts, client: guard.client()}, nil
	case KindSSE:
		if scheme != "http" && scheme != "https" {
			return nil, &RemoteError{Reason: fmt.Sprintf("an sse url starts with http:// or https://, not %s://", CutText(scheme, 16))}
		}
		guard := newOriginGuard(u, headers, opts.Transport)
		guard.maxEvent = opts.MaxMessageBytes
		return &SSETransport{sdk: &mcp.SSEClientTransport{Endpoint: rawURL, HTTPClient: guard.client(), MaxEventSize: int(opts.MaxMessageBytes)}, guard: guard, timeout: opts.HandshakeTimeout}, nil
	}
	return nil, &RemoteError{Reason: fmt.Sprintf("unknown remote transport %q (sse or websocket)", CutText(kind, 32))}
}

// RemoteError is why a remote transport failed: the handshake, a close
// code, a fault of the server. Reason is what mcpc shows; it never holds a
// header value or the url.
type RemoteError struct {
	Reason string
	// CloseCode is the websocket close code the connection ended with (0:
	// none; 1006: no close frame).
	CloseCode int
	// Status is the HTTP status that refused a handshake (0: none).
	Status int
	// Timeout is set when the server did not answer in time.
	Timeout bool
	// eof marks a normal closure, which ends a session as io.EOF does.
	eof bool
}

func (e *RemoteError) Error() string { return e.Reason }

// Unwrap makes a normal closure io.EOF: the session ended, nothing broke.
func (e *RemoteError) Unwrap() error {
	if e.eof {
		return io.EOF
	}
	return nil
}

// closeError is the error of a websocket the server closed with code and
// reason (already sanitized).
func closeError(code int, reason string) *RemoteError {
	var what string
	switch code {
	case 1000:
		what = "the server closed the websocket (1000, normal closure)"
	case 1001:
		what = "the server is going away (websocket close 1001)"
	case 1002:
		what = "the server closed the websocket for a protocol error (1002)"
	case 1003:
		what = "the server closed the websocket: it cannot take the data sent (1003)"
	case 1005:
		what = "the server closed the websocket without a close code (1005)"
	case 1006:
		what = "the connection to the server was lost without a websocket close (1006, abnormal closure)"
	case 1007:
		what = "the server closed the websocket: a message was not valid (1007)"
	case 1008:
		what = "the server closed the websocket for a policy violation (1008)"
	case 1009:
		what = "the server closed the websocket: a message was too big for it (1009)"
	case 1011:
		what = "the server closed the websocket on an internal error (1011)"
	case 1012:
		what = "the server is restarting (websocket close 1012)"
	case 1013:
		what = "the server asks to try again later (websocket close 1013)"
	default:
		what = fmt.Sprintf("the server closed the websocket with code %d", code)
	}
	if reason != "" {
		what += ": " + reason
	}
	return &RemoteError{Reason: what, CloseCode: code, eof: code == 1000}
}

// sanitize makes a text the server chose (a close reason, a header value
// it answered with) safe to show: header values mcpc sent are replaced,
// control characters dropped, the length cut.
func sanitize(s string, headers http.Header) string {
	for _, vs := range headers {
		for _, v := range vs {
			if len(v) >= 4 {
				s = strings.ReplaceAll(s, v, "[REDACTED]")
			}
		}
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	return CutText(s, 125)
}

// netReason describes a network error in a few words, without the url a
// *url.Error carries.
func netReason(err error) string {
	reason, _, cause := remotehttp.NetReason(err)
	if reason == "" {
		reason = "cannot connect: " + CutText(cause.Error(), MaxErrorText)
	}
	return reason
}

// originGuard is the HTTP transport of a remote connection: over the
// remotehttp guard (the headers to the url's origin only, any other origin
// refused, so that neither the headers nor the session's messages follow a
// redirect or an SSE endpoint event elsewhere), it remembers the last
// failing status and watches the size of SSE events.
type originGuard struct {
	guard   *remotehttp.Guard
	headers http.Header // what sanitize keeps out of errors

	mu     sync.Mutex
	status int // the last HTTP status >= 400
	// maxEvent is the cap on one SSE event (0: event streams are not
	// watched); oversized is set when an event passed it.
	maxEvent  int64
	oversized bool
}

func newOriginGuard(u *url.URL, headers http.Header, base http.RoundTripper) *originGuard {
	return &originGuard{guard: remotehttp.NewGuard(u, headers, base), headers: headers.Clone()}
}

// client is the HTTP client over the guard. It follows redirects only
// within the origin (the guard refuses the others).
func (g *originGuard) client() *http.Client { return remotehttp.Client(g) }

func (g *originGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.guard.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		g.mu.Lock()
		g.status = resp.StatusCode
		g.mu.Unlock()
	}
	if g.maxEvent > 0 && remotehttp.IsEventStream(resp) {
		resp.Body = &eventSizes{ReadCloser: resp.Body, max: g.maxEvent, g: g, lineStart: true}
	}
	return resp, nil
}

// eventSizes watches an event stream for an event longer than max bytes,
// which the SDK's reader refuses by ending the stream without a word: the
// guard then remembers it, so that the connection can say why it ended.
// It counts the raw bytes between blank lines, which are never fewer than
// the SDK counts, and changes nothing it reads.
type eventSizes struct {
	io.ReadCloser
	max       int64
	g         *originGuard
	run       int64 // bytes of the current event
	lineStart bool  // the last byte ended a line
	cr        bool  // the last byte was \r (a \n after it ends no line)
}

func (e *eventSizes) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	for _, b := range p[:n] {
		switch {
		case b == '\n' && e.cr:
			e.cr = false
		case b == '\n' || b == '\r':
			if e.lineStart {
				e.run = 0 // a blank line ends the event
			}
			e.lineStart, e.cr = true, b == '\r'
		default:
			e.run++
			e.lineStart, e.cr = false, false
		}
		if e.run > e.max {
			e.g.mu.Lock()
			e.g.oversized = true
			e.g.mu.Unlock()
		}
	}
	return n, err
}

// sawOversized reports whether an event stream had an event over the cap.
func (g *originGuard) sawOversized() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.oversized
}

// lastStatus is the last HTTP status of 400 or more a request got, or 0.
func (g *originGuard) lastStatus() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.status
}

// refusal is the first request the guard refused, as a RemoteError, or
// nil.
func (g *originGuard) refusal() *RemoteError {
	if refused := g.guard.Refused(); refused != nil {
		return &RemoteError{Reason: refused.Error()}
	}
	return nil
}

// closeIdle closes the idle connections of a transport the guard made, so
// that their goroutines end with the connection.
func (g *originGuard) closeIdle() { g.guard.CloseIdleConnections() }

// formatDuration renders a timeout as "15s", or "1.5s", "300ms".
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}

// formatBytes renders a size cap: "16 MiB", "64 KiB", "100 bytes".
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// SSETransport is the go-sdk's SSE client transport (MCP 2024-11-05) over
// an origin guard: the SDK follows the server's endpoint event to any URL,
// also on another origin, and would post the session's messages there; the
// guard refuses that, and adds the headers only to requests to the url's
// own origin. Make it with NewRemote.
type SSETransport struct {
	sdk     *mcp.SSEClientTransport
	guard   *originGuard
	timeout time.Duration // of the handshake
}

// Connect opens the event stream and reads the endpoint event within
// HandshakeTimeout (or ctx, if it ends first). The SDK ties the stream to
// the context Connect gets, so the timeout cannot be a deadline of that
// context: a timer cancels it only while Connect runs.
func (t *SSETransport) Connect(ctx context.Context) (mcp.Connection, error) {
	sctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(t.timeout, cancel)
	conn, err := t.sdk.Connect(sctx)
	if !timer.Stop() {
		// The timer fired: whatever Connect returned, it is too late.
		if conn != nil {
			conn.Close()
		}
		cancel()
		t.guard.closeIdle()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, &RemoteError{Reason: "no sse endpoint event within " + formatDuration(t.timeout), Timeout: true}
	}
	if err != nil {
		cancel()
		t.guard.closeIdle()
		if status := t.guard.lastStatus(); status != 0 {
			return nil, &RemoteError{Reason: fmt.Sprintf("the server refused the sse stream: %d (%s)", status, http.StatusText(status)), Status: status}
		}
		return nil, t.error(err)
	}
	return &sseConn{Connection: conn, t: t, cancel: cancel}, nil
}

// error turns an error of the SDK's SSE client into one without the url:
// the guard's refusal, a network failure, or the SDK's words (which name
// an HTTP status, never a header).
func (t *SSETransport) error(err error) error {
	if refused := t.guard.refusal(); refused != nil {
		return refused
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return &RemoteError{Reason: "the network timed out", Timeout: true}
		}
		if errors.Is(ue.Err, context.Canceled) || errors.Is(ue.Err, context.DeadlineExceeded) {
			return ue.Err
		}
		return &RemoteError{Reason: netReason(err)}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	return &RemoteError{Reason: "sse: " + CutText(sanitize(err.Error(), t.guard.headers), MaxErrorText)}
}

// sseConn is a connection of SSETransport: the SDK's, with errors
// cleaned of the url.
type sseConn struct {
	mcp.Connection
	t      *SSETransport
	cancel context.CancelFunc // ends the event stream's context
}

func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	switch {
	case err == nil || ctx.Err() != nil:
		return msg, err
	case c.t.guard.sawOversized():
		return nil, &RemoteError{Reason: "the server sent an sse event larger than the cap of " + formatBytes(c.t.guard.maxEvent)}
	}
	return nil, c.t.error(err)
}

func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if err != nil && ctx.Err() == nil {
		return c.t.error(err)
	}
	return err
}

// Close ends the event stream and closes the idle connections of the
// guard's own HTTP transport.
func (c *sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	c.t.guard.closeIdle()
	return err
}
