package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// One live connection to a server, and the one path of a tool call over
// it, for both profiles: a chat's process of a stdio server (slot), and
// the one shared connection of a craftbot plan's server (cbServer), a
// process or an sse or websocket session.

// serverConn is one live connection: a stdio process's MCP session (p
// set) or a remote session.
type serverConn struct {
	cs     *mcp.ClientSession
	p      *proc  // stdio only
	cancel func() // remote: ends the connection's context
	// sem makes calls one at a time (a stdio server that is not parallel);
	// toolSems, if not nil, one at a time per tool (a remote server, SPEC
	// §4). Neither: no gate.
	sem      chan struct{}
	toolMu   sync.Mutex
	toolSems map[string]chan struct{}
	// link routes what the server sends during calls to the calls' origins
	// (progress, log messages, requests); nil: nothing is routed.
	link *ProcLink
	// release, if set, gives back the connection's place among the host's
	// processes once it ended.
	release func()

	ended chan struct{} // closed once the connection is gone and death or why is set
	once  sync.Once
	death string     // set when it ended by itself: the error for its calls
	why   StopReason // set when mcpc stopped it
	// stopping is set before mcpc ends the connection on purpose: a call
	// that fails then was stopped, it did not see the server die.
	stopping atomic.Bool
}

// gate is what a call of tool waits for (see sem); nil: none.
func (r *serverConn) gate(tool string) chan struct{} {
	if r.toolSems == nil {
		return r.sem
	}
	r.toolMu.Lock()
	defer r.toolMu.Unlock()
	sem := r.toolSems[tool]
	if sem == nil {
		sem = make(chan struct{}, 1)
		r.toolSems[tool] = sem
	}
	return sem
}

// finish records how the connection ended, once: death is "" when mcpc
// stopped it.
func (r *serverConn) finish(death string) {
	r.once.Do(func() {
		r.death = death
		if r.release != nil {
			r.release()
		}
		close(r.ended)
	})
}

// close ends the connection: the process (its whole group) or the session.
func (r *serverConn) close() {
	if r.p != nil {
		r.p.stop()
		return
	}
	_ = r.cs.Close()
	if r.cancel != nil {
		r.cancel()
	}
}

// settleCalls waits, until deadline, for the calls in flight and the
// notifications/cancelled owed to the connection's process.
func (r *serverConn) settleCalls(deadline time.Time) {
	if r != nil && r.p != nil {
		r.p.calls.Settle(deadline)
	}
}

// callSite is the owner of a connection, as a call sees it.
type callSite interface {
	clockOf() Clock
	// logCall logs a call's failure the operator should see (a timeout).
	logCall(server, msg string)
	// endedError is the error of a call whose connection ended under it.
	endedError(r *serverConn, tool string) error
	// stopBroken ends a connection whose transport failed under a call
	// while its session lived on, and waits until it is gone.
	stopBroken(r *serverConn)
}

// callSpec is one call as callOn makes it.
type callSpec struct {
	server     string // the plan's name of the server
	tool       string // the tool as the agent knows it: errors name it
	serverTool string // the server's name of the tool: the call goes to it
	timeout    time.Duration
	// timeoutSetting names the setting of timeout in its error (" (callTimeoutSeconds)"), "" for none.
	timeoutSetting string
}

