package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/supervisor"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// cbServer is one server of a craftbot plan: its one connection, shared by
// every client of the gateway.
type cbServer struct {
	c *Craftbot

	mu      sync.Mutex
	cfg     *plan.Server
	conn    *serverConn // the live connection, nil if none
	pending *cbConnect  // a connect in progress
	// last is the latest connect started, kept once it ended: its done
	// closes only after its actions are registered, while pending is
	// cleared before (lastConnect).
	last     *cbConnect
	epoch    uint64     // bumped by every stop: connects of an older epoch give up
	gone     stopReason // set when the server is no longer served (removed, disabled, closed)
	state    string
	lastErr  string
	stderr   string // tail of the last process that ended, redacted
	tools    []*mcp.Tool
	listed   bool // tools holds a listing
	tried    bool // a connect was started
	failedAt time.Time
	starts   int
}

// cbConnect is a connect in progress, shared by those who wait for it.
type cbConnect struct {
	done   chan struct{}
	cancel context.CancelFunc
	conn   *serverConn
	err    error
}

func (s *cbServer) name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Name
}

// offered returns the tools to register: the last listing of an enabled,
// served server.
func (s *cbServer) offered() ([]*mcp.Tool, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone != "" || !s.cfg.Enabled || !s.listed {
		return nil, "", false
	}
	set := s.cfg.ActionSet
	if set == "" {
		set = "mcp_" + s.cfg.Name
	}
	return s.tools, set, true
}

// lastConnect is the latest connect started (nil for none): waiting on its
// done waits until its actions are registered, or it failed.
func (s *cbServer) lastConnect() *cbConnect {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// connectInBackground starts a connect unless one runs or the server is
// connected.
func (s *cbServer) connectInBackground() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone == "" && s.cfg.Enabled && s.conn == nil && s.pending == nil {
		s.startLocked()
	}
}

// firstUse starts the first connect of a server never tried, and returns
// it (or the one in progress); nil when there is nothing to wait for.
func (s *cbServer) firstUse() *cbConnect {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone != "" || !s.cfg.Enabled {
		return nil
	}
	if s.pending != nil {
		return s.pending
	}
	if s.tried {
		return nil
	}
	return s.startLocked()
}

// retryIfDue restarts, in the background, a connect that failed at least
// DefaultDiscoveryRetry before now.
func (s *cbServer) retryIfDue(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone == "" && s.cfg.Enabled && s.conn == nil && s.pending == nil && s.state == StateFailed &&
		!now.Before(s.failedAt.Add(DefaultDiscoveryRetry)) {
		s.startLocked()
	}
}

// ensure returns the live connection, connecting if needed.
func (s *cbServer) ensure(ctx context.Context, action string) (*serverConn, error) {
	s.mu.Lock()
	if s.gone != "" {
		err := s.goneErrorLocked(action)
		s.mu.Unlock()
		return nil, err
	}
	if r := s.conn; r != nil {
		s.mu.Unlock()
		return r, nil
	}
	op := s.pending
	if op == nil {
		op = s.startLocked()
	}
	s.mu.Unlock()
	select {
	case <-op.done:
	case <-ctx.Done():
		return nil, cancelledBefore(ctx, callSpec{server: s.name(), tool: action}, "while the server was connecting")
	}
	if op.err != nil {
		var ce *CallError
		if errors.As(op.err, &ce) {
			cp := *ce
			cp.Tool = action
			return nil, &cp
		}
		return nil, op.err
	}
	return op.conn, nil
}

func (s *cbServer) goneErrorLocked(action string) error {
	if s.gone == stopHostClosed {
		return ErrHostClosed
	}
	return noLongerServed(s.cfg.Name, action)
}

// startLocked starts a connect in the background; s.mu is held.
func (s *cbServer) startLocked() *cbConnect {
	c := s.c
	ctx, cancel := context.WithCancel(c.ctx)
	op := &cbConnect{done: make(chan struct{}), cancel: cancel}
	s.pending, s.last, s.tried = op, op, true
	s.starts++
	epoch, cfg := s.epoch, s.cfg
	if !c.track(func() { s.doConnect(ctx, op, epoch, cfg) }) {
		cancel()
		s.pending = nil
		op.err = ErrHostClosed
		close(op.done)
	}
	return op
}

