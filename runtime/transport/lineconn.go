package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LineTransport is an MCP transport over a reader and a writer that carry
// one JSON-RPC message per line, as the MCP stdio transport does; mcpc run
// --stdio serves its chat with it on its own stdin and stdout:
//
//	err := gw.ServeTransport(ctx, chat, &transport.LineTransport{Reader: os.Stdin, Writer: os.Stdout})
//
// It differs from mcp.IOTransport in three ways. It parses each message
// once, without the SDK decoder's 32 KiB buffer per parse (see DecodeMessage),
// which is most of what a gateway spends on a proxied call. A line that is
// not a JSON-RPC message gets a JSON-RPC error response (-32700 parse error,
// -32600 invalid request) and the session goes on, where the SDK ends it.
// And it answers a batch (a JSON array, which MCP removed in 2025-06-18)
// with an invalid-request error instead of serving it.
//
// Closing the connection does not close Reader or Writer: the caller owns
// them. Until Reader reaches its end, one goroutine stays blocked reading
// it, as with mcp.IOTransport.
type LineTransport struct {
	Reader io.Reader
	Writer io.Writer
}

// Connect starts reading t.Reader.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{out: messageWriter{w: t.Writer}, incoming: make(chan msgOrErr), closed: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(t.Reader, 64<<10))
	return c, nil
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

// lineConn is a connection of LineTransport.
type lineConn struct {
	out messageWriter

	incoming  chan msgOrErr
	closed    chan struct{}
	closeOnce sync.Once
}

// readLoop reads and decodes lines until the reader fails or ends, or the
// connection is closed.
func (c *lineConn) readLoop(r *bufio.Reader) {
	for {
		line, err := readLine(r)
		if err != nil {
			select {
			case c.incoming <- msgOrErr{err: err}:
			case <-c.closed:
			}
			return
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var msg jsonrpc.Message
		var refused *jsonrpc.Error
		if line[0] == '[' {
			refused = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send one message per line"}
		} else if msg, err = DecodeMessage(line); err != nil {
			refused = invalidMessage(err)
		}
		if refused != nil {
			// The sender cannot be told which message failed: the id of
			// an error response to a message that could not be read is
			// null (JSON-RPC 2.0, section 5).
			if werr := c.writeError(refused); werr != nil {
				select {
				case c.incoming <- msgOrErr{err: werr}:
				case <-c.closed:
				}
				return
			}
			continue
		}
		select {
		case c.incoming <- msgOrErr{msg: msg}:
		case <-c.closed:
			return
		}
	}
}

// invalidMessage is the JSON-RPC error answering a line that DecodeMessage
// refused: a parse error if the line is not JSON, else an invalid request.
// Its text is cut, since it may quote the line.
func invalidMessage(err error) *jsonrpc.Error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: " + CutText(err.Error(), MaxErrorText)}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + CutText(err.Error(), MaxErrorText)}
}

// writeError writes an error response with a null id.
func (c *lineConn) writeError(werr *jsonrpc.Error) error {
	data, err := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, werr})
	if err != nil {
		return err
	}
	return c.out.writeLine(data)
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m := <-c.incoming:
		return m.msg, m.err
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	return c.out.writeMessage(ctx, msg)
}

// messageWriter writes JSON-RPC messages, one per line.
type messageWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// writeMessage encodes msg and writes it as one line.
func (lw *messageWriter) writeMessage(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := EncodeMessage(msg)
	if err != nil {
		return err
	}
	return lw.writeLine(data)
}

// writeLine writes data and a newline in one write, so that concurrent
// messages never interleave.
func (lw *messageWriter) writeLine(data []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_, err := lw.w.Write(append(data, '\n'))
	return err
}

// Close ends the connection; a pending Read returns io.EOF.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }
