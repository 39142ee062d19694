package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The port between the host core and what serves it. A user of the host
// (the gateway) goes in through a chat: Tools, Call, and the processes and
// connections behind it (slotOf, withClient); what those send besides
// results (progress, log messages, list changes, requests of the server to
// the client) comes out through the chat's upstream, which the user gives
// the chat (Chat.serve). The host core knows its user only as an upstream:
// no file of the core names the gateway (layers_test.go).

// upstream is the client side of a chat: where its processes' and remote
// connections' notifications and requests go. Its methods may be called
// from any goroutine of the host.
type upstream interface {
	// processOptions are the options of the MCP client of a new stdio
	// process of server (the client's capabilities and handlers that pass
	// what the process sends on), a receiving middleware, and the protocol
	// version to offer ("" for the host's own choice). link routes what the
	// process sends during calls to the calls' origins.
	processOptions(server string, link *procLink) (*mcp.ClientOptions, mcp.Middleware, string)
	// started gives a new process or remote connection (server is the
	// chat's server key) what the client set: the logging level and the
	// resource subscriptions. It returns the level it gave.
	started(ctx context.Context, server string, cs *mcp.ClientSession) mcp.LoggingLevel
	// startedLevel gives a process that now counts as running the client's
	// logging level if it changed since started gave was.
	startedLevel(ctx context.Context, cs *mcp.ClientSession, was mcp.LoggingLevel)
	// remoteConnected is told of a new connection to a remote server.
	remoteConnected(server string, cs *mcp.ClientSession)
	// listFeatures lists the prompts and resources of a server (its chat
	// server key) again, after it said they changed.
	listFeatures(ctx context.Context, server string) error
	// forwardLog passes a server's log message on.
	forwardLog(ctx context.Context, server string, link *procLink, params *mcp.LoggingMessageParams)
	// resourceUpdated passes a server's notifications/resources/updated on.
	resourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams)
	// toolsChanged is told that the chat's tools changed (table, or a newer
	// one, and the chat's remote tools).
	toolsChanged(table *toolTable)
}

// upstreamBox holds a chat's upstream (an atomic.Pointer needs a type).
type upstreamBox struct{ up upstream }

// serve makes up the chat's upstream: its processes started from now on
// pass what they send to it.
func (c *Chat) serve(up upstream) { c.up.Store(&upstreamBox{up}) }

// upstream returns the chat's upstream, nil if it is not served.
func (c *Chat) upstream() upstream {
	if b := c.up.Load(); b != nil {
		return b.up
	}
	return nil
}

// callOrigin is where a tool call came from.
type callOrigin struct {
	ctx      context.Context // the client's request: notifications sent with it travel on its stream
	session  *mcp.ServerSession
	progress any // the client's progress token, nil if none
}

type originKey struct{}

func withOrigin(ctx context.Context, o *callOrigin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

func originOf(ctx context.Context) *callOrigin {
	o, _ := ctx.Value(originKey{}).(*callOrigin)
	return o
}

// procLink routes what one process sends during calls to the calls'
// origins. The downstream progress token is the gateway's own, so that two
// clients' equal tokens cannot mix.
type procLink struct {
	mu     sync.Mutex
	next   atomic.Uint64
	active []*linkedCall
	// ended are the calls that ended last, oldest first (at most
	// endedKept): a notification sent during a call can be handled after
	// the call was answered (forwardProgress).
	ended []*linkedCall
	caps  string // JSON of the client capabilities the process was started with
}

// endedKept is how many ended calls a procLink still knows by token.
const endedKept = 8

type linkedCall struct {
	token  string
	origin *callOrigin
}

// enter registers a call; the returned token goes downstream as the call's
// progress token (when the client asked for progress).
func (l *procLink) enter(o *callOrigin) *linkedCall {
	c := &linkedCall{token: "mcpc-" + strconv.FormatUint(l.next.Add(1), 10), origin: o}
	l.mu.Lock()
	l.active = append(l.active, c)
	l.mu.Unlock()
	return c
}

func (l *procLink) leave(c *linkedCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, a := range l.active {
		if a == c {
			l.active = append(l.active[:i], l.active[i+1:]...)
			l.ended = append(l.ended, c)
			if len(l.ended) > endedKept {
				l.ended = append(l.ended[:0], l.ended[1:]...)
			}
			return
		}
	}
}

// byToken finds the call a progress token belongs to, in flight or among
// the last that ended.
func (l *procLink) byToken(tok any) *callOrigin {
	s := fmt.Sprint(tok)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, calls := range [][]*linkedCall{l.active, l.ended} {
		for _, a := range calls {
			if a.token == s {
				return a.origin
			}
		}
	}
	return nil
}

// current is the origin of the latest call in flight (one at a time unless
// the server is parallel), nil if none.
func (l *procLink) current() *callOrigin {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.active); n > 0 {
		return l.active[n-1].origin
	}
	return nil
}

