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

	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/runtime/internal/hooks"
)

// The port between the host core and what serves it. A user of the host
// (package gateway) goes in through a chat: Tools, Call, and the processes
// and connections behind it (Chat.WithServerClient, Chat.RemoteSession);
// what those send besides results (progress, log messages, list changes,
// requests of the server to the client) comes out through the chat's
// Upstream, which the user gives the chat (Chat.Serve). The host core knows
// its user only as an Upstream: package runtime does not import the
// gateway.

// Upstream is the client side of a chat: where its processes' and remote
// connections' notifications and requests go. Its methods may be called
// from any goroutine of the host.
type Upstream interface {
	// ProcessOptions are the options of the MCP client of a new stdio
	// process of server (the client's capabilities and handlers that pass
	// what the process sends on), a receiving middleware, and the protocol
	// version to offer ("" for the host's own choice). link routes what the
	// process sends during calls to the calls' origins.
	ProcessOptions(server string, link *ProcLink) (*mcp.ClientOptions, mcp.Middleware, string)
	// Started gives a new process or remote connection (server is the
	// chat's server key) what the client set: the logging level and the
	// resource subscriptions. It returns the level it gave.
	Started(ctx context.Context, server string, cs *mcp.ClientSession) mcp.LoggingLevel
	// StartedLevel gives a process that now counts as running the client's
	// logging level if it changed since started gave was.
	StartedLevel(ctx context.Context, cs *mcp.ClientSession, was mcp.LoggingLevel)
	// RemoteConnected is told of a new connection to a remote server.
	RemoteConnected(server string, cs *mcp.ClientSession)
	// ListFeatures lists the prompts and resources of a server (its chat
	// server key) again, after it said they changed.
	ListFeatures(ctx context.Context, server string) error
	// ForwardLog passes a server's log message on.
	ForwardLog(ctx context.Context, server string, link *ProcLink, params *mcp.LoggingMessageParams)
	// ResourceUpdated passes a server's notifications/resources/updated on.
	ResourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams)
	// ToolsChanged is told that the chat's tools changed (table, or a newer
	// one, and the chat's remote tools).
	ToolsChanged(table *ToolTable)
}

// upstreamBox holds a chat's upstream (an atomic.Pointer needs a type).
type upstreamBox struct{ up Upstream }

// Serve makes up the chat's upstream: its processes started from now on
// pass what they send to it.
func (c *Chat) Serve(up Upstream) { c.up.Store(&upstreamBox{up}) }

// upstream returns the chat's upstream, nil if it is not served.
func (c *Chat) upstream() Upstream {
	if b := c.up.Load(); b != nil {
		return b.up
	}
	return nil
}

// CallOrigin is where a tool call came from.
type CallOrigin struct {
	ctx      context.Context // the client's request: notifications sent with it travel on its stream
	session  *mcp.ServerSession
	progress any // the client's progress token, nil if none
}

type originKey struct{}

