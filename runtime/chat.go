package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/runtime/internal/hooks"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/supervisor"
)

// DefaultCallTimeout applies when a plan server's callTimeoutSeconds is
// not positive (plans always set it; this guards hand-made plans).
const DefaultCallTimeout = 120 * time.Second

// brokenWait bounds the wait, after a call failed in the transport, for the
// session to end by itself before the process is stopped.
const brokenWait = 3 * time.Second

// CallErrorKind classifies a failed call.
type CallErrorKind string

const (
	CallUnknownTool CallErrorKind = "unknown-tool" // no agent-visible tool has this name
	CallStartFailed CallErrorKind = "start-failed" // the chat's process could not be started
	CallExited      CallErrorKind = "exited"       // the process died during the call (SPEC §4 message)
	CallTimeout     CallErrorKind = "timeout"      // callTimeoutSeconds passed; the server was told to cancel
	CallCancelled   CallErrorKind = "cancelled"    // the caller cancelled; the server was told
	CallStopped     CallErrorKind = "stopped"      // reset, restart, idle stop or shutdown ended the process
	CallServerError CallErrorKind = "server-error" // the server answered with a JSON-RPC error
	CallUnavailable CallErrorKind = "unavailable"  // a remote server is unreachable, was removed, or its connection failed during the call
	CallLimit       CallErrorKind = "limit"        // the process could not start: the host runs HostOptions.MaxProcesses processes
)

// CallError is the error of a failed Chat.Call. Its message is redacted
// and meant for the agent and the operator as is. A failed call is never
// retried: the server may have run it.
type CallError struct {
	Kind   CallErrorKind
	Server string // "" for CallUnknownTool
	Tool   string // the agent-visible name
	// Code is the JSON-RPC error code for CallServerError.
	Code    int64
	Message string
	// Remote marks a call to a remote server of the chat (Server is then
	// its name in servers.json).
	Remote bool
}

func (e *CallError) Error() string { return e.Message }

// ErrChatClosed is returned by calls on a chat after Chat.Close.
var ErrChatClosed = errors.New("the chat is closed")

// Server states in status output (SPEC §4).
const (
	StateNotStarted = "not started"
	StateRunning    = "running"
	StateExited     = "exited"
	StateFailed     = "failed" // shown as "failed: <reason>"
	StateDisabled   = "disabled"
)

// StopReason says why mcpc stopped a process, for calls it interrupts and
// for status.
type StopReason string

const (
	stopIdle       StopReason = "it was idle"
	stopReset      StopReason = "the chat was reset"
	stopRestart    StopReason = "it was restarted"
	stopHostClosed StopReason = "the host is shutting down"
	StopChatClosed StopReason = "the chat was closed"
	stopBroken     StopReason = "the connection to it failed"
	// A reload's: the server is not served any more (removed, disabled),
	// or it is served anew (changed).
	stopRemoved  StopReason = "it was removed from the plan"
	stopDisabled StopReason = "it was disabled"
	stopChanged  StopReason = "its configuration changed"
)

// Chat is one conversation: an id and a workspace directory, with its own
// process per stdio server, started by its first call to that server.
//
// Example:
//
//	chat, _ := host.Chat("42", "/srv/chats/42")
//	res, err := chat.Call(ctx, "gh_search_issues", map[string]any{"q": "is:open"})
//	var ce *runtime.CallError
//	if errors.As(err, &ce) && ce.Kind == runtime.CallExited {
//		// "MCP server github exited (1): …; its state was lost." — the
//		// next call starts a new process.
//	}
//	chat.Restart("github") // clear a wedged server
//	chat.Reset()           // "/new": stop every process of the chat
type Chat struct {
	h         *Host
	id        string
	workspace string
	scope     string
	// slots are the chat's servers, made on first use (slotFor, slotList
	// in reload.go): a reload adds and retires servers under running chats.
	slotMu      sync.Mutex
	slotBy      map[*hostServer]*slot
	slotsClosed bool        // the chat is closed: no slot is made any more
	remote      *chatRemote // nil without HostOptions.Remote
	// red, once the chat opened a remote server, redacts the chat's
	// results, errors and status: the host's known secrets and the header
	// values of the chat's remote servers. Until then the host's redactor
	// does (redactor).
	red atomic.Pointer[redact.Redactor]
	// up is the chat's client side once it is served (port.go): its
	// processes pass what they send on to it.
	up atomic.Pointer[upstreamBox]
}

