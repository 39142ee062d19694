package runtime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// One MCP server process over stdio, shared by discovery (start, list,
// stop) and by chats (start, call many times, stop). Everything that
// starts, watches or kills a process lives here, so both paths kill process
// groups and reap in the same way.

const (
	// stopGrace is how long a server may take to exit after its stdin is
	// closed before its process group is killed. Real time: it waits for the
	// operating system, not for a rule (see Clock).
	stopGrace = 500 * time.Millisecond
	// groupGoneLimit bounds the wait for a killed group to disappear.
	groupGoneLimit = 2 * time.Second
	// stderrDrainLimit bounds the wait for stderr to end once the group is
	// dead: a descendant that left the group could hold it open forever.
	stderrDrainLimit = 200 * time.Millisecond
	// stderrLineMax cuts an endless stderr line for the line callback
	// (about there: see lineWriter).
	stderrLineMax = 4 << 10
)

// procConfig tunes startProc.
type procConfig struct {
	// version is the client version sent in initialize ("discovery", "chat").
	version string
	// onStderr, if set, gets every stderr line, without the newline,
	// redacted with redact, from the stderr reading goroutine. A line
	// longer than stderrLineMax comes in pieces, cut where no secret is
	// cut in two (see lineWriter).
	onStderr func(line string)
	// redact redacts the lines for onStderr; secretSpan returns the length
	// of the longest text it replaces. Both are needed with onStderr.
	redact     func(string) string
	secretSpan func() int
	// onEscaped, if set, is told of each process of the server's that had
	// left its process group and that stop killed on its own (see
	// escapedDescendants), and of each that would not die.
	onEscaped func(p procInfo, killed bool)
	// discover, if set, remembers whether the server answers
	// server/discover, for every process of the same plan server.
	discover *discoverMemo
	// client and clientMiddleware, if set, configure the MCP client of the
	// process (the gateway's pass-through, passthrough.go).
	client           *mcp.ClientOptions
	clientMiddleware mcp.Middleware
	// protocolVersion, if set, is the version offered in initialize (the
	// one the gateway's client negotiated).
	protocolVersion string
}

// proc is one started server process and its MCP client session.
type proc struct {
	spec LaunchSpec
	cmd  *exec.Cmd
	tr   *groupTransport
	cs   *mcp.ClientSession // nil until the handshake succeeded
	// client is cs's client: it sends the notifications a client sends of
	// itself (notifications/roots/list_changed, passthrough.go).
	client *mcp.Client
	tail   *stderrTail
	// calls counts the calls in flight and the notifications/cancelled
	// still owed to the server, for a shutdown (see callLedger).
	calls *callLedger

	onEscaped func(procInfo, bool)

	pr      *os.File      // stderr, read end
	drained chan struct{} // closed when stderr reading ended
	closeW  func()        // closes our copy of stderr's write end

	stopOnce sync.Once
	stopped  chan struct{} // closed when stop finished
	// stopping is set before stop kills anything: a call that fails then
	// was stopped on purpose, it did not see the server die.
	stopping atomic.Bool
	// killedBeforeStop records whether the group had been killed (by a
	// timeout or a cancellation) before stop killed what was left, which
	// it always does: only an earlier kill explains an exit.
	killedBeforeStop bool
}