func WithOrigin(ctx context.Context, o *CallOrigin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

func originOf(ctx context.Context) *CallOrigin {
	o, _ := ctx.Value(originKey{}).(*CallOrigin)
	return o
}

// ProcLink routes what one process sends during calls to the calls'
// origins. The downstream progress token is the gateway's own, so that two
// clients' equal tokens cannot mix.
type ProcLink struct {
	mu     sync.Mutex
	next   atomic.Uint64
	active []*linkedCall
	// ended are the calls that ended last, oldest first (at most
	// endedKept): a notification sent during a call is handled after the
	// call was answered when the call stopped waiting for it (cancelled,
	// the connection closed) or the server sent it after its answer
	// (ForwardProgress).
	ended []*linkedCall
	caps  string // JSON of the client capabilities the process was started with
	// order is the barrier state of the link's connection (notifyorder.go),
	// nil until it is made.
	order atomic.Pointer[notifyOrder]
}

// endedKept is how many ended calls a ProcLink still knows by token.
const endedKept = 8

type linkedCall struct {
	token  string
	origin *CallOrigin
}

// enter registers a call; the returned token goes downstream as the call's
// progress token (when the client asked for progress).
func (l *ProcLink) enter(o *CallOrigin) *linkedCall {
	c := &linkedCall{token: "mcpc-" + strconv.FormatUint(l.next.Add(1), 10), origin: o}
	l.mu.Lock()
	l.active = append(l.active, c)
	l.mu.Unlock()
	return c
}

func (l *ProcLink) leave(c *linkedCall) {
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
func (l *ProcLink) byToken(tok any) *CallOrigin {
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
func (l *ProcLink) current() *CallOrigin {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.active); n > 0 {
		return l.active[n-1].origin
	}
	return nil
}

// callParams adds the origin's progress token, mapped, to a call. The
// call runs the returned func once the server's answer is in, before it
// answers: it waits until what the server sent before its answer was
// handled, passed on to the origin (ProcLink.settle), then forgets the
// call.
func callParams(ctx context.Context, link *ProcLink, name string, args any) (*mcp.CallToolParams, func()) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	o := originOf(ctx)
	if o == nil || link == nil {
		return p, func() {}
	}
	c := link.enter(o)
	if o.progress != nil {
		p.SetProgressToken(c.token)
	}
	return p, func() {
		link.settle(ctx)
		link.leave(c)
	}
}

// ServerCaps returns a server's capabilities from its discovery.
func (h *Host) ServerCaps(name string) (*mcp.ServerCapabilities, string) {
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
		return RPCError(s.c, err)
	}
	defer s.release(r)
	if err := fn(r.p.cs); err != nil {
		return RPCError(s.c, err)
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

// ForwardProgress passes a server's progress notification on to the call
// its token belongs to, with the client's own token, with the call's
// request: a call answers only after the notifications its server sent
// before its answer were handled (callParams), so they travel ahead of the
// answer on the same path. One handled after the call was answered (the
// call stopped waiting: cancelled, or its connection closed; or the server
// sent it after its answer) goes to the same client session outside the
// ended request, as forwardLog does.
func ForwardProgress(ctx context.Context, redact func(string) string, link *ProcLink, params *mcp.ProgressNotificationParams) {
	if hooks.ForwardProgress != nil {
		hooks.ForwardProgress()
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

// RPCError turns an error into what the client gets: a server's JSON-RPC
// error as is, anything else as an internal error; redacted.
func RPCError(c *Chat, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return &jsonrpc.Error{Code: we.Code, Message: c.redact(we.Message), Data: we.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: c.redact(err.Error())}
}

// The rest of the port: what the gateway reads of the host, its chats and
// the tool table, and asks of them.

// Log logs a line of the host (level as in [LogEntry]; chat and server may
// be empty), redacted as every log line of the host is.
func (h *Host) Log(level, chat, server, format string, args ...any) {
	h.log(level, chat, server, format, args...)
}

// RedactLog redacts what the host knows as secret from s, as its log does.
func (h *Host) RedactLog(s string) string { return h.redactLog(s) }

// Clock is the host's clock.
func (h *Host) Clock() Clock { return h.clock }

// Context ends when the host closes.
func (h *Host) Context() context.Context { return h.ctx }

// Track runs f in the background as one of the host's goroutines, which
// Close waits for; false if the host is closing (f did not run).
func (h *Host) Track(f func()) bool { return h.track(f) }

// Do runs f on the host's goroutine that owns its timers.
func (h *Host) Do(f func()) { h.do(f) }

// CurrentTable is the host's tool table now, without waiting.
func (h *Host) CurrentTable() *ToolTable { return h.currentTable() }

// Table is the host's tool table after its discovery.
func (h *Host) Table(ctx context.Context) (*ToolTable, error) { return h.tools(ctx) }

// TableFor is the host's tool table once the tool name is in it or the
// discovery that could add it has ended.
func (h *Host) TableFor(ctx context.Context, name string) (*ToolTable, error) {
	return h.toolsFor(ctx, name)
}

// OnToolsChanged has f called whenever the host's tool table changes.
func (h *Host) OnToolsChanged(f func()) { h.addToolsListener(f) }

// WaitDiscoveries waits for each server's discovery in progress to end.
func (h *Host) WaitDiscoveries(ctx context.Context) error { return h.waitDiscoveries(ctx) }

// ApplyConfig is Apply with the lookup of the configuration values the
// plan's entries name.
func (h *Host) ApplyConfig(ctx context.Context, p *plan.Plan, config ConfigLookup) (*ApplyResult, error) {
	return h.apply(ctx, p, config)
}

// EscapedProcesses counts the processes that outlived their group kill.
func (h *Host) EscapedProcesses() int { return int(h.escapes.Load()) }

// Builtins are the host's built-in tool names: HostOptions.Builtins, else
// naming.DefaultBuiltins. Callers must not modify them.
func (h *Host) Builtins() []string {
	if h.opts.Builtins == nil {
		return naming.DefaultBuiltins
	}
	return h.opts.Builtins
}

// PlanServers are the host's plan entries now, in plan order.
func (h *Host) PlanServers() []*plan.Server {
	servers := h.servers()
	out := make([]*plan.Server, len(servers))
	for i, hs := range servers {
		out[i] = hs.cfg
	}
	return out
}

// Redact redacts the chat's known secrets from s.
func (c *Chat) Redact(s string) string { return c.redact(s) }

// Redactor is the chat's redactor of its known secrets.
func (c *Chat) Redactor() *redact.Redactor { return c.redactor() }

// CloseFor closes the chat; its processes stop for why.
func (c *Chat) CloseFor(why StopReason) { c.closeFor(why) }

// ServerEntries are the plan entries of the chat's stdio servers now, in
// plan order.
func (c *Chat) ServerEntries() []*plan.Server {
	slots := c.slotList()
	out := make([]*plan.Server, len(slots))
	for i, s := range slots {
		out[i] = s.srv.cfg
	}
	return out
}

// RunningSession is the client session of the chat's running process of
// server, nil if none runs.
func (c *Chat) RunningSession(server string) *mcp.ClientSession { return c.slotOf(server).running() }

// RunningSessions are the client sessions of the chat's running processes
// of the plan's servers, in plan order.
func (c *Chat) RunningSessions() []*mcp.ClientSession {
	var out []*mcp.ClientSession
	for _, s := range c.slotList() {
		if cs := s.running(); cs != nil {
			out = append(out, cs)
		}
	}
	return out
}

// WithServerClient runs fn with the chat's process of server, starting it
// if needed, as a call would (without taking the one-call-at-a-time turn:
// these requests do not change the server's state).
func (c *Chat) WithServerClient(ctx context.Context, server, what string, fn func(*mcp.ClientSession) error) error {
	return c.slotOf(server).withClient(ctx, what, fn)
}

// NotifyRootsChanged has every running process the chat made send
// notifications/roots/list_changed, in the background: adding a root is
// the go-sdk client's one way to send it, and marker is never served.
func (c *Chat) NotifyRootsChanged(marker *mcp.Root) {
	for _, s := range c.allSlots(false) {
		s.mu.Lock()
		r := s.run
		s.mu.Unlock()
		if r == nil || r.p.client == nil {
			continue
		}
		client := r.p.client
		c.h.track(func() { client.AddRoots(marker) })
	}
}

// RestartOtherCaps stops the chat's processes that were started with other
// client capabilities than caps (ProcLink.SetCaps) and have no call in
// flight or waiting, for why: the next request starts them again.
func (c *Chat) RestartOtherCaps(caps string, why StopReason) {
	for _, s := range c.slotList() {
		s.mu.Lock()
		r := s.run
		if r == nil || r.link == nil || r.link.caps == caps || s.inflight > 0 || s.waiting > 0 {
			s.mu.Unlock()
			continue
		}
		s.run, s.state = nil, StateNotStarted
		s.epoch++
		if s.idle != nil {
			s.idle.Stop()
			s.idle = nil
		}
		s.mu.Unlock()
		name := s.srv.cfg.Name
		c.h.log("Information", c.id, name, "MCP server %s restarts: %s", name, why)
		s := s
		if !c.h.track(func() { s.stopRun(r, why) }) {
			s.stopRun(r, why)
		}
	}
}

// RelistServerTools lists server's tools again from the chat's running
// process (none: nothing to do); the host's table takes them, tools being
// named per host.
func (c *Chat) RelistServerTools(ctx context.Context, server string) error {
	s := c.slotOf(server)
	cs := s.running()
	if cs == nil {
		return nil
	}
	tools, err := ListServerTools(ctx, cs)
	if err != nil {
		return err
	}
	hs := s.srv
	hs.mu.Lock()
	hs.tools = tools
	hs.mu.Unlock()
	c.h.rebuildTable()
	return nil
}

// HasRemote says whether the chat connects to remote servers
// (HostOptions.Remote).
func (c *Chat) HasRemote() bool { return c.remote != nil }

// HasRemoteServers says whether the chat has remote servers to connect to.
func (c *Chat) HasRemoteServers() bool { return c.remote != nil && c.remote.m != nil }

// RefreshRemote re-reads the chat's servers.json and lists the tools of
// its remote servers against table.
func (c *Chat) RefreshRemote(ctx context.Context, table *ToolTable) error {
	return c.remote.refresh(ctx, table)
}

// RemoteTools are the chat's remote tools and their generation.
func (c *Chat) RemoteTools() ([]*Tool, uint64) { return c.remote.snapshot() }

// RemoteNames are the chat's remote servers, in servers.json order.
func (c *Chat) RemoteNames() []string { return c.remote.names() }

// RemoteSession is a connected remote server of a chat.
type RemoteSession struct {
	Name    string
	Session *mcp.ClientSession
}

// RemoteSessions are the chat's remote servers connected now, in
// servers.json order.
func (c *Chat) RemoteSessions() []RemoteSession {
	live := c.remote.live()
	if live == nil {
		return nil
	}
	out := make([]RemoteSession, len(live))
	for i, l := range live {
		out[i] = RemoteSession{Name: l.Name, Session: l.Session}
	}
	return out
}

// RemoteSession is the session of the chat's remote server name,
// reconnecting as a call would.
func (c *Chat) RemoteSession(ctx context.Context, name string) (*mcp.ClientSession, error) {
	return c.remote.session(ctx, name)
}

// RemotePromptSection is what the agent's prompt says of the chat's remote
// servers that are unavailable or skipped.
func (c *Chat) RemotePromptSection() string { return c.remote.promptSection() }

// Gen is the table's generation: it grows with each change.
func (t *ToolTable) Gen() uint64 { return t.gen }

// Tools are the table's tools in order; the caller must not change them.
func (t *ToolTable) Tools() []*Tool { return t.list }

// ByName are the table's tools by name; the caller must not change it.
func (t *ToolTable) ByName() map[string]*Tool { return t.byName }

// PerServer is how many tools of server the table holds.
func (t *ToolTable) PerServer(server string) int { return t.perServer[server] }

// NewCallOrigin is the origin of a call a client sent in ctx over session,
// with its progress token (nil if none).
func NewCallOrigin(ctx context.Context, session *mcp.ServerSession, progress any) *CallOrigin {
	return &CallOrigin{ctx: ctx, session: session, progress: progress}
}

// Session is the client session the call came from.
func (o *CallOrigin) Session() *mcp.ServerSession { return o.session }

// Context is the client's request.
func (o *CallOrigin) Context() context.Context { return o.ctx }

// SetCaps records the client capabilities (JSON, with the protocol
// version) the link's process is started with.
func (l *ProcLink) SetCaps(caps string) { l.caps = caps }

// Current is the origin of the latest call in flight, nil if none.
func (l *ProcLink) Current() *CallOrigin { return l.current() }

// AutoConnect says whether the profile's chat connects to its servers
// when the gateway starts.
func (p *CraftbotProfile) AutoConnect() bool { return p.autoConnect.Load() }