func newChat(h *Host, id, workspace, scope string) *Chat {
	c := &Chat{h: h, id: id, workspace: workspace, scope: scope, slotBy: map[*hostServer]*slot{}}
	if h.opts.Remote != nil {
		c.remote = newChatRemote(c, scope)
	}
	return c
}

// redactor returns what the chat's results are redacted with.
// Until the chat opened a remote server, that is the host's.
func (c *Chat) redactor() *redact.Redactor {
	if r := c.red.Load(); r != nil {
		return r
	}
	return c.h.redactor()
}

// redact replaces every known secret of the chat in s with [REDACTED].
func (c *Chat) redact(s string) string { return c.redactor().Redact(s) }

// Scope returns the chat's session scope ("" for none).
func (c *Chat) Scope() string { return c.scope }

// ID returns the chat id.
func (c *Chat) ID() string { return c.id }

// Workspace returns the chat's absolute workspace directory.
func (c *Chat) Workspace() string { return c.workspace }

// Tools returns the agent-visible tools, in plan order of their servers and
// each server's tools/list order, then the tools of the chat's remote
// servers (Tool.Remote), in servers.json order. The first listing of a host
// waits for the discovery of every enabled server (shared with every chat
// asking at the same time); a server that failed contributes no tools and
// is discovered again in the background once DiscoveryRetry has passed.
// The chat's first listing also waits for the connects to its remote
// servers; later ones re-read servers.json and first retry the unreachable
// servers that are due.
func (c *Chat) Tools(ctx context.Context) ([]Tool, error) {
	t, err := c.h.tools(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.remote.refresh(ctx, t); err != nil {
		return nil, err
	}
	out := make([]Tool, len(t.list))
	for i, tool := range t.list {
		out[i] = *tool
	}
	// The newest table: a stdio tool wins a name over a remote tool.
	t = c.h.currentTable()
	rtools, _ := c.remote.snapshot()
	for _, tool := range rtools {
		if t.byName[tool.Name] == nil {
			out = append(out, *tool)
		}
	}
	return out, nil
}

// Call calls the tool the agent knows as name, with args (anything that
// encodes to a JSON object, such as json.RawMessage or map[string]any). The
// chat's process for the tool's server is started first if it does not
// run. The result has every known secret redacted. Errors are *CallError,
// ErrHostClosed or ErrChatClosed.
func (c *Chat) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	// A shutdown cancels the call (its server is told so) rather than
	// waiting for it: Host.Close must not wait out callTimeoutSeconds.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(c.h.ctx, func() { cancel(ErrHostClosed) })()
	tool, err := c.lookup(ctx, name)
	if err != nil {
		return nil, c.redactError(err)
	}
	var res *mcp.CallToolResult
	if tool.Remote {
		res, err = c.remote.call(ctx, tool, args)
	} else {
		res, err = c.slotFor(tool.srv).call(ctx, tool, args)
		if err == nil {
			res = redactResult(c.redactor(), res)
		}
		res = browserLost(tool.Server, res)
	}
	return res, c.redactError(err)
}

// StartEarly starts the chat's process of every enabled server that has
// none running or starting, in the background, and returns at once. The
// gateway calls it when a client initializes a session on the chat and
// GatewayOptions.StartEarly is set, so that the processes start with the
// session instead of after the discoveries, at the first call; a start of
// a server with no discovery yet is its first discovery (slot.startEarly).
// Each start is
// the one a call would make (the host's process limit, startupTimeoutSeconds,
// the environment and the workspace); a call that comes meanwhile waits for
// it and uses its process. A start that fails leaves the server "failed" in
// the chat's status, and the next call starts it again; a process that gets
// no call stops after idleTimeoutSeconds, counted from when it runs.
// Remote servers are not touched: they connect on the chat's first listing.
func (c *Chat) StartEarly() {
	if c.h.isClosed() {
		return
	}
	for _, hs := range c.h.servers() {
		if hs.cfg.Enabled {
			c.slotFor(hs).startEarly()
		}
	}
}

// redactError redacts the message of a *CallError with the chat's known
// secrets (the host's and its remote servers' headers). It is where a
// call's error leaves the runtime: the messages are built without
// redaction, except for parts cut short, which are redacted before the cut.
func (c *Chat) redactError(err error) error {
	ce, ok := err.(*CallError)
	if !ok {
		return err
	}
	if red := c.redact(ce.Message); red != ce.Message {
		cp := *ce
		cp.Message = red
		return &cp
	}
	return err
}

