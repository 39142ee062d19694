package runtime

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/internal/hooks"
)

// What a server sends before its answer to a call reaches the call's
// client before that answer (docs/decisions/0027-gateway-pass-through.md).
//
// The go-sdk's client hands a response to its caller from its read loop,
// at once, but runs the handlers of notifications one at a time on another
// goroutine: a progress notification read before a response can still be
// on its way while the caller already has the response, and the gateway
// would answer its client first. So a connection of a ProcLink puts a
// barrier in front of every response that follows a notification: a
// progress notification with a token of its own, which the client queues
// behind the notifications read before it and whose handling the link
// sees (and passes on to no one). A call, before it answers, waits until
// the barrier in front of its response was handled (ProcLink.settle): the
// handlers of every notification read before the response have returned,
// and those pass progress and log messages on with the call's request, on
// the path its answer takes. The go-sdk's Streamable HTTP connection
// cannot be wrapped (it keeps the session's state itself): there the
// barrier goes into each event stream, which holds the response back
// until the barrier was handled (orderedEvents).

// notifyOrder is the barrier state of one connection.
type notifyOrder struct {
	prefix string // of the barriers' progress tokens: no server knows it

	fresh bool // a notification was read after the last barrier (the read loop's)

	mu      sync.Mutex
	sent    uint64        // barriers read so far
	reached uint64        // the last barrier handled
	wake    chan struct{} // closed when reached grows
	// closed is closed when the client closed the connection, which it
	// does once nothing it read is left to handle: a barrier not handled
	// by then never will be.
	closed    chan struct{}
	closeOnce sync.Once
	// streams: the barriers go into the event streams of a Streamable
	// HTTP connection (orderedEvents), each one waited for in its stream,
	// not by settle.
	streams bool
	pending map[uint64]chan struct{} // the barriers of streams not handled yet
}

const barrierPrefix = "mcpc-order-"

func newNotifyOrder() *notifyOrder {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &notifyOrder{prefix: barrierPrefix + hex.EncodeToString(b[:]) + "-", wake: make(chan struct{}), closed: make(chan struct{})}
}

// read notes what the read loop read; before a response that follows a
// notification it returns the barrier to read first.
func (o *notifyOrder) read(m jsonrpc.Message) *jsonrpc.Request {
	switch m := m.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() {
			o.fresh = true
		}
	case *jsonrpc.Response:
		if o.fresh {
			o.fresh = false
			o.mu.Lock()
			o.sent++
			n := o.sent
			o.mu.Unlock()
			tok := o.prefix + strconv.FormatUint(n, 10)
			return &jsonrpc.Request{Method: "notifications/progress", Params: []byte(`{"progressToken":"` + tok + `","progress":0}`)}
		}
	}
	return nil
}

// handled reports whether tok is a barrier of this connection, noting
// that it was handled.
func (o *notifyOrder) handled(tok any) bool {
	s, ok := tok.(string)
	if !ok || !strings.HasPrefix(s, o.prefix) {
		return false
	}
	n, err := strconv.ParseUint(s[len(o.prefix):], 10, 64)
	if err != nil {
		return false
	}
	o.mu.Lock()
	if n > o.reached {
		o.reached = n
		close(o.wake)
		o.wake = make(chan struct{})
	}
	if ch, ok := o.pending[n]; ok {
		delete(o.pending, n)
		close(ch)
	}
	o.mu.Unlock()
	return true
}

// streamBarrier returns a new barrier of a stream and what is closed once
// it was handled.
func (o *notifyOrder) streamBarrier() (event []byte, handled chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent++
	handled = make(chan struct{})
	if o.pending == nil {
		o.pending = map[uint64]chan struct{}{}
	}
	o.pending[o.sent] = handled
	tok := o.prefix + strconv.FormatUint(o.sent, 10)
	return []byte(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + tok + `","progress":0}}` + "\n\n"), handled
}

// forget drops a stream's barrier no one waits for any more.
func (o *notifyOrder) forget(handled chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n, ch := range o.pending {
		if ch == handled {
			delete(o.pending, n)
		}
	}
}

// wait returns once every barrier read so far was handled, the connection
// is closed, or ctx ends.
func (o *notifyOrder) wait(ctx context.Context) {
	o.mu.Lock()
	target := o.sent
	for o.reached < target {
		wake := o.wake
		o.mu.Unlock()
		select {
		case <-wake:
		case <-o.closed:
			return
		case <-ctx.Done():
			return
		}
		o.mu.Lock()
	}
	o.mu.Unlock()
}

// orderedTransport is a client transport whose connection puts barriers
// in front of responses (notifyOrder).
type orderedTransport struct {
	inner mcp.Transport
	o     *notifyOrder
}

func (t *orderedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &orderedConn{Connection: c, o: t.o}, nil
}

type orderedConn struct {
	mcp.Connection
	o    *notifyOrder
	held jsonrpc.Message // the response behind the barrier just read (the read loop's)
}

// Read is called by the client's read loop only, one call at a time.
func (c *orderedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if m := c.held; m != nil {
		c.held = nil
		return m, nil
	}
	m, err := c.Connection.Read(ctx)
	if err != nil {
		return m, err
	}
	if b := c.o.read(m); b != nil {
		if hooks.ResponseBehindBarrier != nil {
			hooks.ResponseBehindBarrier()
		}
		c.held = m
		return b, nil
	}
	return m, nil
}

