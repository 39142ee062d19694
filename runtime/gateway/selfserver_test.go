package gateway

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime/supervisor"
)

// The test binary doubles as an MCP server over stdio that handles a
// secret carelessly, for the redaction tests: started with selfServerVar
// set, TestMain runs it instead of the tests. The secret is its variable
// SECRET.
//
// At start it writes the secret to stderr in a line longer than
// supervisor.StderrLineMax that does not end (with LONG_STDERR set), or, when its
// working directory holds a file bad-start, writes a message quoting the
// secret that is not JSON-RPC on stdout instead of serving. Tools: echo;
// args (answers with the arguments as they arrived);
// bad-stdout (writes such a message on stdout, breaking the connection);
// schema (a tool whose input and output schemas hold the secret).
const selfServerVar = "MCPC_RUNTIME_TEST_SELF_SERVER"

// badMessage is valid JSON, but not JSON-RPC: its version tag is the
// secret, which the SDK's decoding error would quote.
func badMessage(secret string) string {
	return fmt.Sprintf(`{"jsonrpc":%q,"id":1,"result":{}}`+"\n", secret)
}

// runSelfServer runs the self server and exits, if this process is one.
func runSelfServer() {
	if os.Getenv(selfServerVar) == "" {
		return
	}
	secret := os.Getenv("SECRET")
	if os.Getenv("LONG_STDERR") != "" {
		// No newline: the line ends only with the process.
		os.Stderr.WriteString(strings.Repeat("a", supervisor.StderrLineMax-96) + secret + strings.Repeat("b", 1000))
	}
	if _, err := os.Stat("bad-start"); err == nil {
		os.Stdout.WriteString(badMessage(secret))
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "self", Version: "1"}, nil)
	object := map[string]any{"type": "object"}
	server.AddTool(&mcp.Tool{Name: "echo", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
	})
	server.AddTool(&mcp.Tool{Name: "args", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	server.AddTool(&mcp.Tool{Name: "bad-stdout", InputSchema: object}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Stdout.WriteString(badMessage(secret))
		<-ctx.Done() // never answers: mcpc breaks the connection
		return nil, ctx.Err()
	})
	server.AddTool(&mcp.Tool{Name: "schema", Description: "the tool",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"key": map[string]any{"type": "string", "default": secret, "examples": []any{"Bearer " + secret}},
		}},
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"out": map[string]any{"type": "string", "description": "like " + secret},
		}},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"out": "x"}}, nil
	})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(0)
}

// selfServer is a plan server running the self server, with SECRET from
// the host variable SELF_TOKEN (deny-listed, so a known secret).
func selfServer(name string, env map[string]string) plan.Server {
	s := testServer(name)
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	s.Command, s.Args = self, nil
	s.Env = map[string]*string{selfServerVar: ptr("1"), "SECRET": ptr("${env:SELF_TOKEN}")}
	for k, v := range env {
		s.Env[k] = ptr(v)
	}
	return s
}