// lookup finds a tool, discovering (and listing the remote servers) first
// when the name is not known yet.
func (c *Chat) lookup(ctx context.Context, name string) (*Tool, error) {
	if c.h.isClosed() {
		return nil, ErrHostClosed
	}
	if t := c.h.currentTable().byName[name]; t != nil {
		return t, nil
	}
	if t := c.remote.find(name); t != nil {
		return t, nil
	}
	table, err := c.h.toolsFor(ctx, name)
	if err != nil {
		return nil, err
	}
	if t := table.byName[name]; t != nil {
		return t, nil
	}
	if c.remote != nil {
		if err := c.remote.refresh(ctx, table); err != nil {
			return nil, err
		}
		if t := c.remote.find(name); t != nil {
			return t, nil
		}
	}
	return nil, &CallError{Kind: CallUnknownTool, Tool: name,
		Message: fmt.Sprintf("unknown tool %q", name)}
}

// Restart stops the chat's process of server (its whole process group);
// the next call starts a fresh one. It returns once the process is gone.
func (c *Chat) Restart(server string) error {
	hs := c.h.server(server)
	if hs == nil {
		return fmt.Errorf("no MCP server %q in the plan (servers: %s)", server, strings.Join(c.h.ServerNames(), ", "))
	}
	if c.h.isClosed() {
		return ErrHostClosed
	}
	c.slotFor(hs).stop(stopRestart, false)
	return nil
}

// Reset stops every process of the chat, as /new and /resume do; the chat
// stays usable and its next calls start fresh processes. It returns once
// every process group is gone.
//
// Reset leaves the chat's remote connections alone: they hold no state of
// the conversation, and the next listing re-reads servers.json anyway.
func (c *Chat) Reset() {
	c.stopAll(stopReset, false)
}

// Close stops every process of the chat, disconnects its remote servers and
// removes it from the host; the id may then be used again for a new chat.
func (c *Chat) Close() {
	c.closeFor(StopChatClosed)
}

// closeFor closes the chat, its processes stopped for why. The chat leaves
// the host first: a chat created with its id meanwhile is a new one, not
// this one while it closes.
func (c *Chat) closeFor(why StopReason) {
	c.h.mu.Lock()
	if c.h.chats[c.id] == c {
		delete(c.h.chats, c.id)
	}
	c.h.mu.Unlock()
	c.stopAll(why, true)
}

// settleCalls waits, until deadline at the latest, until no process of the
// chat has a call in flight or owes its server a notifications/cancelled.
func (c *Chat) settleCalls(deadline time.Time) {
	for _, s := range c.allSlots(false) {
		s.mu.Lock()
		r := s.run
		s.mu.Unlock()
		r.settleCalls(deadline)
	}
}

// stopAll stops every process of the chat for why; final closes the chat
// for good (its slots and remote connections).
func (c *Chat) stopAll(why StopReason, final bool) {
	var wg sync.WaitGroup
	for _, s := range c.allSlots(final) {
		wg.Go(func() { s.stop(why, final) })
	}
	if final {
		wg.Go(c.remote.close)
	}
	wg.Wait()
}

// Status returns the state of each server for this chat, in plan order.
func (c *Chat) Status() ChatStatus {
	slots := c.slotList()
	st := ChatStatus{ID: c.id, Workspace: c.workspace, Servers: make([]ServerStatus, len(slots))}
	for i, s := range slots {
		st.Servers[i] = s.status()
		// Where a server's status leaves the runtime.
		st.Servers[i].State, st.Servers[i].LastError = c.redact(st.Servers[i].State), c.redact(st.Servers[i].LastError)
	}
	st.Remote = c.remote.status()
	return st
}

// Server returns the details of one server for this chat: command line
// (without environment values), environment names, server version, tools,
// last error and stderr tail, all redacted.
func (c *Chat) Server(name string) (ServerDetail, bool) {
	hs := c.h.server(name)
	if hs == nil {
		return ServerDetail{}, false
	}
	d := c.slotFor(hs).detail()
	// Where details leave the runtime: every string redacted with the
	// chat's secrets (a stdio server could quote a remote key too). What
	// cannot be redacted is withheld, never shown as it is.
	var red ServerDetail
	if _, err := redact.Value(d, &red, c.redact); err != nil {
		return withheldDetail(d.ServerStatus), true
	}
	return red, true
}

// withheldDetail stands for details that could not be redacted: the
// server's name and state line only, with the reason.
func withheldDetail(st ServerStatus) ServerDetail {
	const why = "the details were withheld: they may hold a secret value that mcpc could not redact"
	return ServerDetail{ServerStatus: ServerStatus{Name: st.Name, State: "withheld", LastError: why},
		EnvNames: []string{}, ToolNames: []string{}, StderrTail: []string{}}
}

