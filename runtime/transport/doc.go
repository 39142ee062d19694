// Package transport holds mcpc's own MCP transports: newline-delimited
// JSON-RPC over a stdio pair (the MCP stdio transport), and the client
// side of the remote transports of a CraftBot server entry, websocket and
// sse ([NewRemote]). [LineTransport]
// serves the gateway's chat on mcpc run's stdin and stdout; [PipeConn] is
// the connection to a server process over its stdin and stdout pipes;
// [PollableInput] puts a blocking stdin in Go's network poller;
// [DecodeMessage] decodes one JSON-RPC message as the SDK does.
//
// Why not the go-sdk's IOTransport and CommandTransport: the latency target
// of mcpc run --stdio (BenchmarkRunStdioAddedLatency in cmd/mcpc/cli). The
// SDK's decoder allocates a fresh buffer for every value it parses and its
// transports parse each message three times (batch array, message, method);
// these parse each message once with json.Parse of the same library
// (segmentio/encoding), which needs no buffer, and PipeConn reads the pipe
// in Read itself instead of in a goroutine of its own (figures:
// docs/performance.md, "The stdio gateway's added latency";
// docs/decisions/0019-mcp-transports.md). Being
// hand-written, the decoder is fuzzed against the SDK's (FuzzDecodeMessage):
// both accept the same lines and produce the same messages. Its errors name
// the kind and place of a fault and never quote the message, which may hold
// a secret a server echoed.
//
// Streamable HTTP is served by the go-sdk's handler (the runtime's HTTP
// front); this package gives that front [DecodeBody], which decodes a
// POST body once for the front's own checks, and a [SessionPool], which
// caps and expires the sessions of the endpoints that share it (a
// gateway's chats, both profiles).
//
// Ids go back exactly as they came: [DecodeMessage] keeps an id that the
// SDK's jsonrpc.ID would change (1.5, 2^64, an escaped string) as its JSON
// text, and [EncodeMessage], which every write goes through, writes that
// text back (id.go). Over Streamable HTTP, [SDKBody] hands the SDK's
// handler a body with such ids in their string form and [RestoreIDs]
// writes them back in its answers.
//
// A transport owns the connection only: reading, writing and closing the
// pipes, the batch queue, the error texts, and how long a dead process's
// stdout may still be read. The process at the other end of a PipeConn is
// the runtime's: it starts the process, reaps it and kills its process
// group, and hands the connection those steps as a [Process].
//
// [WebSocketTransport] is MCP over a websocket (github.com/coder/websocket):
// subprotocol mcp, one JSON-RPC message per text message, a ping keepalive,
// a cap on a message's size, the server's pings bounded, and the close
// codes turned into errors that name them ([RemoteError]). [SSETransport]
// is the go-sdk's SSE client behind an origin guard: the SDK would post to
// whatever endpoint the server names, also on another origin. Both send
// their headers only to the url's own origin and refuse requests anywhere
// else (internal/remotehttp's guard, the one of volcanic's remote servers
// too); no header value and no url appears in their errors.
//
// It imports node (the nesting-depth check) and internal/remotehttp (the
// origin guard), no other package of mcpc;
// the runtime and the CLI import it (layers_test.go).
package transport
