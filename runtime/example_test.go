package runtime_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// A host runs one plan; each chat gets its own server processes.
func ExampleHost() {
	server, err := testservers.Build() // a small MCP server with the tools echo and read
	if err != nil {
		log.Fatal(err)
	}
	// Normally: p, diags := plan.Read("plan.json", data)
	p := &plan.Plan{PlanVersion: plan.Version, Profile: "volcanic", Servers: []plan.Server{{
		Name: "files", Command: server, Args: []string{"-tools", "echo,read"}, Cwd: "${workspace}",
		Enabled: true, Transport: "stdio", StderrLevel: "Warning",
		StartupTimeoutSeconds: 60, CallTimeoutSeconds: 120, IdleTimeoutSeconds: 1800,
	}}}
	host, err := runtime.NewHost(p, runtime.HostOptions{
		// The host environment: servers inherit it minus the deny-list.
		Env: runtime.EnvFromList([]string{"PATH=" + os.Getenv("PATH")}, nil),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer host.Close() // stops every process of every chat

	workspace, _ := os.MkdirTemp("", "chat-42-")
	defer os.RemoveAll(workspace)
	chat, _ := host.Chat("42", workspace)

	ctx := context.Background()
	tools, _ := chat.Tools(ctx) // discovery: once per server, shared by all chats
	for _, t := range tools {
		fmt.Println("tool:", t.Name) // "read" is a built-in tool name: not served
	}
	res, err := chat.Call(ctx, "echo", map[string]any{"text": "hello"}) // starts this chat's process
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println(chat.Status().Servers[0].State)
	chat.Reset() // "/new": stop the chat's processes
	fmt.Println(chat.Status().Servers[0].State)
	// Output:
	// tool: echo
	// hello
	// running
	// not started
}
