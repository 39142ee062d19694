package gateway

import (
	"bufio"
	"context"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// conformanceOverHTTP starts the conformance fixture as a Streamable HTTP
// server on 127.0.0.1 and returns its URL; the test's cleanup kills it.
func conformanceOverHTTP(t *testing.T, marker string) string {
	t.Helper()
	cmd := exec.Command(testservers.Conformance(t), "-http", "127.0.0.1:0", "-watched-every", "200ms")
	cmd.Env = []string{leakMarkerVar + "=" + marker}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
	}()
	url := testservers.Recv(t, "the fixture's URL", line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("the fixture printed %q, want its URL", url)
	}
	return url
}

// A remote server's prompts, resources, templates and completion pass
// through the gateway named like its tools (<server>__<name>), and so do
// its progress, log messages, resource updates and list changes.
func TestGatewayPassesRemoteServers(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	url := conformanceOverHTTP(t, marker)
	addRemote(t, ws, "c1", remote.Server{Name: "conf", URL: url, Transport: remote.TransportHTTP}, bearer(t, remoteCanary))
	gw, chat := remoteChat(t, marker, ws)
	pc := &passClient{updated: make(chan string, 1)}
	opts := pc.options()
	var mu sync.Mutex
	changed := map[string]chan struct{}{"tools": make(chan struct{}, 1), "prompts": make(chan struct{}, 1), "resources": make(chan struct{}, 1)}
	notify := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		select {
		case changed[what] <- struct{}{}:
		default:
		}
	}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { notify("tools") }
	opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { notify("prompts") }
	opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { notify("resources") }
	cs := connectVersion(t, gw, chat, opts, "2025-11-25")
	ctx := context.Background()

	if got := listNames(t, cs); !slices.Contains(got, "conf__test_tool_with_progress") {
		t.Fatalf("tools %v, want the remote server's", got)
	}

	// Progress: the client's token comes back on every notification.
	params := &mcp.CallToolParams{Name: "conf__test_tool_with_progress"}
	params.SetProgressToken("tok-r")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); !strings.HasPrefix(got, "mcpc-") {
		t.Errorf("the remote server saw progress token %q, want the gateway's own", got)
	}
	pc.awaitProgress(t, 3)
	pc.mu.Lock()
	if len(pc.progress) != 3 || pc.progress[2].ProgressToken != "tok-r" || pc.progress[2].Progress != 100 {
		t.Errorf("progress = %+v, want 3 notifications with token tok-r", pc.progress)
	}
	pc.mu.Unlock()

	// Logging: the level goes to the remote server, messages come back
	// tagged with its name.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "conf__test_tool_with_logging"}); err != nil {
		t.Fatal(err)
	}
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

	// Prompts, named like the server's tools, got with its own names.
	prompts := promptNames(t, cs)
	if want := []string{"conf__test_prompt_with_arguments", "conf__test_prompt_with_embedded_resource", "conf__test_prompt_with_image", "conf__test_simple_prompt"}; !slices.Equal(prompts, want) {
		t.Errorf("prompts = %v, want %v", prompts, want)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "conf__test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := gp.Messages[0].Content.(*mcp.TextContent).Text; got != "Prompt with arguments: arg1='a', arg2='b'" {
		t.Errorf("prompt text = %q", got)
	}
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "conf__test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "x"}}); err != nil {
		t.Errorf("completion: %v", err)
	}

	// Resources: the server's URIs, names with <server>__.
	if got, want := resourceNames(t, cs), []string{"test://static-binary conf__static-binary", "test://static-text conf__static-text", "test://watched-resource conf__watched-resource"}; !slices.Equal(got, want) {
		t.Errorf("resources = %v, want %v", got, want)
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
	// A resource_link a remote tool returns can be read.
	link, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "conf__test_resource_link"})
	if err != nil {
		t.Fatal(err)
	}
	rl := link.Content[0].(*mcp.ResourceLink)
	if rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: rl.URI}); err != nil || rr.Contents[0].Text != "The linked report." {
		t.Errorf("reading the link %s: %v %+v", rl.URI, err, rr)
	}

	// Subscriptions: the server's updates (outside any request) reach the
	// client.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}
	if got := testservers.Recv(t, "notifications/resources/updated", pc.updated); got != "test://watched-resource" {
		t.Errorf("updated %q", got)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}

	// The server's lists change: the client is told, and the new lists
	// have the new entries.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "conf__mcpc_change_lists"}); err != nil {
		t.Fatal(err)
	}
	for what, ch := range changed {
		testservers.Recv(t, what+"/list_changed", ch)
	}
	eventually(t, "the new tool, prompt and resource", func() bool {
		return slices.Contains(listNames(t, cs), "conf__dynamic_tool") &&
			slices.Contains(promptNames(t, cs), "conf__dynamic_prompt") &&
			slices.Contains(resourceNames(t, cs), "test://dynamic conf__dynamic")
	})
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "conf__dynamic_tool"}); err != nil || resultText(res) != "dynamic" {
		t.Errorf("conf__dynamic_tool: %v %v %q", err, res, resultText(res))
	}
}

func promptNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for p, err := range cs.Prompts(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Name)
	}
	return out
}

func resourceNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.URI+" "+r.Name)
	}
	return out
}

// remoteChat is a gateway of a host whose stdio server offers echo, and
// its chat c1 in ws, whose servers.json the test wrote.
func remoteChat(t *testing.T, marker, ws string) (*Gateway, *runtime.Chat) {
	t.Helper()
	h := remoteHost(t, marker, nil, nil, "echo")
	gw := NewGateway(h, GatewayOptions{Version: "test"})
	t.Cleanup(gw.Close)
	chat, err := h.Chat("c1", ws)
	if err != nil {
		t.Fatal(err)
	}
	return gw, chat
}
