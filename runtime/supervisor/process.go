// Package supervisor starts, watches, reaps and kills the process of a
// stdio MCP server: its own process group (killed whole), its stderr (a
// bounded tail, and lines for a log), the calls in flight and the
// notifications/cancelled still owed to it (Ledger), its descendants that
// leave its group, and a Guard that keeps all of them from outliving mcpc.
// It knows nothing of plans, hosts, chats or gateways.
package supervisor

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// StopGrace is how long a server may take to exit after its stdin is
	// closed before its process group is killed. Real time: it waits for
	// the operating system, not for a rule.
	StopGrace = 500 * time.Millisecond
	// groupGoneLimit bounds the wait for a killed group to disappear.
	groupGoneLimit = 2 * time.Second
	// stderrDrainLimit bounds the wait for stderr to end once the group is
	// dead: a descendant that left the group could hold it open forever.
	stderrDrainLimit = 200 * time.Millisecond
	// StderrLineMax cuts an endless stderr line for the line callback
	// (about there: see lineWriter).
	StderrLineMax = 4 << 10
	// DefaultTailBytes bounds the stderr kept per process when
	// Options.TailBytes is not positive.
	DefaultTailBytes = 16 << 10
)

// ProcInfo is one process as /proc/PID/stat shows it.
type ProcInfo struct {
	Pid, PPid, Pgid int
	Comm            string
	Zombie          bool
}

// Command is the process to run, fully resolved.
type Command struct {
	Path string // looked up in mcpc's own PATH when it has no slash
	Args []string
	Dir  string
	// Env is the complete environment; nil means an empty one, never
	// mcpc's own (which holds host secrets).
	Env []string
}

// Options tune a Process. The zero value is ready to use.
type Options struct {
	// Stderr, if set, gets every stderr line, without the newline, redacted
	// with Redact, from the stderr reading goroutine. A line longer than
	// StderrLineMax comes in pieces, cut where no secret is cut in two (see
	// lineWriter).
	Stderr func(line string)
	// Redact redacts the lines for Stderr; SecretSpan returns the length of
	// the longest text it replaces.
	Redact     func(string) string
	SecretSpan func() int
	// OnEscaped, if set, is told of each process of the server's that had
	// left its process group and that Stop killed on its own (see
	// escapedDescendants), and of each that would not die.
	OnEscaped func(p ProcInfo, killed bool)
	// TailBytes bounds the stderr kept; 0 means DefaultTailBytes.
	TailBytes int
}

// Process is one server process: prepared by New, started by the
// Connect of its Transport, ended by Stop.
type Process struct {
	cmd  *exec.Cmd
	tr   *groupTransport
	tail *Tail
	// Calls counts the calls in flight and the notifications/cancelled
	// still owed to the server, for a shutdown (see Ledger).
	Calls *Ledger

	onEscaped func(ProcInfo, bool)
	session   io.Closer // the MCP session over Transport, once it is up

	pr      *os.File      // stderr, read end
	drained chan struct{} // closed when stderr reading ended
	closeW  func()        // closes our copy of stderr's write end

	stopOnce sync.Once
	stopped  chan struct{} // closed when Stop finished
	// killedBeforeStop records whether the group had been killed (by a
	// timeout or a cancellation) before Stop killed what was left, which
	// it always does: only an earlier kill explains an exit.
	killedBeforeStop bool
}

// New prepares c's process: its own process group and a stderr pipe that
// is read from now on. Nothing starts before its Transport connects.
func New(c Command, opts Options) (*Process, error) {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
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
	tailBytes := opts.TailBytes
	if tailBytes <= 0 {
		tailBytes = DefaultTailBytes
	}
	p := &Process{cmd: cmd, tail: NewTail(tailBytes), pr: pr,
		drained: make(chan struct{}), stopped: make(chan struct{}), Calls: NewLedger(), onEscaped: opts.OnEscaped}
	var closeOnce sync.Once
	p.closeW = func() { closeOnce.Do(func() { pw.Close() }) }
	var sink io.Writer = p.tail
	var lines *lineWriter
	if opts.Stderr != nil {
		redact := opts.Redact
		if redact == nil {
			redact = func(s string) string { return s }
		}
		lines = &lineWriter{emit: opts.Stderr, redact: redact, span: opts.SecretSpan}
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
		inner:        &mcp.CommandTransport{Command: cmd, TerminateDuration: StopGrace},
		started:      p.closeW, // the child has its copy now
		onCancelSent: p.Calls.Paid,
	}
	return p, nil
}

// Transport is the MCP transport over the process's stdin and stdout: its
// Connect starts the process.
func (p *Process) Transport() mcp.Transport { return p.tr }

// Attach gives the process the MCP session over its Transport: Stop closes
// it first (stdin EOF), as a server expects.
func (p *Process) Attach(session io.Closer) { p.session = session }

// KillGroup sends SIGKILL to the process group (see groupTransport).
func (p *Process) KillGroup() { p.tr.KillGroup() }

// Pid returns the process id (also its process group id), 0 if it never
// started.
func (p *Process) Pid() int { return p.tr.Pid() }

// Started reports whether the process was started.
func (p *Process) Started() bool { return p.tr.Started() }

// ReadError is the first error, other than the end of the stream, met while
// reading the server's stdout: it wrote something that is not JSON-RPC.
func (p *Process) ReadError() error { return p.tr.ReadError() }

// StderrTail returns the last of what the process wrote to stderr (see
// Tail.Text), unredacted.
func (p *Process) StderrTail() string { return p.tail.Text() }

// Exited reports whether the process was reaped, and KilledBeforeStop
// whether its group had been killed before Stop: an exit after such a
// kill is no exit of its own. Both are valid after Stop.
func (p *Process) Exited() bool           { return p.cmd.ProcessState != nil }
func (p *Process) KilledBeforeStop() bool { return p.killedBeforeStop }

// Stop ends the process: stdin is closed, the server gets StopGrace to
// exit, then its whole process group is killed. It returns once the
// process is reaped, the group is gone and stderr is drained. It may be
// called many times and from many goroutines; all return when the first
// call is done.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		defer close(p.stopped)
		p.killedBeforeStop = p.tr.Killed()
		// Found while the server still runs: once it is gone, they are
		// no longer linked to it.
		escaped := escapedDescendants(p.tr.Pid())
		guardClaim(escaped)
		defer guardRelease(escaped)
		p.closeW()
		if p.session != nil {
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				// stdin EOF; returns once the process is reaped (Close calls
				// Wait), or StopGrace later with SIGTERM, which we preempt.
				_ = p.session.Close()
			}()
			select {
			case <-closed:
			case <-time.After(StopGrace):
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
func (p *Process) killEscaped(escaped []ProcInfo) {
	left := killProcesses(escaped, groupGoneLimit)
	for _, e := range escaped {
		if p.onEscaped != nil {
			p.onEscaped(e, !slices.ContainsFunc(left, func(l ProcInfo) bool { return l.Pid == e.Pid }))
		}
	}
}

// ExitStatus describes how the process ended, for "exited (…)": the exit
// code, or the signal ("signal: killed"). Only valid after Stop.
func (p *Process) ExitStatus() (text string, code int) {
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
