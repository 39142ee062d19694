package remote

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

	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/internal/remotehttp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Timeouts of SPEC §4.
const (
	HandshakeTimeout = 15 * time.Second  // connect + initialize
	ListTimeout      = 15 * time.Second  // tools/list, all pages
	CallTimeout      = 120 * time.Second // one tools/call
)

// maxTools bounds one server's tool list (a server that pages forever).
const maxTools = 10000

// DialOptions tunes Dial and Probe. The zero value uses SPEC's timeouts.
type DialOptions struct {
	HandshakeTimeout time.Duration // 0: HandshakeTimeout
	ListTimeout      time.Duration // 0: ListTimeout
	// Transport is the HTTP transport under the one that adds the headers;
	// nil means a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// ClientVersion is reported to servers in the handshake.
	ClientVersion string
	// Client, if set, configures the MCP client of the connection: the
	// handlers of what the server sends (a gateway passes its log
	// messages, progress and list changes on). nil: the SDK's defaults.
	Client *mcp.ClientOptions
	// Order, if set, orders what the connection reads for its client.
	Order Order
}

// Order is how a gateway has the notifications a server sends before a
// response handled before the response reaches its caller (runtime's
// notifyorder.go). MCP wraps the MCP transport of an SSE connection;
// Events each event stream of a Streamable HTTP one, whose go-sdk
// connection keeps the session's state itself and cannot be wrapped.
type Order interface {
	MCP(mcp.Transport) mcp.Transport
	Events(ctx context.Context, body io.ReadCloser) io.ReadCloser
}

func (o DialOptions) handshake() time.Duration {
	if o.HandshakeTimeout > 0 {
		return o.HandshakeTimeout
	}
	return HandshakeTimeout
}

func (o DialOptions) list() time.Duration {
	if o.ListTimeout > 0 {
		return o.ListTimeout
	}
	return ListTimeout
}

// Failure is why a remote server could not be reached or used, from Dial,
// ListTools or Call: the one error type of a connection. Reason is
// what mcpc shows ("401 (Unauthorized)", "no answer within 15s",
// "connection refused", …): it never holds a header value, a token, or the
// URL's query.
type Failure struct {
	Reason string
	// Status is the HTTP status the server answered with, 0 if none.
	Status int
	// Timeout is set when the server did not answer in time (a call that
	// ran out of time was cancelled: the server was told).
	Timeout bool
	// ServerError is set when the server answered a call with a JSON-RPC
	// error; Code is its code. Reason is then the server's message.
	ServerError bool
	Code        int64
	// Lost is set when the connection failed during a call: it is unusable
	// (the caller drops it), and the call may or may not have run on the
	// server.
	Lost bool
	// fallback: a Streamable HTTP attempt that says the server may speak
	// the older SSE transport instead.
	fallback bool
}

func (f *Failure) Error() string { return f.Reason }

// Conn is one live connection to a remote server.
type Conn struct {
	Server Server
	// Transport is the one that connected: "http" (Streamable HTTP) or "sse".
	Transport     string
	ServerName    string
	ServerVersion string

	session *mcp.ClientSession
	ht      *connTransport
	cancel  context.CancelFunc
	dead    chan struct{}
	red     *redact.Redactor // the secrets of the server's headers
	opts    DialOptions
	// owned is the guard at the bottom of the connection's HTTP
	// transport; Close closes the idle connections of a transport it made
	// (DialOptions.Transport nil), so that their goroutines end with the
	// connection.
	owned *remotehttp.Guard
}

// Done is closed when the connection has ended (closed, or dropped by the
// server).
func (c *Conn) Done() <-chan struct{} { return c.dead }

// Abandon ends a connection that failed: a stream that was lost, or a
// server that no longer answers. Its requests in flight end at once, and
// no session termination (the Streamable HTTP DELETE) is sent: Close would
// wait up to 5 s (the go-sdk's bound) for each of those from a server that
// already did not answer, and the session is of no use to it any more.
func (c *Conn) Abandon() error {
	c.cancel()
	return c.Close()
}

// Close ends the connection.
func (c *Conn) Close() error {
	err := c.session.Close()
	c.cancel()
	c.owned.CloseIdleConnections()
	return err
}