// doConnect starts the process or opens the connection, and lists the
// tools.
func (s *cbServer) doConnect(ctx context.Context, op *cbConnect, epoch uint64, cfg *plan.Server) {
	defer close(op.done)
	defer op.cancel()
	c := s.c
	var conn *serverConn
	var tools []*mcp.Tool
	var reason, stderr string
	if cfg.Transport == plan.TransportStdio {
		conn, tools, reason, stderr = s.startStdio(ctx, cfg)
	} else {
		conn, tools, reason = s.connectRemote(ctx, cfg)
	}
	if conn == nil {
		msg := fmt.Sprintf("MCP server %s failed to start: %s", cfg.Name, reason)
		s.mu.Lock()
		s.pending = nil
		stale := s.epoch != epoch || s.gone != ""
		if !stale {
			s.state, s.lastErr, s.stderr, s.failedAt = StateFailed, msg, keptStderr(stderr), c.clock.Now()
		}
		s.mu.Unlock()
		if stale {
			op.err = &CallError{Kind: CallStopped, Server: cfg.Name, Message: fmt.Sprintf("MCP server %s was stopped while it started", cfg.Name)}
			return
		}
		c.log("Warning", cfg.Name, "%s", msg)
		op.err = &CallError{Kind: CallStartFailed, Server: cfg.Name, Message: msg}
		return
	}
	s.mu.Lock()
	s.pending = nil
	if s.epoch != epoch || s.gone != "" {
		s.mu.Unlock()
		conn.why = stopRestart
		conn.close()
		conn.finish("")
		op.err = &CallError{Kind: CallStopped, Server: cfg.Name, Message: fmt.Sprintf("MCP server %s was stopped while it started", cfg.Name)}
		return
	}
	s.conn, s.state, s.lastErr, s.tools, s.listed = conn, StateRunning, "", tools, true
	op.conn = conn
	s.mu.Unlock()
	if conn.p != nil {
		c.log("Information", cfg.Name, "MCP server %s started (pid %d): %d tools", cfg.Name, conn.p.pid(), len(tools))
	} else {
		c.log("Information", cfg.Name, "MCP server %s connected (%s %s): %d tools", cfg.Name, cfg.Transport, remote.URLWithoutQuery(cfg.URL), len(tools))
	}
	c.register()
	if !c.track(func() { s.watch(conn) }) {
		// Closed since: nothing else records the end.
		s.mu.Lock()
		if conn.why == "" {
			conn.why = stopHostClosed
		}
		if s.conn == conn {
			s.conn, s.state = nil, StateNotStarted
		}
		s.mu.Unlock()
		conn.close()
		conn.finish("")
	}
}

// startStdio starts a stdio server's process in the workspace, with the
// environment CraftBot gives it, and lists its tools, within its startup
// timeout. On failure conn is nil and reason (and the stderr tail) say why.
func (s *cbServer) startStdio(ctx context.Context, cfg *plan.Server) (conn *serverConn, tools []*mcp.Tool, reason, stderr string) {
	c := s.c
	c.mu.Lock()
	config := c.config
	c.mu.Unlock()
	if config == nil {
		config = func(string, string) (string, bool) { return "", false }
	}
	spec, err := CraftbotLaunch(cfg, c.env, config)
	if err != nil {
		return nil, nil, err.Error(), ""
	}
	ws, err := c.workspace()
	if err != nil {
		return nil, nil, "cannot create the workspace: " + err.Error(), ""
	}
	name := cfg.Name
	var onStderr func(string)
	if c.opts.Log != nil {
		onStderr = func(line string) {
			c.opts.Log(LogEntry{Level: "Information", Server: name, Message: line, Stderr: true})
		}
	}
	link := &procLink{}
	pcfg := procConfig{version: "craftbot", onStderr: onStderr, redact: c.Redact, secretSpan: c.secretSpan,
		onEscaped: func(e supervisor.ProcInfo, killed bool) { c.escaped(name, e.Pid, e.Comm, killed) },
		client:    c.connOptions(link)}
	p, tools, reason, stderr := startStdio(ctx, c.clock, spec, ws, pcfg, listAll, c.Redact, c.Redact)
	if p == nil {
		return nil, nil, reason, stderr
	}
	conn = &serverConn{cs: p.cs, p: p, ended: make(chan struct{}), link: link}
	if !cfg.Parallel {
		conn.sem = make(chan struct{}, 1)
	}
	return conn, tools, "", ""
}

