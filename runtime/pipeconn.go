package runtime

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectPipes starts the command with its stdin and stdout on pipes and
// returns a pipeConn over them. The process is reaped as soon as it exits
// (see waitProcess).
func (t *groupTransport) connectPipes() (*pipeConn, error) {
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
	c := &pipeConn{cmd: cmd, stdin: stdin, out: messageWriter{w: stdin}, onCancelSent: t.onCancelSent, stdout: pr, r: bufio.NewReaderSize(pr, 64<<10),
		grace: t.inner.TerminateDuration, kill: t.KillGroup,
		exited: make(chan struct{}), waited: make(chan struct{}), readEnded: make(chan struct{}), closing: make(chan struct{})}
	go c.waitProcess()
	return c, nil
}

// stdoutDrainLimit is how long, after the server process exited, its stdout
// may take to end by itself (the answers it wrote last are still read)
// before mcpc stops reading it: a descendant that inherited stdout would
// otherwise keep the session, and every call, waiting for a process that is
// gone. Real time: it waits for the operating system (see Clock).
const stdoutDrainLimit = 500 * time.Millisecond

// waitProcess reaps the process the moment it exits, whatever holds its
// pipes, and records how it ended. If stdout has not ended stdoutDrainLimit
// later, a descendant holds it open: the read end is closed, which ends the
// session as the end of stdout would, so that the death is reported. It
// ends once the process is reaped and stdout ended or was let go; Close
// waits for it.
func (c *pipeConn) waitProcess() {
	defer close(c.waited)
	c.waitErr = c.cmd.Wait()
	unregisterChild(c.cmd)
	close(c.exited)
	t := time.NewTimer(stdoutDrainLimit)
	defer t.Stop()
	select {
	case <-c.readEnded:
	case <-c.closing:
	case <-t.C:
		c.stdout.Close()
	}
}

// pipeConn is the MCP connection to a server process over its stdin and
// stdout: newline-delimited JSON-RPC, what mcp.CommandTransport speaks.
//
// Why not mcp.CommandTransport's connection: it reads in a goroutine of its
// own, and parses every message three times (first as a batch array, which
// fails, then as one message, then its method), and each parse of the SDK
// allocates a buffer of 32 KiB (see decodeWire). A gateway does this for every answer of every call; reading the
// pipe in Read itself and parsing once cuts the CPU mcpc run spends per
// proxied call (BenchmarkRunStdioAddedLatency). mcpc owns the pipe, so
// Close unblocks a pending Read, which is why the SDK needs its goroutine
// for stdin but not here.
type pipeConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	r      *bufio.Reader
	queue  []jsonrpc.Message // the rest of a batch; Read is never concurrent
	grace  time.Duration
	kill   func()
	// onCancelSent, if set, is called after each notifications/cancelled
	// was written (see callLedger).
	onCancelSent func()

	out       messageWriter // stdin
	closeOnce sync.Once
	closeErr  error

	exited    chan struct{} // closed once the process is reaped (waitErr set)
	waitErr   error
	waited    chan struct{} // closed when waitProcess returned
	readEnded chan struct{} // closed when Read met the end of stdout or an error
	readOnce  sync.Once
	closing   chan struct{} // closed by Close: waitProcess stops waiting for stdout
}

// maxMessage bounds one message from a server, as the SDK does by default.
const maxMessage = mcp.DefaultMaxLineLength

func (c *pipeConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	for {
		line, err := readLine(c.r)
		if err != nil {
			c.endRead()
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '[' {
			return decodeWire(line)
		}
		// A server's batch: its requests are answered one by one, since
		// mcpc's client never sends batches itself.
		msgs, err := decodeWireBatch(line)
		if err != nil {
			return nil, err
		}
		c.queue = msgs[1:]
		return msgs[0], nil
	}
}

// endRead records that reading stdout ended.
func (c *pipeConn) endRead() {
	if c.readEnded != nil {
		c.readOnce.Do(func() { close(c.readEnded) })
	}
}

func (c *pipeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.out.writeMessage(ctx, msg)
	if c.onCancelSent != nil {
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/cancelled" {
			c.onCancelSent()
		}
	}
	return err
}

// Close closes stdin, which is how MCP asks a stdio server to exit, waits
// up to the grace period for the process to exit, then kills its process
// group; it returns once the process is reaped, and unblocks a pending
// Read.
func (c *pipeConn) Close() error {
	c.closeOnce.Do(func() {
		c.stdin.Close() // safe beside a Write, which then fails
		t := time.NewTimer(c.grace)
		select {
		case <-c.exited:
		case <-t.C:
			c.kill()
			<-c.exited
		}
		t.Stop()
		close(c.closing)
		<-c.waited
		c.closeErr = c.waitErr
		c.stdout.Close()
	})
	return c.closeErr
}

func (c *pipeConn) SessionID() string { return "" }

// readLine returns the next line of r without its newline, in a buffer of
// its own (a decoded message may keep parts of it), at most maxMessage
// bytes long.
func readLine(r *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		frag, err := r.ReadSlice('\n')
		switch {
		case err == nil:
			if long == nil {
				return bytes.Clone(frag[:len(frag)-1]), nil
			}
			if len(long)+len(frag)-1 > maxMessage {
				return nil, fmt.Errorf("a message longer than %d bytes", maxMessage)
			}
			return append(long, frag[:len(frag)-1]...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, frag...)
			if len(long) > maxMessage {
				return nil, fmt.Errorf("a message longer than %d bytes", maxMessage)
			}
		case errors.Is(err, io.EOF) && len(long)+len(frag) > 0:
			return append(long, frag...), nil // a last line without a newline
		default:
			return nil, err
		}
	}
}

// maxErrorText bounds the shown text of a decoding error, which may quote
// input.
const maxErrorText = 300

// shownError is the text of err as mcpc shows it: redacted first, then cut
// to maxErrorText bytes. Cutting first could leave the start of a secret
// that no longer matches, and so is never redacted.
func shownError(err error, redact func(string) string) string {
	return cutText(redact(err.Error()), maxErrorText)
}

// cutText cuts s to at most n bytes, on a character boundary, and marks the
// cut with "…". Only ever cut text that is already redacted.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