// Close is called by the client once it has nothing left to handle.
func (c *orderedConn) Close() error {
	err := c.Connection.Close()
	c.o.closeOnce.Do(func() { close(c.o.closed) })
	return err
}

// ordered makes t the transport of the link's connection from now on: its
// responses come after the handling of the notifications read before them
// (notifyOrder). The client of the connection must have the options
// orderedOptions gives.
func (l *ProcLink) ordered(t mcp.Transport) mcp.Transport {
	o := newNotifyOrder()
	l.order.Store(o)
	return &orderedTransport{inner: t, o: o}
}

// orderedOptions are opts (nil: none) with a progress handler that takes
// the barriers of the link's connection and passes everything else to
// opts' own handler.
func (l *ProcLink) orderedOptions(opts *mcp.ClientOptions) *mcp.ClientOptions {
	var o mcp.ClientOptions
	if opts != nil {
		o = *opts
	}
	next := o.ProgressNotificationHandler
	o.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		if ord := l.order.Load(); ord != nil && req.Params != nil && ord.handled(req.Params.ProgressToken) {
			return
		}
		if next != nil {
			next(ctx, req)
		}
	}
	return &o
}

// settle waits until what the link's connection read before the response
// just read was handled (notifyOrder.wait). A Streamable HTTP connection's
// streams wait themselves (orderedEvents).
func (l *ProcLink) settle(ctx context.Context) {
	if o := l.order.Load(); o != nil && !o.streams {
		o.wait(ctx)
	}
}

// streamOrder is the barrier state of the link's Streamable HTTP
// connections, made on first use.
func (l *ProcLink) streamOrder() *notifyOrder {
	for {
		if o := l.order.Load(); o != nil && o.streams {
			return o
		}
		o := newNotifyOrder()
		o.streams = true
		if old := l.order.Load(); (old == nil || !old.streams) && l.order.CompareAndSwap(old, o) {
			return o
		}
	}
}

// linkOrder is a ProcLink as a remote connection's remote.Order.
type linkOrder struct{ l *ProcLink }

func (lo linkOrder) MCP(t mcp.Transport) mcp.Transport { return lo.l.ordered(t) }

func (lo linkOrder) Events(ctx context.Context, body io.ReadCloser) io.ReadCloser {
	return &orderedEvents{o: lo.l.streamOrder(), ctx: ctx, body: body, r: bufio.NewReader(body), closed: make(chan struct{})}
}

// orderedEvents is an event stream of a Streamable HTTP connection, read by
// the go-sdk's client, with a barrier in front of each response that
// follows a notification in the stream. The response is read only once the
// barrier was handled: the client has pushed the stream's notifications and
// the barrier to its read loop, in order, before it asks for more of the
// stream. Only this stream waits: the read loop goes on.
type orderedEvents struct {
	o    *notifyOrder
	ctx  context.Context // the request's: it ends with the call or the connection
	body io.ReadCloser
	r    *bufio.Reader

	fresh  bool          // a notification came after the stream's last barrier
	event  []byte        // the lines of the event being read
	out    []byte        // what Read hands out next
	wait   chan struct{} // handled before next goes out (nil: nothing to wait for)
	next   []byte        // what goes out after wait
	err    error         // of the body, once what was read before it went out
	closed chan struct{} // Close was called
	once   sync.Once
}

func (e *orderedEvents) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.wait != nil {
			select {
			case <-e.wait:
			case <-e.ctx.Done():
				e.o.forget(e.wait)
				return 0, context.Cause(e.ctx)
			case <-e.closed:
				e.o.forget(e.wait)
				return 0, io.ErrClosedPipe
			}
			e.wait, e.out, e.next = nil, e.next, nil
			continue
		}
		if e.err != nil {
			return 0, e.err
		}
		e.fill()
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

// fill reads the body up to the end of an event (or of the body) and puts
// what to hand out in out (and wait, next).
func (e *orderedEvents) fill() {
	line, err := e.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		err = nil
	}
	e.event = append(e.event, line...)
	switch {
	case err != nil:
		e.out, e.event, e.err = e.event, nil, err
	case len(bytes.TrimRight(line, "\r\n")) == 0 && len(line) > 0 && line[len(line)-1] == '\n':
		e.dispatch()
	case len(e.event) > mcp.DefaultMaxEventSize:
		// The client refuses such an event; it goes on as it came.
		e.out, e.event = e.event, nil
	}
}

// dispatch hands out the event just read, behind a barrier if it is a
// response that follows a notification.
func (e *orderedEvents) dispatch() {
	event := e.event
	e.event = nil
	var data []byte
	name := ""
	for _, l := range bytes.Split(event, []byte("\n")) {
		l = bytes.TrimRight(l, "\r")
		if v, ok := bytes.CutPrefix(l, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		} else if v, ok := bytes.CutPrefix(l, []byte("event:")); ok {
			name = string(bytes.TrimSpace(v))
		}
	}
	e.out = event
	if len(data) == 0 || (name != "" && name != "message") {
		return
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() {
			e.fresh = true
		}
	case *jsonrpc.Response:
		if e.fresh {
			e.fresh = false
			if hooks.ResponseBehindBarrier != nil {
				hooks.ResponseBehindBarrier()
			}
			b, handled := e.o.streamBarrier()
			e.out, e.wait, e.next = b, handled, event
		}
	}
}

func (e *orderedEvents) Close() error {
	e.once.Do(func() { close(e.closed) })
	return e.body.Close()
}
