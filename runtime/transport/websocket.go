package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// The defaults of RemoteOptions.
const (
	// DefaultHandshakeTimeout bounds the websocket handshake (SPEC §4: a
	// remote handshake takes at most 15 s).
	DefaultHandshakeTimeout = 15 * time.Second
	// DefaultPingInterval is how often an idle websocket is pinged.
	DefaultPingInterval = 30 * time.Second
	// DefaultPingTimeout is how long a ping may wait for its pong.
	DefaultPingTimeout = 15 * time.Second
	// DefaultMaxMessageBytes caps one message from a remote server, the
	// cap of a remote answer (remote.MaxBody).
	DefaultMaxMessageBytes = 16 << 20
	// DefaultPingRate and DefaultPingBurst bound the pings a server may
	// send: a burst of 100, then 10 a second. A keepalive sends one every
	// few seconds at most; a flood is refused before it costs more than
	// the pongs of its burst.
	DefaultPingRate  = 10
	DefaultPingBurst = 100
)

// Subprotocol is the websocket subprotocol of MCP.
const Subprotocol = "mcp"

// RemoteOptions tunes a remote transport (NewRemote). Zero values take the
// defaults above.
type RemoteOptions struct {
	HandshakeTimeout time.Duration
	// PingInterval is how often the websocket is pinged; negative: never.
	PingInterval time.Duration
	PingTimeout  time.Duration
	// MaxMessageBytes caps one message (a websocket message, an SSE
	// event) from the server.
	MaxMessageBytes int64
	// PingRate (per second) and PingBurst bound the server's pings.
	PingRate  float64
	PingBurst int
	// Transport is the HTTP transport the requests go through; nil: a
	// clone of http.DefaultTransport, whose idle connections Close closes.
	Transport http.RoundTripper
}

func (o RemoteOptions) withDefaults() RemoteOptions {
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = DefaultPingTimeout
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.PingRate <= 0 {
		o.PingRate = DefaultPingRate
	}
	if o.PingBurst <= 0 {
		o.PingBurst = DefaultPingBurst
	}
	return o
}

// WebSocketTransport is MCP over a websocket, client side: one JSON-RPC
// message per text message, subprotocol mcp. Make it with NewRemote.
//
// The server may accept the subprotocol or name none (as Python's MCP
// client allows); naming another one fails the handshake. The connection
// pings the server every PingInterval and drops it, with an error that
// says so, when a pong does not come within PingTimeout. A message larger
// than MaxMessageBytes, a binary message, or pings beyond PingRate and
// PingBurst end the connection with an error that names the fault; the
// server's close code becomes an error that names it (*RemoteError).
// Headers go only to the url's origin (a redirect elsewhere is refused)
// and appear in no error.
type WebSocketTransport struct {
	url    string
	guard  *originGuard
	opts   RemoteOptions
	client *http.Client
}