// slot is one plan server in one chat.
type slot struct {
	c   *Chat
	srv *hostServer

	mu       sync.Mutex
	run      *serverConn // the running process, nil if none
	pending  *startOp    // a start in progress
	epoch    uint64      // bumped by every stop: starts of an older epoch give up
	closed   bool        // the chat or host is closed
	state    string      // StateNotStarted, StateRunning, StateExited, StateFailed
	lastErr  string      // redacted where status leaves the runtime
	stderr   string      // tail of the last process that ended, redacted
	inflight int
	waiting  int // calls waiting for a start in progress
	idle     Timer
	starts   int
}

// startOp is a start in progress, shared by the calls that wait for it.
type startOp struct {
	done    chan struct{}
	cancel  context.CancelFunc
	release func() // gives back the place the start took (Host.reserveProcess)
	run     *serverConn
	err     error
	// discovery, if not nil, is the server's first discovery that the
	// start stands for, and doStart ends it (hostServer.adopted).
	discovery chan struct{}
	began     bool // doStart runs
}

// call runs one tool call on this slot's process (callOn).
func (s *slot) call(ctx context.Context, tool *Tool, args any) (*mcp.CallToolResult, error) {
	r, err := s.acquire(ctx, tool)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	timeout, setting := s.c.h.prof.callTimeout(s.srv.cfg)
	return callOn(ctx, s, r, callSpec{server: s.srv.cfg.Name, tool: tool.Name, serverTool: tool.ServerTool,
		timeout: timeout, timeoutSetting: setting}, args)
}

// begin starts the slot's connection unless it runs or the slot is
// closed, and returns the start (the one in progress, if any); nil when
// there is nothing to wait for.
func (s *slot) begin() *startOp {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.run != nil {
		return nil
	}
	if s.pending != nil {
		return s.pending
	}
	op := s.startLocked()
	s.armIdleLocked()
	return op
}

// A slot is the callSite of its processes.
func (s *slot) clockOf() Clock             { return s.c.h.clock }
func (s *slot) logCall(server, msg string) { s.c.h.log("Warning", s.c.id, server, "%s", msg) }
func (s *slot) stopBroken(r *serverConn)   { s.stopRun(r, stopBroken) }

// cancelCause says why a call was cancelled when mcpc did it: "" when the
// caller did.
func cancelCause(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), ErrHostClosed) {
		return " because the MCP host is shutting down"
	}
	return ""
}

// endedError is the error of a call whose process ended under it.
func (s *slot) endedError(r *serverConn, tool string) error {
	return endedError(s.srv.cfg.Name, r, tool)
}

// acquire returns the running process, starting one if needed, and counts
// the caller as a call in flight.
func (s *slot) acquire(ctx context.Context, tool *Tool) (*serverConn, error) {
	h := s.c.h
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		if h.isClosed() {
			return nil, ErrHostClosed
		}
		if s.srv.retired.Load() {
			return nil, retiredError(s.srv, tool) // reload.go
		}
		return nil, ErrChatClosed
	}
	if r := s.run; r != nil {
		s.enterLocked()
		s.mu.Unlock()
		return r, nil
	}
	op := s.pending
	if op == nil {
		op = s.startLocked()
	}
	s.waiting++
	s.mu.Unlock()
	var err error
	select {
	case <-op.done:
	case <-ctx.Done():
		// The start goes on without this call: once it is done, the
		// process has no call in flight, and its idle stop is due.
		err = cancelledBefore(ctx, callSpec{server: s.srv.cfg.Name, tool: tool.Name}, "while the server was starting")
	case <-h.ctx.Done():
		err = ErrHostClosed
	}
	s.mu.Lock()
	s.waiting--
	if err != nil {
		s.armIdleLocked()
		s.mu.Unlock()
		return nil, err
	}
	if op.err != nil {
		s.mu.Unlock()
		var ce *CallError
		if errors.As(op.err, &ce) {
			cp := *ce
			cp.Tool = tool.Name
			return nil, &cp
		}
		return nil, op.err
	}
	if s.run != op.run {
		s.armIdleLocked()
		s.mu.Unlock()
		// It ended between its start and this call: do not start another
		// one behind the caller's back. (Not under s.mu: the watcher that
		// records the end takes it.)
		<-op.run.ended
		return nil, s.endedError(op.run, tool.Name)
	}
	s.enterLocked()
	s.mu.Unlock()
	return op.run, nil
}