// startProc starts spec's process and runs the MCP initialize handshake.
// ctx bounds the start: when it ends before the handshake is done, the
// process group is killed at once. On error the process is already stopped
// and reaped; p is still returned (for its stderr and exit status) unless
// it could not even be prepared.
func startProc(ctx context.Context, spec LaunchSpec, workspace string, cfg procConfig) (p *proc, err error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Dir = spec.Dir
	if cmd.Dir == "" {
		cmd.Dir = workspace
	}
	cmd.Env = spec.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // never mcpc's own environment: it holds host secrets
	}
	setProcessGroup(cmd)

	// Stderr goes to our own pipe: an *os.File is handed to the child as is,
	// so exec's Wait does not wait for descendants that still hold it.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot create a pipe: %w", err)
	}
	cmd.Stderr = pw
	p = &proc{spec: spec, cmd: cmd, tail: newStderrTail(stderrTailBytes), pr: pr,
		drained: make(chan struct{}), stopped: make(chan struct{}), calls: newCallLedger(), onEscaped: cfg.onEscaped}
	var closeOnce sync.Once
	p.closeW = func() { closeOnce.Do(func() { pw.Close() }) }
	var sink io.Writer = p.tail
	var lines *lineWriter
	if cfg.onStderr != nil {
		redact := cfg.redact
		if redact == nil {
			redact = func(s string) string { return s }
		}
		lines = &lineWriter{emit: cfg.onStderr, redact: redact, span: cfg.secretSpan}
		sink = io.MultiWriter(p.tail, lines)
	}
	go func() {
		defer close(p.drained)
		_, _ = io.Copy(sink, pr)
		if lines != nil {
			lines.Close()
		}
	}()

	p.tr = &groupTransport{
		inner:        &mcp.CommandTransport{Command: cmd, TerminateDuration: stopGrace},
		started:      p.closeW, // the child has its copy now
		onCancelSent: p.calls.paid,
	}
	// Until the handshake is done, the end of ctx kills the group at once:
	// that unblocks everything that waits for the process.
	stopKill := context.AfterFunc(ctx, p.tr.KillGroup)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpc", Version: cfg.version}, cfg.client)
	if cfg.clientMiddleware != nil {
		client.AddReceivingMiddleware(cfg.clientMiddleware)
	}
	// The version the gateway's client negotiated wins; else skip
	// server/discover for a server known not to answer it.
	sopts := cfg.discover.options()
	if cfg.protocolVersion != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: cfg.protocolVersion}
	}
	cs, err := client.Connect(ctx, p.tr, sopts)
	stopKill()
	if err != nil {
		// Connect has closed the connection, which waited for the process
		// (mcp.CommandTransport's Close calls Wait).
		p.stop()
		return p, err
	}
	p.cs, p.client = cs, client
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
func (p *proc) pid() int { return p.tr.Pid() }

// stop ends the process: stdin is closed, the server gets stopGrace to
// exit, then its whole process group is killed. It returns once the process
// is reaped, the group is gone and stderr is drained. It may be called many
// times and from many goroutines; all return when the first call is done.
func (p *proc) stop() {
	p.stopOnce.Do(func() {
		defer close(p.stopped)
		p.killedBeforeStop = p.tr.Killed()
		// Found while the server still runs: once it is gone, they are
		// no longer linked to it.
		escaped := escapedDescendants(p.tr.Pid())
		guardClaim(escaped)
		defer guardRelease(escaped)
		p.closeW()
		if p.cs != nil {
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				// stdin EOF; returns once the process is reaped (Close calls
				// Wait), or stopGrace later with SIGTERM, which we preempt.
				_ = p.cs.Close()
			}()
			select {
			case <-closed:
			case <-time.After(stopGrace):
				p.tr.KillGroup()
				<-closed
			}
		}
		// A connection whose session never came to be is closed here; the
		// process is reaped either way.
		p.tr.Close()
		// Whatever happened: kill what is left of the group and wait for it.
		p.tr.KillGroup()
		waitGroupGone(p.tr.Pid(), groupGoneLimit)
		guardGroupGone(p.tr.Pid())
		if len(escaped) > 0 {
			p.killEscaped(escaped)
		}
		select {
		case <-p.drained:
		case <-time.After(stderrDrainLimit):
		}
		p.pr.Close()
		<-p.drained
	})
	<-p.stopped
}

// killEscaped kills the processes of the server that had left its process
// group, and reports each.
func (p *proc) killEscaped(escaped []procInfo) {
	left := killProcesses(escaped, groupGoneLimit)
	for _, e := range escaped {
		if p.onEscaped != nil {
			p.onEscaped(e, !slices.ContainsFunc(left, func(l procInfo) bool { return l.pid == e.pid }))
		}
	}
}

// exitStatus describes how the process ended, for "exited (…)": the exit
// code, or the signal ("signal: killed"). Only valid after stop.
func (p *proc) exitStatus() (text string, code int) {
	st := p.cmd.ProcessState
	switch {
	case st == nil:
		return "not started", -1
	case st.Exited():
		return strconv.Itoa(st.ExitCode()), st.ExitCode()
	default:
		return st.String(), -1 // "signal: segmentation fault"
	}
}