// Connect performs the websocket handshake within HandshakeTimeout (or
// ctx, if it ends first) and starts the connection's reading and pinging.
func (t *WebSocketTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c := &wsConn{
		opts:    t.opts,
		guard:   t.guard,
		pings:   rate.NewLimiter(rate.Limit(t.opts.PingRate), t.opts.PingBurst),
		queue:   make(chan jsonrpc.Message),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	hctx, cancel := context.WithTimeout(ctx, t.opts.HandshakeTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(hctx, t.url, &websocket.DialOptions{
		HTTPClient:     t.client,
		Subprotocols:   []string{Subprotocol},
		OnPingReceived: c.pingReceived,
	})
	if err != nil {
		t.guard.closeIdle()
		return nil, t.handshakeError(ctx, hctx, resp, err)
	}
	conn.SetReadLimit(t.opts.MaxMessageBytes)
	c.conn = conn
	c.life, c.end = context.WithCancel(context.Background())
	c.workers.Add(1)
	go c.readLoop()
	if t.opts.PingInterval > 0 {
		c.workers.Add(1)
		go c.pingLoop()
	}
	return c, nil
}

// handshakeError says why the handshake failed, without the url (its
// query may hold a key) or any header.
func (t *WebSocketTransport) handshakeError(ctx, hctx context.Context, resp *http.Response, err error) error {
	if refused := t.guard.refusal(); refused != nil {
		return refused
	}
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case hctx.Err() != nil:
		return &RemoteError{Reason: "no websocket handshake within " + formatDuration(t.opts.HandshakeTimeout), Timeout: true}
	case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
		return &RemoteError{Reason: fmt.Sprintf("the server refused the websocket handshake: %d (%s)", resp.StatusCode, http.StatusText(resp.StatusCode)), Status: resp.StatusCode}
	case resp != nil:
		// 101, but the answer broke the protocol (a subprotocol not
		// offered, a bad accept key); the library's words name the header
		// and quote the server's value, never ours.
		return &RemoteError{Reason: "the websocket handshake failed: " + CutText(sanitize(strings.TrimPrefix(err.Error(), "failed to WebSocket dial: "), t.guard.headers), MaxErrorText)}
	}
	return &RemoteError{Reason: netReason(err)}
}

// wsConn is a connection of WebSocketTransport.
type wsConn struct {
	conn  *websocket.Conn
	opts  RemoteOptions
	guard *originGuard
	pings *rate.Limiter

	// queue carries the messages the reading goroutine decoded.
	queue chan jsonrpc.Message
	// done is closed when the connection ends (failed, or closed by
	// either side); err is then why.
	done     chan struct{}
	failOnce sync.Once
	err      error
	// life ends the reading and pinging goroutines; workers counts them.
	life    context.Context
	end     context.CancelFunc
	workers sync.WaitGroup
	// stopped is closed when Close has finished.
	closeOnce sync.Once
	stopped   chan struct{}
}

// fail ends the connection with err (the first reason wins), closing it
// with code unless the server already closed it (code 0: no close frame).
// It never blocks: the close handshake runs on its own goroutine, which
// Close waits for.
func (c *wsConn) fail(err error, code websocket.StatusCode, reason string) {
	c.failOnce.Do(func() {
		c.err = err
		close(c.done)
		c.workers.Add(1)
		go func() {
			defer c.workers.Done()
			if code == 0 {
				c.conn.CloseNow()
			} else {
				c.conn.Close(code, reason)
			}
			c.end()
		}()
	})
}

// pingReceived counts the server's pings; beyond the rate it refuses the
// pong and ends the connection.
func (c *wsConn) pingReceived(context.Context, []byte) bool {
	if c.pings.Allow() {
		return true
	}
	c.fail(&RemoteError{Reason: fmt.Sprintf("the server flooded the websocket with pings (more than %d at once, or %g a second)", c.opts.PingBurst, c.opts.PingRate)},
		websocket.StatusPolicyViolation, "ping flood")
	return false
}

// readLoop reads messages until the connection ends.
func (c *wsConn) readLoop() {
	defer c.workers.Done()
	for {
		msgs, code, err := c.readMessage()
		if err != nil {
			c.fail(err, code, closeText(code))
			return
		}
		for _, m := range msgs {
			select {
			case c.queue <- m:
			case <-c.done:
				return
			}
		}
	}
}

// readMessage reads one websocket message and decodes it. On failure it
// also returns the close code to answer with (0: none, the connection is
// gone).
func (c *wsConn) readMessage() ([]jsonrpc.Message, websocket.StatusCode, error) {
	typ, r, err := c.conn.Reader(c.life)
	if err != nil {
		return nil, 0, c.readError(err)
	}
	if typ != websocket.MessageText {
		return nil, websocket.StatusUnsupportedData, &RemoteError{Reason: "the server sent a binary websocket message; MCP over websocket is text only"}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, c.readError(err)
	}
	if len(data) > 0 && data[0] == '[' {
		msgs, err := decodeBatch(data)
		if err != nil {
			return nil, websocket.StatusInvalidFramePayloadData, &RemoteError{Reason: "the server sent a message that is not JSON-RPC: " + CutText(err.Error(), MaxErrorText)}
		}
		return msgs, 0, nil
	}
	msg, err := DecodeMessage(data)
	if err != nil {
		return nil, websocket.StatusInvalidFramePayloadData, &RemoteError{Reason: "the server sent a message that is not JSON-RPC: " + CutText(err.Error(), MaxErrorText)}
	}
	return []jsonrpc.Message{msg}, 0, nil
}

// readError turns an error of the websocket library into a RemoteError:
// a close frame becomes its code's words, a message over the cap says
// the cap.
func (c *wsConn) readError(err error) error {
	var ce websocket.CloseError
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		return &RemoteError{Reason: "the server sent a websocket message larger than the cap of " + formatBytes(c.opts.MaxMessageBytes)}
	case errors.As(err, &ce):
		return closeError(int(ce.Code), sanitize(ce.Reason, c.guard.headers))
	case c.life.Err() != nil:
		return mcp.ErrConnectionClosed
	}
	return closeError(int(websocket.StatusAbnormalClosure), "")
}

// pingLoop pings the server every PingInterval and fails the connection
// when a pong does not come within PingTimeout. A ping needs a concurrent
// reader to see its pong: readLoop is one.
func (c *wsConn) pingLoop() {
	defer c.workers.Done()
	tick := time.NewTicker(c.opts.PingInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.life.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(c.life, c.opts.PingTimeout)
		err := c.conn.Ping(ctx)
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		if timedOut {
			c.fail(&RemoteError{Reason: "the server did not answer a websocket ping within " + formatDuration(c.opts.PingTimeout), Timeout: true}, 0, "")
			return
		}
		if err != nil {
			return // the connection ended; readLoop says why
		}
	}
}

func (c *wsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.queue:
		return m, nil
	case <-c.done:
		return nil, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends msg as one text message. ctx is honoured only before the
// message starts: the library closes the websocket when the context of a
// write ends during it (half a message cannot be taken back), and the SDK
// writes a request with its call's context, so cancelling a call would
// otherwise drop the connection of every other call. A write that blocks
// (a server that stopped reading) ends with the connection: the
// keepalive's ping cannot be written either and times out.
func (c *wsConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := EncodeMessage(msg)
	if err != nil {
		return err
	}
	if err := c.conn.Write(c.life, websocket.MessageText, data); err != nil {
		select {
		case <-c.done:
			return c.err
		default:
		}
		return &RemoteError{Reason: "writing to the websocket: " + netReason(err)}
	}
	return nil
}

// Close ends the connection with a normal closure and waits until its
// goroutines are gone. The close handshake is bounded by the library (5 s
// each way).
func (c *wsConn) Close() error {
	c.closeOnce.Do(func() {
		c.fail(mcp.ErrConnectionClosed, websocket.StatusNormalClosure, "")
		c.workers.Wait()
		c.end()
		c.guard.closeIdle()
		close(c.stopped)
	})
	<-c.stopped
	return nil
}

func (c *wsConn) SessionID() string { return "" }

// closeText is the reason mcpc sends with its own close code.
func closeText(code websocket.StatusCode) string {
	switch code {
	case websocket.StatusUnsupportedData:
		return "binary message"
	case websocket.StatusInvalidFramePayloadData:
		return "not JSON-RPC"
	}
	return ""
}