// startEarly starts the slot's process unless one runs or starts, or the
// slot is closed (Chat.StartEarly). No call waits for the start: doStart
// arms the idle stop once the process runs, as it does for a start whose
// callers all gave up.
//
// When the server has no discovery yet, the start is its first discovery
// (hostServer.adoptFirst): the tools its process lists are the host's.
func (s *slot) startEarly() {
	discovery := s.srv.adoptFirst()
	s.mu.Lock()
	if s.closed || s.run != nil || s.pending != nil {
		s.mu.Unlock()
		if discovery != nil {
			s.srv.adopted(discovery, nil, s.c.id)
		}
		return
	}
	op := s.startLockedFor(discovery)
	s.mu.Unlock()
	if discovery != nil && !op.began {
		// The start could not begin (the host's process limit, a
		// closed host): no doStart will end the discovery.
		s.srv.adopted(discovery, nil, s.c.id)
	}
}

// enterLocked counts a call in flight; an idle stop is no longer due.
func (s *slot) enterLocked() {
	s.inflight++
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
}

// release ends a call; the last one arms the idle stop.
func (s *slot) release(r *serverConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	if s.run == r {
		s.armIdleLocked()
	}
}

// armIdleLocked (re)starts the wait for the idle stop of the running
// process when no call is in flight and none waits for a start: after the
// last call ended, and after a start that no call is left to use (its
// callers were cancelled while it started). s.mu is held.
func (s *slot) armIdleLocked() {
	idle := time.Duration(s.srv.cfg.IdleTimeoutSeconds) * time.Second
	r := s.run
	if r == nil || s.inflight > 0 || s.waiting > 0 || idle <= 0 || s.closed {
		return
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	s.idle = s.c.h.clock.AfterFunc(idle, func() { s.idleStop(r, idle) })
}

// idleStop stops r if it is still the slot's process and still idle. It
// runs synchronously in the timer's goroutine (with a fake clock: in the
// goroutine that advances it), so the process is gone when it returns.
func (s *slot) idleStop(r *serverConn, idle time.Duration) {
	s.c.h.do(func() {
		s.mu.Lock()
		if s.run != r || s.inflight > 0 || s.waiting > 0 {
			s.mu.Unlock()
			return
		}
		s.run, s.idle, s.state = nil, nil, StateNotStarted
		s.mu.Unlock()
		s.c.h.log("Information", s.c.id, s.srv.cfg.Name, "MCP server %s stopped after %s without calls", s.srv.cfg.Name, formatSeconds(idle))
		s.stopRun(r, stopIdle)
	})
}

// startLocked starts a process in the background and returns the start,
// which is s.pending until it is done; a start that cannot begin (the
// host's process limit, a closed host) is returned done. s.mu is held.
func (s *slot) startLocked() *startOp {
	return s.startLockedFor(nil)
}

// startLockedFor is startLocked; a non-nil discovery says the start is
// also the server's first discovery (slot.startEarly, whose
// hostServer.adoptFirst returned it), which doStart then ends.
func (s *slot) startLockedFor(discovery chan struct{}) *startOp {
	h := s.c.h
	ctx, cancel := context.WithCancel(h.ctx)
	op := &startOp{done: make(chan struct{}), cancel: cancel, discovery: discovery}
	release, ok := h.reserveProcess()
	if !ok {
		cancel()
		op.err = s.limitError()
		s.lastErr = op.err.(*CallError).Message
		close(op.done)
		return op
	}
	op.release = release
	s.pending = op
	s.starts++
	epoch := s.epoch
	op.began = true
	if !h.track(func() { s.doStart(ctx, op, epoch) }) {
		op.began = false
		cancel()
		release()
		s.pending = nil
		op.err = ErrHostClosed
		close(op.done)
	}
	return op
}

// doStart starts the chat's process: in the workspace, with the
// environment of SPEC §2.4, within startupTimeoutSeconds.
func (s *slot) doStart(ctx context.Context, op *startOp, epoch uint64) {
	defer close(op.done)
	defer op.cancel()
	h, c, cfg := s.c.h, s.c, s.srv.cfg
	if op.discovery != nil {
		// Every way out ends the discovery the start stands for; once the
		// process listed its tools, at once (endDiscovery).
		defer s.endDiscovery(op, nil)
	}
	name := cfg.Name
	fail := func(reason, stderr string) {
		op.release()
		msg := fmt.Sprintf("MCP server %s failed to start: %s", name, reason)
		s.mu.Lock()
		s.pending = nil
		stale := s.epoch != epoch
		if !stale {
			s.state, s.lastErr, s.stderr = StateFailed, msg, keptStderr(stderr)
		}
		s.mu.Unlock()
		if stale {
			op.err = &CallError{Kind: CallStopped, Server: name,
				Message: fmt.Sprintf("MCP server %s was stopped while it started: %s", name, s.lastWhy())}
			return
		}
		if h.prof.listsOnConnect() {
			s.srv.connectFailed(reason)
		}
		h.log("Warning", c.id, name, "%s", msg)
		op.err = &CallError{Kind: CallStartFailed, Server: name, Message: msg}
	}
	up := c.upstream()
	r, tools, reason, stderr := s.open(ctx, op, up)
	if r == nil {
		fail(reason, stderr)
		return
	}
	r.release = op.release
	cs := r.cs
	var logLevel mcp.LoggingLevel
	if up != nil {
		// Before any call: the level and subscriptions the client set.
		logLevel = up.Started(ctx, name, cs)
		if hooks.AfterStartRead != nil {
			hooks.AfterStartRead()
		}
	}
	s.mu.Lock()
	s.pending = nil
	if s.epoch != epoch || s.closed {
		why := s.lastWhyLocked()
		s.mu.Unlock()
		r.why = why
		r.stopping.Store(true)
		r.close()
		r.finish("")
		op.err = &CallError{Kind: CallStopped, Server: name,
			Message: fmt.Sprintf("MCP server %s was stopped while it started: %s", name, why)}
		return
	}
	s.run, s.state, s.lastErr = r, StateRunning, ""
	op.run = r
	// The calls that wait for this start are counted in s.waiting; if
	// none is left, nothing else would arm the idle stop.
	s.armIdleLocked()
	s.mu.Unlock()
	if up != nil {
		// A logging/setLevel that came after afterStart read the level and
		// before the process counted as running passed it by: give it now.
		up.StartedLevel(ctx, cs, logLevel)
	}
	if r.p != nil {
		h.log("Information", c.id, name, "MCP server %s started (pid %d) in %s", name, r.p.pid(), c.workspace)
	} else {
		h.log("Information", c.id, name, "MCP server %s connected (%s %s)", name, cfg.Transport, remote.URLWithoutQuery(cfg.URL))
	}
	if h.prof.listsOnConnect() {
		s.srv.connected(cs, tools)
	}
	if !h.track(func() { s.watch(r) }) {
		// The host closed since: no watcher will record the end, so stop
		// the process and record it here (stopRun would wait for the
		// watcher).
		s.mu.Lock()
		if r.why == "" {
			r.why = stopHostClosed
		}
		if s.run == r {
			s.run, s.state = nil, StateNotStarted
		}
		s.mu.Unlock()
		r.stopping.Store(true)
		r.close()
		r.finish("")
	}
}

// open starts the slot's process (a stdio entry, in the chat's workspace,
// as the profile launches it) or connects (an sse or websocket entry),
// with up's client options; when the profile lists tools on every connect
// (hostProfile.listsOnConnect), tools are the ones it listed. On failure r
// is nil and reason (and a process's stderr tail) say why.
func (s *slot) open(ctx context.Context, op *startOp, up Upstream) (r *serverConn, tools []*mcp.Tool, reason, stderr string) {
	h, c, cfg := s.c.h, s.c, s.srv.cfg
	name := cfg.Name
	if err := os.MkdirAll(c.workspace, 0o700); err != nil {
		return nil, nil, "cannot create the workspace: " + err.Error(), ""
	}
	if cfg.CannotStart != "" {
		return nil, nil, cfg.CannotStart, "" // the host cannot start it either (a craftbot plan says why)
	}
	link := &ProcLink{}
	if cfg.Transport == plan.TransportSSE || cfg.Transport == plan.TransportWebsocket {
		var client *mcp.ClientOptions
		if up != nil {
			client, _, _ = up.ProcessOptions(name, link)
		}
		r, tools, reason = connectRemote(ctx, h, cfg, client, link)
		return r, tools, reason, ""
	}
	spec, err := h.prof.launch(h, cfg, c.workspace)
	if err != nil {
		return nil, nil, err.Error(), ""
	}
	level := h.prof.stderrLevel(cfg)
	var onStderr func(string)
	if h.opts.Log != nil && !strings.EqualFold(level, "none") {
		// Lines come redacted with the host's secrets and the remote header
		// values of every chat (redactLog).
		onStderr = func(line string) { h.logStderr(level, c.id, name, line) }
	}
	pcfg := procConfig{version: h.prof.clientVersion(), onStderr: onStderr,
		redact: h.redactLog, secretSpan: h.secretSpan, discover: &s.srv.discover,
		onEscaped: func(e supervisor.ProcInfo, killed bool) { h.escaped(c.id, name, e.Pid, e.Comm, killed) }}
	if up != nil {
		pcfg.client, pcfg.clientMiddleware, pcfg.protocolVersion = up.ProcessOptions(name, link)
		pcfg.link = link
	}
	var list func(context.Context, *mcp.ClientSession) ([]*mcp.Tool, error)
	if h.prof.listsOnConnect() {
		list = h.prof.listTools(h, name)
	}
	p, tools, reason, stderr := startStdio(ctx, h.clock, spec, c.workspace, pcfg, list, h.Redact, c.redact)
	if p == nil {
		return nil, nil, reason, stderr
	}
	if op.discovery != nil {
		// Its waiters need not wait for what the start does next (the
		// client's logging level and subscriptions).
		s.endDiscovery(op, listFirst(ctx, h, p, startupTimeout(spec)))
	}
	r = &serverConn{cs: p.cs, p: p, ended: make(chan struct{}), link: link}
	if !cfg.Parallel {
		r.sem = make(chan struct{}, 1)
	}
	return r, tools, "", ""
}

// endDiscovery ends the discovery op stands for, once: with d, the tools
// its process listed, or, when d is nil, with a discovery of the server's
// own. Only doStart's goroutine calls it.
func (s *slot) endDiscovery(op *startOp, d *Discovery) {
	if op.discovery == nil {
		return
	}
	done := op.discovery
	op.discovery = nil
	s.srv.adopted(done, d, s.c.id)
}

// listFirst lists the tools of a chat's new process as the server's first
// discovery would (slot.startEarly), within the startup timeout; nil if
// that fails, and a discovery of the server's own then runs instead.
func listFirst(ctx context.Context, h *Host, p *proc, timeout time.Duration) *Discovery {
	lctx, cancel, _ := startTimeout(ctx, h.clock, timeout)
	defer cancel()
	tools, err := ListServerTools(lctx, p.cs)
	if err != nil {
		return nil
	}
	d := &Discovery{Tools: tools, Stderr: h.Redact(p.stderrTail())}
	d.ServerName, d.ServerVersion = p.serverInfo()
	if init := p.cs.InitializeResult(); init != nil {
		d.Capabilities, d.Instructions = init.Capabilities, init.Instructions
	}
	return d
}

// lastWhy is why the slot's processes were last stopped on purpose.
func (s *slot) lastWhy() StopReason {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastWhyLocked()
}

func (s *slot) lastWhyLocked() StopReason {
	if s.closed {
		return stopHostClosed
	}
	return stopReset
}

// watch waits for r's session to end. If mcpc did not stop it, the server
// died (or broke the protocol): the process group is killed, the death is
// recorded for status and for the calls that were running, and the next
// call starts a new process.
func (s *slot) watch(r *serverConn) {
	h := s.c.h
	msg, stderr, died := r.awaitEnd(s.srv.cfg.Name, h.Redact, s.c.redact)
	if !died {
		r.finish("")
		return
	}
	s.mu.Lock()
	if s.run == r {
		s.run, s.state, s.lastErr, s.stderr = nil, StateExited, msg, keptStderr(stderr)
		if s.idle != nil {
			s.idle.Stop()
			s.idle = nil
		}
	}
	s.mu.Unlock()
	h.log("Warning", s.c.id, s.srv.cfg.Name, "%s", msg)
	r.finish(msg)
}

// deathMessage is the error of SPEC §4 for a process that died: "MCP
// server <name> exited (<code>): <last stderr line>. It restarts on the
// next call; its state was lost." (browser state for playwright). stderr is
// redacted already; redact is applied to what the server wrote on stdout
// before that is cut short.
func deathMessage(name string, p *proc, stderr string, redact func(string) string) string {
	var b strings.Builder
	if err := p.sp.ReadError(); err != nil {
		fmt.Fprintf(&b, "MCP server %s broke the protocol: it wrote something that is not JSON-RPC on stdout (%s)", name, shownError(err, redact))
	} else {
		text, _ := p.exitStatus()
		fmt.Fprintf(&b, "MCP server %s exited (%s)", name, text)
	}
	if lines := lastLines(stderr, 1, reasonLineWidth); len(lines) > 0 {
		b.WriteString(": " + lines[0])
	}
	if name == "playwright" {
		b.WriteString(". It restarts on the next call; browser state was lost.")
	} else {
		b.WriteString(". It restarts on the next call; its state was lost.")
	}
	return b.String()
}

// stopRun stops r on purpose and waits until it is gone.
func (s *slot) stopRun(r *serverConn, why StopReason) {
	s.mu.Lock()
	if r.why == "" {
		r.why = why
	}
	s.mu.Unlock()
	r.stopping.Store(true)
	r.close()
	s.mu.Lock()
	if s.run == r {
		s.run, s.state = nil, StateNotStarted
	}
	if r.p != nil {
		s.stderr = keptStderr(s.c.h.Redact(r.p.stderrTail()))
	}
	s.mu.Unlock()
	<-r.ended
}

// stop stops the slot's process and any start in progress; final marks the
// slot closed for good. It returns once the process group is gone.
func (s *slot) stop(why StopReason, final bool) {
	s.mu.Lock()
	r, op := s.run, s.pending
	s.run = nil
	s.epoch++
	if final {
		s.closed = true
	}
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	s.state, s.lastErr = StateNotStarted, ""
	s.mu.Unlock()
	if op != nil {
		op.cancel() // kills a process that is starting at once
		<-op.done
	}
	if r != nil {
		s.stopRun(r, why)
	}
}

// status is the slot's line of /mcp.
func (s *slot) status() ServerStatus {
	cfg := s.srv.cfg
	st := ServerStatus{Name: cfg.Name, Tools: s.c.h.currentTable().perServer[cfg.Name]}
	if !cfg.Enabled {
		st.State = StateDisabled
		return st
	}
	s.srv.mu.Lock()
	discFailed, discReason := s.srv.state == discFailed, s.srv.reason
	s.srv.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	st.LastError = s.lastErr
	switch {
	case s.run != nil:
		st.State = StateRunning
		if s.run.p != nil {
			st.Pid = s.run.p.pid()
		}
	case s.pending != nil:
		st.State = "starting"
	case s.state == StateFailed:
		st.State = "failed: " + strings.TrimPrefix(s.lastErr, "MCP server "+cfg.Name+" failed to start: ")
	case s.state == StateExited:
		st.State = StateExited
	case discFailed:
		st.State = "failed: " + discReason
		if st.LastError == "" {
			st.LastError = discReason
		}
	default:
		st.State = StateNotStarted
	}
	return st
}

// detail is the slot's /mcp <server> view.
func (s *slot) detail() ServerDetail {
	h, cfg := s.c.h, s.srv.cfg
	d := ServerDetail{ServerStatus: s.status(), Discovery: s.srv.snapshot()}
	spec, _ := h.prof.launch(h, cfg, s.c.workspace)
	d.CommandLine = commandLine(spec)
	d.Cwd = spec.Dir
	if d.Cwd == "" {
		d.Cwd = s.c.workspace
	}
	d.EnvNames = []string{}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); ok {
			d.EnvNames = append(d.EnvNames, k)
		}
	}
	sort.Strings(d.EnvNames)
	d.ServerName, d.ServerVersion = d.Discovery.ServerName, d.Discovery.ServerVersion
	d.ToolNames = []string{}
	for _, t := range h.currentTable().list {
		if t.Server == cfg.Name {
			d.ToolNames = append(d.ToolNames, t.Name)
		}
	}
	s.mu.Lock()
	tail := s.stderr
	if s.run != nil && s.run.p != nil {
		tail = h.Redact(s.run.p.stderrTail())
		if n, v := s.run.p.serverInfo(); n != "" {
			d.ServerName, d.ServerVersion = n, v
		}
	}
	d.Starts = s.starts
	s.mu.Unlock()
	if d.LastError == "" {
		d.LastError = d.Discovery.LastError
	}
	d.StderrTail = lastLines(tail, detailStderrLines, reasonLineWidth)
	if d.StderrTail == nil {
		d.StderrTail = []string{}
	}
	return d
}

// detailStderrLines is how many stderr lines a server's details show.
const detailStderrLines = 20

// keptStderr is what a chat keeps of the stderr of a process that ended:
// the lines its details show, not the whole 16 KiB tail, since every idle
// chat keeps one per server.
func keptStderr(tail string) string {
	return strings.Join(lastLines(tail, detailStderrLines, reasonLineWidth), "\n")
}