// URLWithoutQuery returns u without user info, query and fragment: the
// form every output shows (a query may hold a key).
func URLWithoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid url)"
	}
	u.User = nil
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// Dial connects to s and completes the MCP handshake within the handshake
// timeout. auto tries Streamable HTTP and falls back to SSE when the server
// answers the Streamable HTTP request as a server that does not speak it
// (400, 404, 405, 406, 415, or a response that is not MCP). The connection
// outlives ctx: ctx bounds only the handshake.
func Dial(ctx context.Context, s Server, h Headers, opts DialOptions) (*Conn, error) {
	red := Redactor(h)
	switch s.Transport {
	case TransportHTTP, TransportSSE:
		return dialOne(ctx, s, h, s.Transport, opts, red)
	}
	c, err := dialOne(ctx, s, h, TransportHTTP, opts, red)
	var f *Failure
	if err == nil || !errors.As(err, &f) || !f.fallback || ctx.Err() != nil {
		return c, err
	}
	c, err2 := dialOne(ctx, s, h, TransportSSE, opts, red)
	if err2 == nil {
		return c, nil
	}
	var f2 *Failure
	if errors.As(err2, &f2) && f2.Reason != f.Reason {
		return nil, &Failure{Reason: "Streamable HTTP: " + f.Reason + "; SSE: " + f2.Reason, Status: f2.Status, Timeout: f2.Timeout}
	}
	return nil, err2
}

type dialResult struct {
	session *mcp.ClientSession
	err     error
}

// abandon gives up a handshake: its requests end at once (the connection's
// context is cancelled), and a session that still comes out of it is
// closed. It waits for both, so that nothing of the handshake outlives
// Dial: the caller's goroutine accounting (a runtime's Host.Close) covers
// it.
func abandon(cancel context.CancelFunc, done <-chan dialResult) {
	cancel()
	if r := <-done; r.session != nil {
		r.session.Close()
	}
}

func dialOne(ctx context.Context, s Server, h Headers, kind string, opts DialOptions, red *redact.Redactor) (*Conn, error) {
	u, err := url.Parse(s.URL)
	if problem, _, _ := CheckURL(s.URL); err != nil || problem != "" {
		return nil, &Failure{Reason: "the url " + problem}
	}
	// Every request goes through the guard: the headers to the url's
	// origin, nothing to another one.
	hdr := make(http.Header, len(h))
	for name, v := range h {
		hdr.Set(name, v)
	}
	guard := remotehttp.NewGuard(u, hdr, opts.Transport)
	closeOwned := guard.CloseIdleConnections
	// The SSE transport ties its stream to the context given to Connect, so
	// the connection gets its own context, cancelled by Close, by the
	// handshake timeout, or by ctx while the handshake runs. Every HTTP
	// request of the connection ends with it.
	connCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ht := &connTransport{base: guard, ctx: connCtx}
	hc := remotehttp.Client(ht)
	var tr mcp.Transport
	if kind == TransportSSE {
		tr = &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc}
		if opts.Order != nil {
			tr = opts.Order.MCP(tr)
		}
	} else {
		if opts.Order != nil {
			ht.events = opts.Order.Events
		}
		// No silent re-sending: a dropped stream fails the call. The
		// standalone GET stream, which carries what the server sends
		// outside a request (list changes, resource updates), only when
		// someone handles it (opts.Client).
		tr = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: opts.Client == nil}
	}
	version := opts.ClientVersion
	if version == "" {
		version = "dev"
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpc", Version: version}, opts.Client)

	done := make(chan dialResult, 1)
	go func() {
		session, err := client.Connect(connCtx, tr, nil)
		done <- dialResult{session, err}
	}()
	timeout := opts.handshake()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var r dialResult
	select {
	case r = <-done:
	case <-timer.C:
		abandon(cancel, done)
		closeOwned()
		return nil, &Failure{Reason: "no answer within " + formatDuration(timeout), Timeout: true}
	case <-ctx.Done():
		abandon(cancel, done)
		closeOwned()
		return nil, context.Cause(ctx)
	}
	if r.err != nil {
		cancel()
		closeOwned()
		return nil, ht.classify(r.err, kind, s.URL, red, 0)
	}
	session := r.session
	c := &Conn{Server: s, Transport: kind, session: session, ht: ht, cancel: cancel, dead: make(chan struct{}), red: red, opts: opts, owned: guard}
	if ir := session.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		c.ServerName, c.ServerVersion = red.Redact(ir.ServerInfo.Name), red.Redact(ir.ServerInfo.Version)
	}
	go func() {
		session.Wait()
		close(c.dead)
	}()
	return c, nil
}

