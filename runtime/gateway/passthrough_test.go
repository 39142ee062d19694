package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/internal/hooks"
)

// passClient records what the gateway passes on to a client.
type passClient struct {
	mu       sync.Mutex
	logs     []*mcp.LoggingMessageParams
	progress []*mcp.ProgressNotificationParams
	updated  chan string
}

// awaitLogs waits until at least n log messages came (what, for a wait
// that never ends).
func (pc *passClient) awaitLogs(t *testing.T, n int, what string) {
	t.Helper()
	eventually(t, what, func() bool {
		pc.mu.Lock()
		defer pc.mu.Unlock()
		return len(pc.logs) >= n
	})
}

// awaitProgress waits until at least n progress notifications came: the
// client's SDK may run its handlers after it returned the call's result.
func (pc *passClient) awaitProgress(t *testing.T, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d progress notifications", n), func() bool {
		pc.mu.Lock()
		defer pc.mu.Unlock()
		return len(pc.progress) >= n
	})
}

func (pc *passClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		// No roots: the chat's workspace stands in.
		Capabilities: &mcp.ClientCapabilities{},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			prompt := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "echo " + prompt}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ann", "email": "a@b"}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			pc.mu.Lock()
			pc.logs = append(pc.logs, req.Params)
			pc.mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			pc.mu.Lock()
			pc.progress = append(pc.progress, req.Params)
			pc.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case pc.updated <- req.Params.URI:
			default:
			}
		},
	}
}

// connectVersion is connectInMemory offering a protocol version: before
// 2026-07-28 a server may send requests to the client during a call.
func connectVersion(t *testing.T, gw *Gateway, chat *runtime.Chat, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- gw.ServeTransport(context.Background(), chat, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		<-served
	})
	return cs
}

