package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
// the path its answer takes.

// notifyOrder is the barrier state of one connection.
type notifyOrder struct {
	prefix string // of the barriers' progress tokens: no server knows it

	mu      sync.Mutex
	fresh   bool          // a notification was read after the last barrier
	sent    uint64        // barriers read so far
	reached uint64        // the last barrier handled
	wake    chan struct{} // closed when reached grows
	// closed is closed when the client closed the connection, which it
	// does once nothing it read is left to handle: a barrier not handled
	// by then never will be.
	closed    chan struct{}
	closeOnce sync.Once
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
	o.mu.Lock()
	defer o.mu.Unlock()
	switch m := m.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() {
			o.fresh = true
		}
	case *jsonrpc.Response:
		if o.fresh {
			o.fresh = false
			o.sent++
			tok := o.prefix + strconv.FormatUint(o.sent, 10)
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
	o.mu.Unlock()
	return true
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
// just read was handled (notifyOrder.wait).
func (l *ProcLink) settle(ctx context.Context) {
	if o := l.order.Load(); o != nil {
		o.wait(ctx)
	}
}
