package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An event stream of a Streamable HTTP connection gets a barrier in front
// of a response that follows a notification in it, and hands the response
// out only once the barrier was handled; the rest goes out as it came:
// CRLF lines, data over several lines, other event names, a response with
// no notification before it, an unfinished event at the end.
func TestOrderedEventsHoldTheResponse(t *testing.T) {
	t.Parallel()
	const (
		note  = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"a\",\"progress\":1}}\r\n\r\n"
		named = "event: other\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n\n"
		resp  = "id: 7\ndata: {\"jsonrpc\":\"2.0\",\n" + "data: \"id\":1,\"result\":{}}\n\n"
		again = "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"
		tail  = "data: {\"jsonrpc\""
	)
	link := &ProcLink{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := io.NopCloser(strings.NewReader(note + named + resp + again + tail))
	e := linkOrder{link}.Events(ctx, body)
	defer e.Close()
	r := bufio.NewReader(e)
	readEvent := func() string {
		t.Helper()
		var b strings.Builder
		for {
			line, err := r.ReadString('\n')
			b.WriteString(line)
			if err != nil || strings.TrimRight(line, "\r\n") == "" {
				return b.String()
			}
		}
	}
	if got := readEvent(); got != note {
		t.Fatalf("first event %q, want the notification as it came", got)
	}
	if got := readEvent(); got != named {
		t.Fatalf("second event %q, want the named event as it came", got)
	}
	barrier := readEvent()
	m, err := jsonrpc.DecodeMessage([]byte(strings.TrimSpace(strings.TrimPrefix(barrier, "data:"))))
	req, ok := m.(*jsonrpc.Request)
	if err != nil || !ok || req.Method != "notifications/progress" || req.IsCall() {
		t.Fatalf("third event %q (%v), want the barrier, a progress notification", barrier, err)
	}
	var p mcp.ProgressNotificationParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatal(err)
	}
	// The response waits for the barrier: handled through the link's
	// progress handler, which passes nothing of it on.
	got := make(chan string, 1)
	go func() { got <- readEvent() }()
	passed := false
	opts := link.orderedOptions(&mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { passed = true }})
	opts.ProgressNotificationHandler(ctx, &mcp.ProgressNotificationClientRequest{Params: &p})
	if passed {
		t.Error("the barrier reached the client's own progress handler")
	}
	if ev := <-got; ev != resp {
		t.Fatalf("event after the barrier %q, want the response as it came", ev)
	}
	if ev := readEvent(); ev != again {
		t.Fatalf("%q, want the second response as it came (no notification before it)", ev)
	}
	if rest, err := io.ReadAll(r); string(rest) != tail || err != nil {
		t.Fatalf("the end %q (%v), want %q", rest, err, tail)
	}
}

// A response held behind a barrier that is never handled is given up when
// the request's context ends.
func TestOrderedEventsEndWithTheRequest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	body := io.NopCloser(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	e := linkOrder{&ProcLink{}}.Events(ctx, body)
	defer e.Close()
	r := bufio.NewReader(e)
	for range 4 { // the notification and the barrier, two lines each
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if rest, err := io.ReadAll(r); len(rest) != 0 || err == nil {
		t.Errorf("after the request ended: %q, %v; want nothing and its error", rest, err)
	}
}