// ListTools lists every tool of the server (all pages) within the list
// timeout.
func (c *Conn) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	timeout := c.opts.list()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var tools []*mcp.Tool
	params := &mcp.ListToolsParams{}
	seen := map[string]bool{}
	for {
		res, err := c.session.ListTools(ctx, params)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, &Failure{Reason: "no answer to tools/list within " + formatDuration(timeout), Timeout: true}
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var we *jsonrpc.Error
			if errors.As(err, &we) {
				return nil, &Failure{Reason: "tools/list failed: " + c.red.Redact(we.Message)}
			}
			return nil, c.ht.classify(err, c.Transport, c.Server.URL, c.red, 0)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		if seen[res.NextCursor] || len(tools) > maxTools {
			return nil, &Failure{Reason: "tools/list does not end (a cursor repeats, or more than 10000 tools)"}
		}
		seen[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// Session is the connection's MCP session, for the requests besides tools
// that a gateway passes through (prompts, resources, completion, logging
// level). Its answers are not redacted: the caller redacts them.
func (c *Conn) Session() *mcp.ClientSession { return c.session }

// Call calls the server's tool name with args, for at most timeout (0:
// CallTimeout). Cancelling ctx, or the timeout, sends
// notifications/cancelled. The result is redacted. It never retries. The
// error is a *Failure: ServerError, Timeout or Lost tell them apart.
func (c *Conn) Call(ctx context.Context, name string, args any, timeout time.Duration) (*mcp.CallToolResult, error) {
	return c.CallParams(ctx, &mcp.CallToolParams{Name: name, Arguments: args}, timeout)
}

// CallParams is Call with the request's params as given (with a progress
// token in _meta, say).
func (c *Conn) CallParams(ctx context.Context, params *mcp.CallToolParams, timeout time.Duration) (*mcp.CallToolResult, error) {
	if timeout <= 0 {
		timeout = CallTimeout
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	seq := c.ht.mark()
	res, err := c.session.CallTool(callCtx, params)
	if err == nil {
		return redact.Result(res, c.red.Redact), nil
	}
	switch {
	case ctx.Err() != nil:
		return nil, &Failure{Reason: "the call was cancelled"}
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return nil, &Failure{Reason: "no answer within " + formatDuration(timeout) + "; the call was cancelled", Timeout: true}
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && !localCode(we.Code) {
		return nil, &Failure{Reason: c.red.Redact(we.Message), ServerError: true, Code: we.Code}
	}
	f := c.ht.classify(err, c.Transport, c.Server.URL, c.red, seq)
	reason := f.Reason
	if strings.HasPrefix(reason, "protocol error: ") {
		reason = "the connection was lost: " + strings.TrimPrefix(reason, "protocol error: ")
	}
	return nil, &Failure{Reason: reason, Lost: true}
}

// localCode reports whether a JSON-RPC error code is one the SDK makes up
// on this side (the connection is closing, or the transport rejected the
// message) rather than the server's answer.
func localCode(code int64) bool {
	return code == -32003 || code == -32004 || code == -32005
}

// Ping checks that the server still answers, within the list timeout.
func (c *Conn) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.list())
	defer cancel()
	return c.session.Ping(ctx, nil)
}

// Alive reports whether the connection has not ended.
func (c *Conn) Alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// ProbeResult is what Probe found.
type ProbeResult struct {
	Transport     string
	ServerName    string
	ServerVersion string
	Tools         []*mcp.Tool
}

// Probe connects to s, lists its tools and disconnects: what `mcpc remote
// add` does before it saves anything.
func Probe(ctx context.Context, s Server, h Headers, opts DialOptions) (*ProbeResult, error) {
	c, err := Dial(ctx, s, h, opts)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	return &ProbeResult{Transport: c.Transport, ServerName: c.ServerName, ServerVersion: c.ServerVersion, Tools: tools}, nil
}

// connTransport ties every request to the connection, bounds the
// answers, and remembers what went wrong, for reasons. Its base is the
// connection's guard (remotehttp), which adds the entry's headers to
// requests to the server's own origin and refuses any other origin (a
// redirect, an SSE endpoint event elsewhere).
type connTransport struct {
	base http.RoundTripper
	ctx  context.Context // the connection's: its end ends every request
	// events, if set, wraps each event stream (DialOptions.Order).
	events func(ctx context.Context, body io.ReadCloser) io.ReadCloser

	mu     sync.Mutex
	seq    int    // counts recorded problems
	status int    // the last HTTP status >= 400
	ctype  string // content type of the last 2xx answer that was not MCP
	err    error  // the last transport error
}

// mark returns the current problem count, so that classify can ignore what
// happened before.
func (t *connTransport) mark() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seq
}

func (t *connTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var release func()
	if t.ctx != nil {
		if err := t.ctx.Err(); err != nil {
			// The connection was closed or abandoned: nothing more of it
			// goes out (an abandoned session's DELETE, say).
			return nil, err
		}
		ctx, cancel := context.WithCancel(req.Context())
		stop := context.AfterFunc(t.ctx, cancel)
		req = req.WithContext(ctx)
		release = func() { stop(); cancel() }
	}
	resp, err := t.base.RoundTrip(req)
	t.mu.Lock()
	switch {
	case err != nil:
		t.err, t.seq = err, t.seq+1
	case resp.StatusCode >= 400:
		t.status, t.seq = resp.StatusCode, t.seq+1
	case resp.StatusCode < 300:
		ct := strings.ToLower(strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0]))
		if ct != "" && ct != "application/json" && ct != "text/event-stream" {
			t.ctype, t.seq = ct, t.seq+1
		}
	}
	t.mu.Unlock()
	if release != nil {
		if err != nil {
			release()
		} else {
			// The body may stream for long: the request lives until it is
			// closed, or until the connection ends.
			resp.Body = &releaseOnClose{ReadCloser: resp.Body, release: release}
		}
	}
	if err == nil && !remotehttp.IsEventStream(resp) {
		// The SDK reads such a body whole (io.ReadAll): bound it, so that a
		// hostile server cannot exhaust mcpc's memory. An event stream may
		// run for the whole connection; the SDK bounds each of its events
		// (mcp.DefaultMaxEventSize).
		resp.Body = &limitedBody{ReadCloser: resp.Body, left: MaxBody, t: t}
	}
	if err == nil && t.events != nil && remotehttp.IsEventStream(resp) {
		resp.Body = t.events(req.Context(), resp.Body)
	}
	return resp, err
}