// connectRemote connects to an sse or websocket server through
// internal/transport's clients and lists its tools, within 15 s.
func (s *cbServer) connectRemote(ctx context.Context, cfg *plan.Server) (*serverConn, []*mcp.Tool, string) {
	c := s.c
	where := cfg.Transport + " " + remote.URLWithoutQuery(cfg.URL)
	tr, err := transport.NewRemote(cfg.Transport, cfg.URL, nil, c.opts.Remote)
	if err != nil {
		return nil, nil, where + ": " + shownError(err, c.Redact)
	}
	sctx, cancel, timedOut := startTimeout(ctx, c.clock, remoteConnectTimeout)
	defer cancel()
	// The sse client ties its event stream to the context of Connect: the
	// connection gets one of its own, which the connect's end (timeout,
	// Close) cancels only while the connect runs.
	connCtx, connCancel := context.WithCancel(context.WithoutCancel(ctx))
	stopBound := context.AfterFunc(sctx, connCancel)
	link := &procLink{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpc", Version: "craftbot"}, c.connOptions(link)).Connect(connCtx, tr, nil)
	var tools []*mcp.Tool
	if err == nil {
		tools, err = listAll(sctx, cs)
		if err == nil && !stopBound() {
			err = context.Cause(sctx)
		}
		if err != nil {
			_ = cs.Close()
		}
	}
	if err != nil {
		connCancel()
		switch {
		case timedOut():
			return nil, nil, where + ": no answer within " + formatSeconds(remoteConnectTimeout)
		case ctx.Err() != nil:
			return nil, nil, where + ": cancelled"
		}
		return nil, nil, where + ": " + shownError(err, c.Redact)
	}
	conn := &serverConn{cs: cs, ended: make(chan struct{}), cancel: connCancel, toolSems: map[string]chan struct{}{}, link: link}
	return conn, tools, ""
}

// listAll lists every page of a server's tools.
func listAll(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// watch waits for conn to end. If mcpc did not end it, the server died or
// dropped the connection: its process group is killed, the death is
// recorded for status and for the calls that were running, and the next
// call connects anew.
func (s *cbServer) watch(conn *serverConn) {
	c := s.c
	name := s.name()
	msg, stderr, died := conn.awaitEnd(name, c.Redact, c.Redact)
	if !died {
		conn.finish("")
		return
	}
	s.mu.Lock()
	if s.conn == conn {
		s.conn, s.state, s.lastErr, s.stderr = nil, StateExited, msg, keptStderr(stderr)
	}
	s.mu.Unlock()
	c.log("Warning", name, "%s", msg)
	conn.finish(msg)
}

// stopConn ends conn on purpose and waits until it is gone.
func (s *cbServer) stopConn(conn *serverConn, why stopReason) {
	s.mu.Lock()
	if conn.why == "" {
		conn.why = why
	}
	s.mu.Unlock()
	conn.stopping.Store(true)
	conn.close()
	s.mu.Lock()
	if s.conn == conn {
		s.conn, s.state = nil, StateNotStarted
	}
	if conn.p != nil {
		s.stderr = keptStderr(s.c.Redact(conn.p.stderrTail()))
	}
	s.mu.Unlock()
	<-conn.ended
}

// stop ends the connection and any connect in progress. gone, if not
// "", marks the server no longer served (removed, disabled, closed): calls
// fail at once. It returns once the process group is gone.
func (s *cbServer) stop(why stopReason, gone bool) {
	s.mu.Lock()
	r, op := s.conn, s.pending
	s.conn = nil
	s.epoch++
	if gone {
		s.gone = why
		s.listed, s.tools = false, nil
	}
	if why == stopDisabled {
		s.state = StateDisabled
	} else {
		s.state = StateNotStarted
	}
	s.lastErr = ""
	s.mu.Unlock()
	if op != nil {
		op.cancel() // kills a process that is starting at once
		<-op.done
	}
	if r != nil {
		s.stopConn(r, why)
	}
}

// settleCalls waits, until deadline, for the notifications/cancelled the
// runtime owes the server's process.
func (s *cbServer) settleCalls(deadline time.Time) {
	s.mu.Lock()
	r := s.conn
	s.mu.Unlock()
	r.settleCalls(deadline)
}

// call runs one call of tool (the server's name; action is the agent's)
// on the server's connection (callOn).
func (s *cbServer) call(ctx context.Context, action, tool string, args any) (*mcp.CallToolResult, error) {
	r, err := s.ensure(ctx, action)
	if err != nil {
		return nil, err
	}
	return callOn(ctx, s, r, callSpec{server: s.name(), tool: action, serverTool: tool, timeout: s.c.opts.CallTimeout}, args)
}

// A cbServer is the callSite of its connections.
func (s *cbServer) clockOf() Clock             { return s.c.clock }
func (s *cbServer) logCall(server, msg string) { s.c.log("Warning", server, "%s", msg) }
func (s *cbServer) stopBroken(r *serverConn)   { s.stopConn(r, stopBroken) }

// endedError is the error of a call whose connection ended under it.
func (s *cbServer) endedError(r *serverConn, action string) error {
	return endedError(s.name(), r, action)
}

// escaped logs a process of a server found outside its process group.
func (c *Craftbot) escaped(server string, pid int, command string, killed bool) {
	c.escapes.Add(1)
	if killed {
		c.log("Warning", server, "MCP server %s: process %d (%s) had left the server's process group (setsid); it was killed on its own", server, pid, command)
		return
	}
	c.log("Error", server, "MCP server %s: process %d (%s) had left the server's process group (setsid) and could not be killed; it still runs", server, pid, command)
}

// connOptions are the options of the MCP client of a server's connection:
// its progress notifications go back to the calls they belong to, as a
// chat's do (forwardProgress).
func (c *Craftbot) connOptions(link *procLink) *mcp.ClientOptions {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		forwardProgress(ctx, c.Redact, link, req.Params)
	}}
}
