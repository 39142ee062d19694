package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// The fast path of tools/call over a transport the gateway serves itself
// (ServeTransport: `mcpc run --stdio`). The transport decodes each message
// once (transport.DecodeMessage); a tools/call is then answered beside the
// go-sdk's session instead of through it, because the SDK decodes the
// call's params twice more (its _meta, then the params), each time with a
// fresh 32 KiB decoder buffer, and that garbage was a quarter of the bytes
// a proxied call allocated and most of the collector's work in the
// gateway (docs/performance.md, "The gateway against mcp-proxy and
// supergateway"). The call runs what the SDK runs for it: the tools
// middleware (prepareTools), the tool lookup and the tool's handler
// (callTool); the answer is written as the SDK writes it, through
// validErrors.
//
// Every other message goes to the SDK, and so does a call the fast path
// does not take: one read before the session's initialize was handled, one
// whose params it cannot read (the SDK answers those with its own errors),
// and one of the sessionless protocol revision. A notifications/cancelled
// cancels a fast call of its id as the SDK would, and goes on to the SDK
// for its own calls. Reading ends: every fast call is cancelled, as the
// SDK cancels its calls; ServeTransport returns once they answered.

// fastTransport wraps the transport of a session that ServeTransport
// serves.
type fastTransport struct {
	inner mcp.Transport
	gc    *gatewayChat
	ctx   context.Context // the session's: its end cancels the fast calls
	conn  *fastConn       // set by Connect
}

func (t *fastTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	base, stop := context.WithCancelCause(t.ctx)
	t.conn = &fastConn{Connection: c, gc: t.gc, base: base, stop: stop, calls: map[jsonrpc.ID]context.CancelCauseFunc{}}
	return t.conn, nil
}

// fastConn is the connection of a fastTransport.
type fastConn struct {
	mcp.Connection

	gc      *gatewayChat
	session atomic.Pointer[mcp.ServerSession] // set once the SDK connected it
	base    context.Context                   // of every fast call
	stop    context.CancelCauseFunc           // cancels base
	running sync.WaitGroup                    // fast calls not answered yet

	mu    sync.Mutex
	calls map[jsonrpc.ID]context.CancelCauseFunc // fast calls in flight, by id
}

func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.stop(err)
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		switch {
		case req.Method == "notifications/cancelled":
			c.cancel(req.Params)
		case req.Method == "tools/call" && req.IsCall():
			if c.take(req) {
				continue
			}
		}
		return msg, nil
	}
}

// Close ends the connection and cancels the fast calls.
func (c *fastConn) Close() error {
	c.stop(mcp.ErrConnectionClosed)
	return c.Connection.Close()
}

// callParams are the params of tools/call as the SDK reads them
// (mcp.CallToolParamsRaw).
type callParams struct {
	Meta      mcp.Meta        `json:"_meta,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// take starts req as a fast call, or reports that the SDK must serve it.
func (c *fastConn) take(req *jsonrpc.Request) bool {
	ss := c.session.Load()
	if ss == nil || ss.InitializeParams() == nil {
		return false
	}
	raw := bytes.TrimSpace(req.Params)
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var p callParams
	if transport.DecodeParams(raw, &p) != nil {
		return false
	}
	if _, sessionless := p.Meta[mcp.MetaKeyProtocolVersion]; sessionless {
		return false
	}
	ctx, cancel := context.WithCancelCause(c.base)
	c.mu.Lock()
	if _, dup := c.calls[req.ID]; dup {
		// The SDK answers a second call of an id in flight as it does.
		c.mu.Unlock()
		cancel(nil)
		return false
	}
	c.calls[req.ID] = cancel
	c.running.Add(1)
	c.mu.Unlock()
	go c.serve(ctx, ss, req.ID, &p)
	return true
}

// serve runs a fast call and writes its answer.
func (c *fastConn) serve(ctx context.Context, ss *mcp.ServerSession, id jsonrpc.ID, p *callParams) {
	defer c.running.Done()
	res, err := c.call(ctx, ss, p)
	resp := &jsonrpc.Response{ID: id}
	if err == nil {
		resp.Result, err = marshalResult(res)
	}
	if err != nil {
		resp.Result = nil
		resp.Error = err
	}
	// The id is free again before the answer leaves, as in the SDK: the
	// client may reuse it as soon as it has the answer.
	c.mu.Lock()
	cancel := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	cancel(nil)
	// As the SDK does, the answer is written even if the call was
	// cancelled, and with a context that is not.
	_ = c.Connection.Write(context.WithoutCancel(ctx), resp)
}

// call is what the SDK's server runs for a tools/call: the gateway's
// middleware, the tool lookup (an unknown tool is the SDK's error), the
// tool's handler, and no null content.
func (c *fastConn) call(ctx context.Context, ss *mcp.ServerSession, p *callParams) (*mcp.CallToolResult, error) {
	gc := c.gc
	if done := gc.g.work(gc); done != nil {
		defer done()
	}
	if err := gc.g.prepareTools(ctx, gc, false, p.Name); err != nil {
		return nil, err
	}
	gc.mu.Lock()
	t := gc.tools[p.Name]
	gc.mu.Unlock()
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	}
	res, err := gc.callTool(ctx, ss, t, p.Arguments, p.Meta["progressToken"])
	if err == nil && res != nil && res.Content == nil {
		res2 := *res
		res2.Content = []mcp.Content{} // no "null", as the SDK
		res = &res2
	}
	return res, err
}

// marshalResult encodes a result as the SDK does (no HTML escaping).
func marshalResult(res *mcp.CallToolResult) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the result could not be encoded"}
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// cancel cancels the fast call that a notifications/cancelled names.
func (c *fastConn) cancel(params json.RawMessage) {
	var p struct {
		RequestID any    `json:"requestId"`
		Reason    string `json:"reason"`
	}
	if transport.DecodeParams(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	c.mu.Lock()
	cancel := c.calls[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel(context.Canceled)
	}
}