// callOn calls a tool over r: it waits for the tool's gate, bounds the call
// by spec.timeout on the site's clock (cancelling it tells the server,
// notifications/cancelled, which the process's ledger lets a shutdown wait
// for), and turns a failure into a *CallError. Absent or null arguments
// go on as {}: servers validate them as an object, and null fails there.
// The result is the server's, unredacted: the caller redacts it.
func callOn(ctx context.Context, site callSite, r *serverConn, spec callSpec, args any) (*mcp.CallToolResult, error) {
	if sem := r.gate(spec.serverTool); sem != nil {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
		case <-ctx.Done():
			return nil, cancelledBefore(ctx, spec, "while it waited for an earlier call to the server to end")
		case <-r.ended:
			return nil, site.endedError(r, spec.tool)
		}
	}
	timeout := spec.timeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	cctx, cancel := context.WithCancelCause(ctx)
	errTimeout := errors.New("call timeout")
	t := site.clockOf().AfterFunc(timeout, func() { cancel(errTimeout) })
	if r.p != nil {
		r.p.calls.Enter()
	}
	params, done := callParams(ctx, r.link, spec.serverTool, objectArgs(args))
	res, err := r.cs.CallTool(cctx, params)
	done()
	t.Stop()
	timedOut := errors.Is(context.Cause(cctx), errTimeout)
	if r.p != nil {
		if err != nil && cctx.Err() != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
			r.p.calls.Owe()
		}
		r.p.calls.Leave()
	}
	cancel(nil)
	if err == nil {
		return res, nil
	}
	name := spec.server
	switch {
	case timedOut:
		msg := fmt.Sprintf("MCP server %s: tool %s did not answer within %s%s; the call was cancelled and the server was told so (notifications/cancelled)",
			name, spec.tool, formatSeconds(timeout), spec.timeoutSetting)
		site.logCall(name, msg)
		return nil, &CallError{Kind: CallTimeout, Server: name, Tool: spec.tool, Message: msg}
	case ctx.Err() != nil:
		return nil, &CallError{Kind: CallCancelled, Server: name, Tool: spec.tool,
			Message: fmt.Sprintf("the call to tool %s of MCP server %s was cancelled%s; the server was told so (notifications/cancelled)", spec.tool, name, cancelCause(ctx))}
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && !errors.Is(err, mcp.ErrConnectionClosed) {
		return nil, &CallError{Kind: CallServerError, Server: name, Tool: spec.tool, Code: we.Code,
			Message: fmt.Sprintf("MCP server %s: tool %s: %s", name, spec.tool, we.Message)}
	}
	// The transport failed: the process died or the connection broke. The
	// watcher records which; wait for it, or end the connection if its
	// session somehow lives on.
	select {
	case <-r.ended:
	case <-time.After(brokenWait):
		site.stopBroken(r)
	}
	return nil, site.endedError(r, spec.tool)
}

// objectArgs is what a call's arguments go to the server as: nil, JSON
// null, an empty text and a nil map or pointer become {} (the SDK would
// send null for all but nil).
func objectArgs(args any) any {
	switch a := args.(type) {
	case nil:
		return map[string]any{}
	case json.RawMessage:
		if s := strings.TrimSpace(string(a)); s == "" || s == "null" {
			return map[string]any{}
		}
		return a
	}
	if v := reflect.ValueOf(args); (v.Kind() == reflect.Map || v.Kind() == reflect.Pointer) && v.IsNil() {
		return map[string]any{}
	}
	return args
}

// cancelledBefore is the error of a call cancelled before it was sent:
// the server never saw it, so it was not told anything either.
func cancelledBefore(ctx context.Context, spec callSpec, while string) error {
	return &CallError{Kind: CallCancelled, Server: spec.server, Tool: spec.tool,
		Message: fmt.Sprintf("the call to tool %s of MCP server %s was cancelled%s %s; it was never sent to the server", spec.tool, spec.server, cancelCause(ctx), while)}
}

// endedError is the error of a call of tool whose connection to server
// ended under it: the server's death, or why mcpc stopped it. A server a
// reload removed or disabled does not come back, so the call's error says
// it is unavailable rather than that it restarts.
func endedError(server string, r *serverConn, tool string) error {
	switch {
	case r.death != "":
		return &CallError{Kind: CallExited, Server: server, Tool: tool, Message: r.death}
	case r.why == stopRemoved || r.why == stopDisabled:
		return &CallError{Kind: CallUnavailable, Server: server, Tool: tool,
			Message: fmt.Sprintf("MCP server %s was stopped during the call to tool %s: %s", server, tool, r.why)}
	}
	return &CallError{Kind: CallStopped, Server: server, Tool: tool,
		Message: fmt.Sprintf("MCP server %s was stopped during the call to tool %s: %s. It restarts on the next call.", server, tool, r.why)}
}

// startupTimeout is how long spec's process has to start and answer.
func startupTimeout(spec LaunchSpec) time.Duration {
	if spec.StartupTimeout <= 0 {
		return DefaultStartupTimeout
	}
	return spec.StartupTimeout
}

