package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/supervisor"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// One MCP server process over stdio, shared by discovery (start, list,
// stop) and by chats (start, call many times, stop): the MCP client
// session over a process that package supervisor starts, watches and kills,
// so both paths kill process groups and reap in the same way.

// stopGrace is how long a server may take to exit after its stdin is
// closed before its process group is killed (supervisor.StopGrace).
const stopGrace = supervisor.StopGrace

// procConfig tunes startProc.
type procConfig struct {
	// version is the client version sent in initialize ("discovery", "chat").
	version string
	// onStderr, if set, gets every stderr line, redacted with redact
	// (supervisor.Options.Stderr); secretSpan returns the length of the
	// longest text redact replaces. Both are needed with onStderr.
	onStderr   func(line string)
	redact     func(string) string
	secretSpan func() int
	// onEscaped, if set, is told of each process of the server's that had
	// left its process group and that stop killed on its own, and of each
	// that would not die.
	onEscaped func(p supervisor.ProcInfo, killed bool)
	// discover, if set, remembers whether the server answers
	// server/discover, for every process of the same plan server.
	discover *discoverMemo
	// client and clientMiddleware, if set, configure the MCP client of the
	// process (the gateway's pass-through, passthrough.go).
	client           *mcp.ClientOptions
	clientMiddleware mcp.Middleware
	// link, if set, routes what the process sends during calls; its
	// connection orders responses behind notifications (notifyorder.go).
	link *ProcLink
	// protocolVersion, if set, is the version offered in initialize (the
	// one the gateway's client negotiated).
	protocolVersion string
}

// proc is one started server process and its MCP client session.
type proc struct {
	spec LaunchSpec
	dir  string // the process's working directory: spec.Dir, else the workspace
	sp   *supervisor.Process
	cs   *mcp.ClientSession // nil until the handshake succeeded
	// client is cs's client: it sends the notifications a client sends of
	// itself (notifications/roots/list_changed, passthrough.go).
	client *mcp.Client
	// calls counts the calls in flight and the notifications/cancelled
	// still owed to the server, for a shutdown (supervisor.Ledger).
	calls *supervisor.Ledger
}

// startProc starts spec's process and runs the MCP initialize handshake.
// ctx bounds the start: when it ends before the handshake is done, the
// process group is killed at once. On error the process is already stopped
// and reaped; p is still returned (for its stderr and exit status) unless
// it could not even be prepared.
func startProc(ctx context.Context, spec LaunchSpec, workspace string, cfg procConfig) (p *proc, err error) {
	dir := spec.Dir
	if dir == "" {
		dir = workspace
	}
	sp, err := supervisor.New(supervisor.Command{Path: spec.Command, Args: spec.Args, Dir: dir, Env: spec.Env},
		supervisor.Options{Stderr: cfg.onStderr, Redact: cfg.redact, SecretSpan: cfg.secretSpan, OnEscaped: cfg.onEscaped, TailBytes: stderrTailBytes})
	if err != nil {
		return nil, err
	}
	p = &proc{spec: spec, dir: dir, sp: sp, calls: sp.Calls}
	// Until the handshake is done, the end of ctx kills the group at once:
	// that unblocks everything that waits for the process.
	stopKill := context.AfterFunc(ctx, sp.KillGroup)
	opts, tr := cfg.client, sp.Transport()
	if cfg.link != nil {
		opts, tr = cfg.link.orderedOptions(opts), cfg.link.ordered(tr)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpc", Version: cfg.version}, opts)
	if cfg.clientMiddleware != nil {
		client.AddReceivingMiddleware(cfg.clientMiddleware)
	}
	// The version the gateway's client negotiated wins; else skip
	// server/discover for a server known not to answer it.
	sopts := cfg.discover.options()
	if cfg.protocolVersion != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: cfg.protocolVersion}
	}
	cs, err := client.Connect(ctx, tr, sopts)
	stopKill()
	if err != nil {
		// Connect has closed the connection, which waited for the process
		// (mcp.CommandTransport's Close calls Wait).
		p.stop()
		return p, err
	}
	p.cs, p.client = cs, client
	sp.Attach(cs)
	cfg.discover.learn(cs)
	return p, nil
}