// callParams adds the origin's progress token, mapped, to a call.
func callParams(ctx context.Context, link *procLink, name string, args any) (*mcp.CallToolParams, func()) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	o := originOf(ctx)
	if o == nil || link == nil {
		return p, func() {}
	}
	c := link.enter(o)
	if o.progress != nil {
		p.SetProgressToken(c.token)
	}
	return p, func() { link.leave(c) }
}

// serverCaps returns a server's capabilities from its discovery.
func (h *Host) serverCaps(name string) (*mcp.ServerCapabilities, string) {
	s := h.server(name)
	if s == nil {
		return nil, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps, s.instructions
}

// slotOf returns the chat's slot of a stdio server.
func (c *Chat) slotOf(server string) *slot {
	if s := c.h.server(server); s != nil {
		return c.slotFor(s)
	}
	return c.goneSlot(server) // a reload removed it (reload.go)
}

// withClient runs fn with the chat's process of s, starting it if needed,
// as a call would (without taking the one-call-at-a-time turn: these
// requests do not change the server's state).
func (s *slot) withClient(ctx context.Context, what string, fn func(*mcp.ClientSession) error) error {
	r, err := s.acquire(ctx, &Tool{Name: what, Server: s.srv.cfg.Name})
	if err != nil {
		return rpcError(s.c, err)
	}
	defer s.release(r)
	if err := fn(r.p.cs); err != nil {
		return rpcError(s.c, err)
	}
	return nil
}

// running returns the client session of the slot's process, nil if none.
func (s *slot) running() *mcp.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil {
		return nil
	}
	return s.run.cs
}

// hookForwardProgress, nil but in a test, runs first in forwardProgress.
var hookForwardProgress func()

// forwardProgress passes a server's progress notification on to the call
// its token belongs to, with the client's own token. A notification the
// server sent before its answer can be handled here after the call was
// answered (the SDK hands a response to its caller before it runs the
// handlers of the notifications that came before it): it goes to the same
// client session outside the ended request, as forwardLog does.
func forwardProgress(ctx context.Context, redact func(string) string, link *procLink, params *mcp.ProgressNotificationParams) {
	if hookForwardProgress != nil {
		hookForwardProgress()
	}
	o := link.byToken(params.ProgressToken)
	if o == nil || o.session == nil {
		return
	}
	p := *params
	p.ProgressToken = o.progress
	p.Message = redact(p.Message)
	if err := o.session.NotifyProgress(o.ctx, &p); err != nil && o.ctx.Err() != nil {
		_ = o.session.NotifyProgress(ctx, &p)
	}
}

// rpcError turns an error into what the client gets: a server's JSON-RPC
// error as is, anything else as an internal error; redacted.
func rpcError(c *Chat, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return &jsonrpc.Error{Code: we.Code, Message: c.redact(we.Message), Data: we.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: c.redact(err.Error())}
}