// startStdio starts spec's process in workspace within its startup
// timeout on clock, and, when list is set, lists its tools within the same
// time. On failure p is nil, reason says why (with the last lines of its
// stderr) and stderr is its tail, redacted with redactTail; redact is
// applied to what the server wrote on stdout before that is cut short.
func startStdio(ctx context.Context, clock Clock, spec LaunchSpec, workspace string, pcfg procConfig,
	list func(context.Context, *mcp.ClientSession) ([]*mcp.Tool, error), redactTail, redact func(string) string) (p *proc, tools []*mcp.Tool, reason, stderr string) {
	timeout := startupTimeout(spec)
	sctx, cancel, timedOut := startTimeout(ctx, clock, timeout)
	defer cancel()
	p, err := startProc(sctx, spec, workspace, pcfg)
	if err == nil && list != nil {
		if tools, err = list(sctx, p.cs); err != nil {
			p.stop()
		}
	}
	switch {
	case err == nil:
		return p, tools, "", ""
	case p == nil:
		return nil, nil, err.Error(), ""
	}
	stderr = redactTail(p.stderrTail())
	_, reason, _ = p.startFailure(err, ctx, timedOut(), timeout, redact)
	if lines := lastLines(stderr, reasonLines, reasonLineWidth); len(lines) > 0 {
		reason += ": " + strings.Join(lines, " | ")
	}
	return nil, nil, reason, stderr
}

// awaitEnd waits until the connection's session ends, then ends the
// connection (a process's whole group killed and reaped). died reports
// whether it ended by itself, not stopped by mcpc: msg is then the error
// for its calls (SPEC §4) and stderr the process's tail, redacted with
// redactTail; redact is applied to what the server wrote on stdout before
// that is cut short.
func (r *serverConn) awaitEnd(server string, redactTail, redact func(string) string) (msg, stderr string, died bool) {
	_ = r.cs.Wait()
	stopped := r.stopping.Load()
	r.close()
	switch {
	case stopped:
		return "", "", false
	case r.p == nil:
		return fmt.Sprintf("MCP server %s closed the connection. It reconnects on the next call; its state was lost.", server), "", true
	}
	stderr = redactTail(r.p.stderrTail())
	return deathMessage(server, r.p, stderr, redact), stderr, true
}

// remoteConnectTimeout bounds the handshake and tools/list of an sse or
// websocket entry of a plan (SPEC §4: 15 s).
const remoteConnectTimeout = 15 * time.Second

// connectRemote connects to an sse or websocket entry of the plan through
// package transport's clients, with client's options, and lists its tools
// within remoteConnectTimeout. On failure the connection is nil and reason
// says why.
func connectRemote(ctx context.Context, h *Host, cfg *plan.Server, client *mcp.ClientOptions, link *ProcLink) (*serverConn, []*mcp.Tool, string) {
	where := cfg.Transport + " " + remote.URLWithoutQuery(cfg.URL)
	tr, err := transport.NewRemote(cfg.Transport, cfg.URL, nil, h.prof.dial())
	if err != nil {
		return nil, nil, where + ": " + shownError(err, h.Redact)
	}
	if link != nil {
		client, tr = link.orderedOptions(client), link.ordered(tr)
	}
	sctx, cancel, timedOut := startTimeout(ctx, h.clock, remoteConnectTimeout)
	defer cancel()
	// The sse client ties its event stream to the context of Connect: the
	// connection gets one of its own, which the connect's end (timeout,
	// Close) cancels only while the connect runs.
	connCtx, connCancel := context.WithCancel(context.WithoutCancel(ctx))
	stopBound := context.AfterFunc(sctx, connCancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpc", Version: h.prof.clientVersion()}, client).Connect(connCtx, tr, nil)
	var tools []*mcp.Tool
	if err == nil {
		tools, err = h.prof.listTools(h, cfg.Name)(sctx, cs)
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
		return nil, nil, where + ": " + shownError(err, h.Redact)
	}
	return &serverConn{cs: cs, ended: make(chan struct{}), cancel: connCancel, toolSems: map[string]chan struct{}{}, link: link}, tools, ""
}