// serverInfo returns the name and version from the initialize result.
func (p *proc) serverInfo() (name, version string) {
	if p.cs == nil {
		return "", ""
	}
	if info := p.cs.InitializeResult(); info != nil && info.ServerInfo != nil {
		return info.ServerInfo.Name, info.ServerInfo.Version
	}
	return "", ""
}

// pid returns the process id (also its process group id), 0 if it never
// started.
func (p *proc) pid() int { return p.sp.Pid() }

// stderrTail is the last of the process's stderr, unredacted.
func (p *proc) stderrTail() string { return p.sp.StderrTail() }

// stop ends the process (supervisor.Process.Stop): stdin closed, stopGrace
// to exit, then its whole process group killed; it returns once the
// process is reaped.
func (p *proc) stop() { p.sp.Stop() }

// exitStatus describes how the process ended; only valid after stop.
func (p *proc) exitStatus() (text string, code int) { return p.sp.ExitStatus() }

// startFailure classifies why starting (or listing tools, for discovery)
// failed, after stop. parent is the caller's context, start the one that
// bounded the start; timedOut reports whether the startup timeout ended it.
// redact is applied to what the server wrote before that is cut short.
func (p *proc) startFailure(err error, parent context.Context, timedOut bool, timeout time.Duration, redact func(string) string) (kind FailureKind, reason string, code int) {
	code = -1
	switch {
	case !p.sp.Started():
		// A working directory that is missing fails the start with the
		// same error as a missing binary (the child's chdir fails before
		// exec): name the directory.
		if fi, serr := os.Stat(p.dir); serr != nil && errors.Is(serr, fs.ErrNotExist) {
			return FailStart, fmt.Sprintf("cannot start %q: its working directory (cwd) %q does not exist", p.spec.Command, p.dir), code
		} else if serr == nil && !fi.IsDir() {
			return FailStart, fmt.Sprintf("cannot start %q: its working directory (cwd) %q is not a directory", p.spec.Command, p.dir), code
		}
		return FailStart, fmt.Sprintf("cannot start %q: %v", p.spec.Command, err), code
	case parent.Err() != nil:
		return FailCancelled, "cancelled", code
	case timedOut:
		return FailTimeout, "no answer within " + formatSeconds(timeout), code
	case p.sp.ReadError() != nil:
		return FailProtocol, "protocol error: the server wrote something that is not JSON-RPC on stdout: " + shownError(p.sp.ReadError(), redact), code
	case p.sp.Exited() && supervisor.ClosedErr(err) && !p.sp.KilledBeforeStop():
		text, c := p.exitStatus()
		return FailExited, "exited (" + text + ")", c
	default:
		return FailProtocol, "protocol error: " + err.Error(), code
	}
}

// startTimeout returns a context that ends when parent does or when d has
// passed on clock, and a function that reports whether d passed.
func startTimeout(parent context.Context, clock Clock, d time.Duration) (context.Context, context.CancelFunc, func() bool) {
	ctx, cancel := context.WithCancel(parent)
	var fired atomic.Bool
	t := clock.AfterFunc(d, func() {
		fired.Store(true)
		cancel()
	})
	return ctx, func() { t.Stop(); cancel() }, fired.Load
}

// shownError is the text of err as mcpc shows it: redacted first, then cut
// to transport.MaxErrorText bytes. Cutting first could leave the start of a
// secret that no longer matches, and so is never redacted.
func shownError(err error, redact func(string) string) string {
	return transport.CutText(redact(err.Error()), transport.MaxErrorText)
}

// lastLines returns the last n non-empty lines of text, each cut to width
// characters, oldest first (supervisor.LastLines).
func lastLines(text string, n, width int) []string { return supervisor.LastLines(text, n, width) }