// Everything besides tools passes through the gateway: progress, logging,
// sampling, elicitation, roots, resources (list, templates, read, links,
// subscribe), prompts, completion and the instructions.
func TestGatewayPassThrough(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	s := testServer("conf")
	s.Command = testservers.Conformance(t)
	// The subscription below waits for the watched resource's next change.
	s.Args = []string{"-watched-every", "200ms"}
	s.ToolPrefix = "c_"
	s.PromptSection = ptr("Use the c_ tools for conformance.")
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	ws := filepath.Join(dir, "ws")
	chat, _ := h.Chat("c", ws)
	pc := &passClient{updated: make(chan string, 1)}
	cs := connectVersion(t, gw, chat, pc.options(), "2025-11-25")
	ctx := context.Background()

	if got := cs.InitializeResult().Instructions; !strings.Contains(got, "Use the c_ tools for conformance.") || !strings.Contains(got, "MCP server conf:\nThe conformance fixture") {
		t.Errorf("instructions = %q, want the promptSection, then the server's own", got)
	}

	// Progress: the client's token comes back on every notification.
	params := &mcp.CallToolParams{Name: "c_test_tool_with_progress"}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); !strings.HasPrefix(got, "mcpc-") {
		t.Errorf("the server saw progress token %q, want the gateway's own", got)
	}
	pc.awaitProgress(t, 3)
	pc.mu.Lock()
	if len(pc.progress) != 3 || pc.progress[2].ProgressToken != "tok-1" || pc.progress[2].Progress != 100 {
		t.Errorf("progress = %+v, want 3 notifications with token tok-1", pc.progress)
	}
	pc.mu.Unlock()

	// Logging: the level goes to the server, messages come back tagged.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "c_test_tool_with_logging"}); err != nil {
		t.Fatal(err)
	}
	// The last may arrive after the result: the SDK hands notifications to
	// their handler apart from responses.
	pc.awaitLogs(t, 3, "3 log messages")
	pc.mu.Lock()
	if len(pc.logs) != 3 {
		for _, l := range pc.logs {
			t.Errorf("log %s %s: %v", l.Level, l.Logger, l.Data)
		}
		t.Fatalf("%d log messages, want 3", len(pc.logs))
	}
	if l := pc.logs[0]; l.Logger != "conf" || l.Data != "Tool execution started" {
		t.Errorf("log = %+v, want logger conf", l)
	}
	pc.mu.Unlock()

	// Sampling, elicitation and roots are answered by the client.
	for tool, want := range map[string]string{
		"c_test_sampling":    "LLM response: echo hi",
		"c_test_elicitation": `User response: action=accept, content={"email":"a@b","username":"ann"}`,
		"c_test_roots":       "file://" + ws,
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"prompt": "hi", "message": "who?"}})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if got := resultText(res); got != want {
			t.Errorf("%s = %q, want %q", tool, got, want)
		}
	}

	// Prompts: named like tools, got with the server's own name.
	var prompts []string
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p.Name)
	}
	if want := []string{"c_test_prompt_with_arguments", "c_test_prompt_with_embedded_resource", "c_test_prompt_with_image", "c_test_simple_prompt"}; !slices.Equal(prompts, want) {
		t.Errorf("prompts = %v, want %v", prompts, want)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "c_test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := gp.Messages[0].Content.(*mcp.TextContent).Text; got != "Prompt with arguments: arg1='a', arg2='b'" {
		t.Errorf("prompt text = %q", got)
	}
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "c_test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "x"}}); err != nil {
		t.Errorf("completion: %v", err)
	}

	// Resources: URIs as the server gives them, names with the prefix.
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI+" "+r.Name)
	}
	if want := []string{"test://static-binary c_static-binary", "test://static-text c_static-text", "test://watched-resource c_watched-resource"}; !slices.Equal(uris, want) {
		t.Errorf("resources = %v, want %v", uris, want)
	}
	for uri, want := range map[string]string{
		"test://static-text":      "This is the content of the static text resource.",
		"test://template/42/data": `{"id":"42","templateTest":true,"data":"Data for ID: 42"}`,
	} {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if got := rr.Contents[0].Text; got != want {
			t.Errorf("read %s = %q, want %q", uri, got, want)
		}
	}
	// A resource_link a tool returns can be read, though no list has it.
	link, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "c_test_resource_link"})
	if err != nil {
		t.Fatal(err)
	}
	rl := link.Content[0].(*mcp.ResourceLink)
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: rl.URI})
	if err != nil || rr.Contents[0].Text != "The linked report." {
		t.Errorf("reading the link %s: %v %+v", rl.URI, err, rr)
	}

	// Subscriptions: the server's updates reach the client.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}
	if got := testservers.Recv(t, "notifications/resources/updated", pc.updated); got != "test://watched-resource" {
		t.Errorf("updated %q", got)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}
}

// A logging/setLevel that arrives while the chat's process starts, after
// the start gave the process the client's settings and before the process
// counts as running, still reaches it: the level used to be lost there
// (setLevel passed it to running processes only), and the server never
// logged.
func TestSetLevelDuringAStartReachesTheProcess(t *testing.T) {
	gw, chat := conformanceGateway(t)
	pc := &passClient{updated: make(chan string, 1)}
	cs := connectVersion(t, gw, chat, pc.options(), "2025-11-25")
	ctx := context.Background()
	hooks.AfterStartRead = func() {
		hooks.AfterStartRead = nil // the one start of this test
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { hooks.AfterStartRead = nil })
	// The call starts the chat's process; the level comes during that.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_tool_with_logging"}); err != nil {
		t.Fatal(err)
	}
	pc.awaitLogs(t, 3, "the 3 log messages of the call")
}

// conformanceGateway serves, with no leak of the test's marker, a chat of
// a plan with one server, conf: the conformance fixture over stdio.
func conformanceGateway(t *testing.T) (*Gateway, *runtime.Chat) {
	t.Helper()
	marker := noLeaks(t)
	s := testServer("conf")
	s.Command = testservers.Conformance(t)
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, err := h.Chat("c", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return gw, chat
}

// holdFirst sets the test hook *hook so that the first time it runs it
// closes held and waits for release; later runs, and the test's end, find
// the hook unset.
func holdFirst(t *testing.T, hook *func()) (held, release chan struct{}) {
	held, release = make(chan struct{}), make(chan struct{})
	*hook = func() {
		*hook = nil
		close(held)
		<-release
	}
	t.Cleanup(func() { *hook = nil })
	return held, release
}
