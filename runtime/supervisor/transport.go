package supervisor

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// groupTransport starts the command of an mcp.CommandTransport and
// remembers the process it started, so that its whole process group can be
// killed from any goroutine (the SDK's transport only signals the direct
// child), and it watches the connection for output that is not JSON-RPC.
type groupTransport struct {
	inner   *mcp.CommandTransport
	started func() // called once Connect has tried to start the process
	// onCancelSent, if set, is called after each notifications/cancelled
	// written to the server.
	onCancelSent func()

	mu     sync.Mutex
	proc   *os.Process // nil until started
	killed bool        // the group was sent SIGKILL
	conn   *watchedConn
	pipes  *transport.PipeConn
}

func (t *groupTransport) Connect(context.Context) (mcp.Connection, error) {
	// The command as mcp.CommandTransport would start it, over a faster
	// connection (see transport.PipeConn); TerminateDuration is its grace
	// period.
	pc, err := t.connectPipes()
	var conn mcp.Connection
	t.mu.Lock()
	t.proc = t.inner.Command.Process
	if pc != nil {
		t.pipes = pc
		t.conn = &watchedConn{Connection: pc, onCancelSent: t.onCancelSent}
		conn = t.conn
	}
	t.mu.Unlock()
	if t.started != nil {
		t.started()
	}
	return conn, err
}

// connectPipes starts the command with its stdin and stdout on pipes and
// returns the connection over them. The supervisor keeps the process's
// lifecycle: it registers the child (startChild), tells the guard about
// its group, reaps it (unregistering it) the moment it exits, and kills its
// group when the grace period is over; the connection decides when.
func (t *groupTransport) connectPipes() (*transport.PipeConn, error) {
	cmd := t.inner.Command
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipe for stdout: its read end is pollable, so that closing it
	// unblocks a pending Read.
	pr, pw, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	cmd.Stdout = pw
	if err := startChild(cmd); err != nil {
		pr.Close()
		pw.Close()
		stdin.Close()
		return nil, err
	}
	pw.Close() // the child has its copy
	guardGroupStarted(cmd.Process.Pid)
	return transport.NewPipeConn(stdin, pr, transport.Process{
		Wait: func() error {
			err := cmd.Wait()
			unregisterChild(cmd)
			return err
		},
		Kill:  t.KillGroup,
		Grace: t.inner.TerminateDuration,
	}), nil
}

// Close closes the connection to the process, if there is one: the process
// is asked to exit (stdin), killed with its group after the grace period,
// and reaped. Closing the session does the same; this is for a process
// whose session never came to be. It may be called many times.
func (t *groupTransport) Close() {
	t.mu.Lock()
	pc := t.pipes
	t.mu.Unlock()
	if pc != nil {
		pc.Close()
	}
}

// Started reports whether the process was started.
func (t *groupTransport) Started() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc != nil
}

// Pid returns the pid of the started process (also its process group id),
// 0 before it started.
func (t *groupTransport) Pid() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proc == nil {
		return 0
	}
	return t.proc.Pid
}

// Killed reports whether KillGroup signalled the process group.
func (t *groupTransport) Killed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.killed
}

// KillGroup sends SIGKILL to the process group of the started process: the
// server and every descendant that stayed in its group. It does nothing
// before the process started and may be called repeatedly.
func (t *groupTransport) KillGroup() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proc != nil && killProcessGroup(t.proc) == nil {
		t.killed = true
	}
}

// ReadError returns the first error, other than the end of the stream, met
// while reading the server's stdout: the server wrote something that is not
// JSON-RPC. The SDK reports such a failure only as "connection closed".
func (t *groupTransport) ReadError() error {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// watchedConn records the first read error of a connection, and tells
// onCancelSent, if set, of each notifications/cancelled written to it (see
// Ledger).
type watchedConn struct {
	mcp.Connection
	onCancelSent func()

	mu      sync.Mutex
	readErr error
}

func (c *watchedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if c.onCancelSent != nil {
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/cancelled" {
			c.onCancelSent()
		}
	}
	return err
}

func (c *watchedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil && ctx.Err() == nil && !ClosedErr(err) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		c.mu.Lock()
		if c.readErr == nil {
			c.readErr = err
		}
		c.mu.Unlock()
	}
	return msg, err
}

// ClosedErr reports whether err means the stream ended (the server closed its
// stdout, typically by exiting), as opposed to a bad message.
func ClosedErr(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed)
}