// startFailure classifies why starting (or listing tools, for discovery)
// failed, after stop. parent is the caller's context, start the one that
// bounded the start; timedOut reports whether the startup timeout ended it.
// redact is applied to what the server wrote before that is cut short.
func (p *proc) startFailure(err error, parent context.Context, timedOut bool, timeout time.Duration, redact func(string) string) (kind FailureKind, reason string, code int) {
	code = -1
	switch {
	case !p.tr.Started():
		return FailStart, fmt.Sprintf("cannot start %q: %v", p.spec.Command, err), code
	case parent.Err() != nil:
		return FailCancelled, "cancelled", code
	case timedOut:
		return FailTimeout, "no answer within " + formatSeconds(timeout), code
	case p.tr.ReadError() != nil:
		return FailProtocol, "protocol error: the server wrote something that is not JSON-RPC on stdout: " + shownError(p.tr.ReadError(), redact), code
	case p.cmd.ProcessState != nil && closedErr(err) && !p.killedBeforeStop:
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

// lineWriter splits a byte stream into lines, redacts each line whole and
// hands it to a callback. A line longer than stderrLineMax is emitted in
// pieces, so that a server that never writes a newline cannot make it grow
// without bound; a piece ends only where no known secret is cut in two (see
// cutLong), since a secret cut in two is no longer recognized, and so never
// redacted.
type lineWriter struct {
	emit   func(string)
	redact func(string) string
	// span returns the length of the longest text redact replaces (0: none).
	span func() int

	buf      []byte
	skipping bool // the rest of the current line is withheld
}

func (w *lineWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !w.skipping {
				w.buf = append(w.buf, b...)
				w.cutLong()
			}
			break
		}
		if !w.skipping {
			line := append(w.buf, b[:i]...)
			w.emit(w.redact(string(bytes.TrimRight(line, "\r"))))
		}
		w.buf, w.skipping = w.buf[:0], false
		b = b[i+1:]
	}
	return n, nil
}

// Close emits what is left of an unterminated last line.
func (w *lineWriter) Close() error {
	if len(w.buf) > 0 && !w.skipping {
		w.emit(w.redact(string(bytes.TrimRight(w.buf, "\r"))))
	}
	w.buf, w.skipping = nil, false
	return nil
}

// cutLong emits the front of a line that has grown past stderrLineMax, in
// pieces of about stderrLineMax bytes, redacted.
//
// A piece [0, c) is emitted only when it is redacted exactly as the whole
// line would be: redact(buf[:c]) + redact(buf[c:]) == redact(buf), so that
// no secret straddles c, and c is at least span bytes before the end of
// what has arrived, so that bytes still to come cannot complete a secret
// that starts before c. The first such c from stderrLineMax on is taken
// (on a character boundary if there is one); redaction leaves at most span
// bytes in a row unreplaceable, so one is found within span bytes unless
// the line is made of overlapping secrets. Then the rest of the line is
// withheld rather than risked.
func (w *lineWriter) cutLong() {
	for {
		span := 0
		if w.span != nil {
			span = w.span()
		}
		if len(w.buf) < stderrLineMax+2*span {
			return
		}
		c, piece, ok := stderrLineMax, "", true
		if span == 0 {
			piece = w.redact(string(w.buf[:c]))
		} else {
			c, piece, ok = w.safeCut(span)
		}
		if !ok {
			w.emit("[the rest of this line was withheld: it may hold a secret that mcpc could not redact]")
			w.buf, w.skipping = w.buf[:0], true
			return
		}
		w.emit(piece)
		w.buf = append(w.buf[:0], w.buf[c:]...)
	}
}

// safeCut finds where cutLong may cut (see there) and the redacted piece
// before it.
func (w *lineWriter) safeCut(span int) (int, string, bool) {
	whole := w.redact(string(w.buf))
	fallback, fpiece := -1, ""
	for c := stderrLineMax; c <= len(w.buf)-span; c++ {
		a := w.redact(string(w.buf[:c]))
		if !strings.HasPrefix(whole, a) || a+w.redact(string(w.buf[c:])) != whole {
			continue
		}
		if utf8.RuneStart(w.buf[c]) {
			return c, a, true
		}
		if fallback < 0 {
			fallback, fpiece = c, a
		}
	}
	return fallback, fpiece, fallback >= 0
}