// MaxBody bounds an HTTP answer of a remote server that is not an event
// stream.
const MaxBody = 16 << 20

// errBodyTooLarge fails the read of an answer longer than MaxBody.
var errBodyTooLarge = errors.New("the server's answer is larger than 16 MiB")

// limitedBody fails with errBodyTooLarge once more than left bytes come,
// and records that for classify.
type limitedBody struct {
	io.ReadCloser
	left int64
	t    *connTransport
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly MaxBody from a longer one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n == 0 {
			return 0, err
		}
		b.t.mu.Lock()
		b.t.err, b.t.seq = errBodyTooLarge, b.t.seq+1
		b.t.mu.Unlock()
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// releaseOnClose ends a request's own context when its body is closed.
type releaseOnClose struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (b *releaseOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// classify turns an error of the SDK into a Failure, preferring what the
// HTTP layer saw (a status, a network error) to the SDK's words.
func (t *connTransport) classify(err error, kind, rawURL string, red *redact.Redactor, since int) *Failure {
	t.mu.Lock()
	status, ctype, terr := t.status, t.ctype, t.err
	if t.seq <= since {
		status, ctype, terr = 0, "", nil
	}
	t.mu.Unlock()
	http1 := kind == TransportHTTP
	switch {
	case status != 0:
		f := &Failure{Reason: fmt.Sprintf("%d (%s)", status, http.StatusText(status)), Status: status}
		switch status {
		case 400, 404, 405, 406, 415:
			f.fallback = http1
		}
		return f
	case terr != nil:
		return netFailure(terr)
	case ctype != "":
		return &Failure{Reason: "the server did not answer as an MCP server (it sent " + ctype + ")", fallback: http1}
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return &Failure{Reason: "the server refused the handshake: " + red.Redact(we.Message)}
	}
	if f := netFailure(err); f != nil && f.Reason != "" && !strings.HasPrefix(f.Reason, "cannot connect: ") {
		return f
	}
	return &Failure{Reason: "protocol error: " + cleanMessage(err.Error(), rawURL, red), fallback: http1}
}

// netFailure describes a network error in a few words.
func netFailure(err error) *Failure {
	var foreign *remotehttp.ForeignOrigin
	switch {
	case errors.As(err, &foreign):
		// Not a server that speaks another transport: no fallback.
		return &Failure{Reason: foreign.Error()}
	case errors.Is(err, errBodyTooLarge):
		return &Failure{Reason: errBodyTooLarge.Error()}
	}
	reason, timeout, cause := remotehttp.NetReason(err)
	if reason == "" {
		reason = "cannot connect: " + cause.Error()
	}
	return &Failure{Reason: reason, Timeout: timeout}
}

// cleanMessage makes an SDK error message safe to show: the URL (with its
// query) is replaced by the URL without query, and known secrets are
// redacted, also pieces of them (the SDK's JSON decoder quotes the first
// 32 bytes of a value it cannot read, which may cut a key a server echoes);
// only then is the message cut to maxMessage bytes (cutting first could
// leave the start of a secret, which no longer matches).
func cleanMessage(msg, rawURL string, red *redact.Redactor) string {
	if rawURL != "" {
		msg = strings.ReplaceAll(msg, rawURL, URLWithoutQuery(rawURL))
		if u, err := url.Parse(rawURL); err == nil && u.RawQuery != "" {
			msg = strings.ReplaceAll(msg, u.RawQuery, "…")
		}
	}
	msg = red.RedactFragments(msg)
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return msg
}

// maxMessage bounds an SDK error message in a reason.
const maxMessage = 300

// formatDuration renders a timeout as "15s", or "1.5s", "300ms".
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}
