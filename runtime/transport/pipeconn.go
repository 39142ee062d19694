package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Process is what a PipeConn needs of the process at the other end of its
// pipes. Whoever started the process (the runtime) provides it and keeps
// the process's lifecycle: it registers, reaps and kills the process; the
// connection only decides when.
type Process struct {
	// Wait waits for the process to exit, reaps it and returns how it
	// ended, as exec.Cmd.Wait does. NewPipeConn calls it at once, in a
	// goroutine of its own, so that the process is reaped the moment it
	// exits, whatever holds its pipes.
	Wait func() error
	// Kill ends the process for good (the runtime kills its process
	// group). Close calls it when the process has not exited Grace after
	// its stdin was closed; Wait must return soon after.
	Kill func()
	// Grace is how long Close waits, after closing stdin, for the process
	// to exit by itself.
	Grace time.Duration
}

// NewPipeConn returns the connection to a started process over its stdin
// and the read end of its stdout. stdout must be a pipe mcpc created itself
// (os.Pipe: its read end is pollable, so that closing it unblocks a pending
// Read), of which the child has its own copy of the write end. The
// connection owns both pipes and closes them.
func NewPipeConn(stdin io.WriteCloser, stdout *os.File, p Process) *PipeConn {
	c := &PipeConn{proc: p, stdin: stdin, out: messageWriter{w: stdin}, stdout: stdout, r: bufio.NewReaderSize(stdout, 64<<10),
		exited: make(chan struct{}), waited: make(chan struct{}), readEnded: make(chan struct{}), closing: make(chan struct{})}
	go c.waitProcess()
	return c
}

// stdoutDrainLimit is how long, after the server process exited, its stdout
// may take to end by itself (the answers it wrote last are still read)
// before mcpc stops reading it: a descendant that inherited stdout would
// otherwise keep the session, and every call, waiting for a process that is
// gone. Real time: it waits for the operating system.
const stdoutDrainLimit = 500 * time.Millisecond

// waitProcess has the process reaped the moment it exits and records how
// it ended. If stdout has not ended stdoutDrainLimit later, a descendant
// holds it open: the read end is closed, which ends the session as the end
// of stdout would, so that the death is reported. It ends once the process
// is reaped and stdout ended or was let go; Close waits for it.
func (c *PipeConn) waitProcess() {
	defer close(c.waited)
	c.waitErr = c.proc.Wait()
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

// PipeConn is the MCP connection to a server process over its stdin and
// stdout: newline-delimited JSON-RPC, what mcp.CommandTransport speaks.
//
// Why not mcp.CommandTransport's connection: it reads in a goroutine of its
// own, and parses every message three times (first as a batch array, which
// fails, then as one message, then its method), and each parse of the SDK
// allocates a buffer of 32 KiB (see DecodeMessage). A gateway does this for
// every answer of every call; reading the pipe in Read itself and parsing
// once cuts the CPU mcpc run spends per proxied call
// (BenchmarkRunStdioAddedLatency). mcpc owns the pipe, so Close unblocks a
// pending Read, which is why the SDK needs its goroutine for stdin but not
// here.
type PipeConn struct {
	proc   Process
	stdin  io.WriteCloser
	stdout *os.File
	r      *bufio.Reader
	queue  []jsonrpc.Message // the rest of a batch; Read is never concurrent

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

func (c *PipeConn) Read(context.Context) (jsonrpc.Message, error) {
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
			return DecodeMessage(line)
		}
		// A server's batch: its requests are answered one by one, since
		// mcpc's client never sends batches itself.
		msgs, err := decodeBatch(line)
		if err != nil {
			return nil, err
		}
		c.queue = msgs[1:]
		return msgs[0], nil
	}
}

// endRead records that reading stdout ended.
func (c *PipeConn) endRead() {
	if c.readEnded != nil {
		c.readOnce.Do(func() { close(c.readEnded) })
	}
}

func (c *PipeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	return c.out.writeMessage(ctx, msg)
}

// Close closes stdin, which is how MCP asks a stdio server to exit, waits
// up to the grace period for the process to exit, then kills it
// (Process.Kill); it returns once the process is reaped, with how it ended,
// and unblocks a pending Read. It may be called many times.
func (c *PipeConn) Close() error {
	c.closeOnce.Do(func() {
		c.stdin.Close() // safe beside a Write, which then fails
		t := time.NewTimer(c.proc.Grace)
		select {
		case <-c.exited:
		case <-t.C:
			c.proc.Kill()
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

func (c *PipeConn) SessionID() string { return "" }

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

// MaxErrorText bounds the shown text of a decoding error, which may quote
// input. The runtime cuts what it shows of a server's protocol errors to
// the same length, after redacting them.
const MaxErrorText = 300

// CutText cuts s to at most n bytes, on a character boundary, and marks the
// cut with "…". Only ever cut text that is already redacted.
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
