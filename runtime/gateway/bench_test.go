package gateway

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	var m goruntime.MemStats
	goruntime.GC()
	goruntime.GC()
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Target (issue 4): 200 idle chats cost under 100 KiB each of gateway heap,
// their processes aside. Each chat connects over Streamable HTTP, lists the
// tools and calls one (which starts its process); the processes are then
// stopped by their idle timeout. KiB/idle-chat counts the chats with their
// MCP sessions still open, and includes the test's own client sessions,
// which live in the same heap: an upper bound. KiB/chat-after-disconnect
// counts what stays once the clients are gone.
func BenchmarkIdleChatHeap(b *testing.B) {
	const chats, batch = 200, 20
	var perChat, perClosed float64
	for b.Loop() {
		marker := noLeaks(b)
		clock := clocktest.New()
		s := testServer("srv", "-tools", "echo,env,slow,stderr-flood,crash")
		s.IdleTimeoutSeconds = 60
		h := newTestHost(b, testPlan(s), runtime.HostOptions{Env: testEnv(marker), Clock: clock})
		gw := NewGateway(h, GatewayOptions{WorkspaceRoot: b.TempDir()})
		base, client := httpGateway(b, gw)
		before := liveHeap()
		sessions := make([]*mcp.ClientSession, 0, chats)
		for start := 0; start < chats; start += batch {
			got := make([]*mcp.ClientSession, batch)
			var wg sync.WaitGroup
			for i := range batch {
				wg.Go(func() {
					cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
						&mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("%s/chats/c%03d/mcp", base, start+i), HTTPClient: client}, nil)
					if err != nil {
						b.Error(err)
						return
					}
					if _, err := cs.ListTools(context.Background(), nil); err != nil {
						b.Error(err)
					}
					if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
						b.Error(err)
					}
					got[i] = cs
				})
			}
			wg.Wait()
			sessions = append(sessions, got...)
			clock.Advance(time.Minute) // the batch's processes stop: idle
		}
		for _, c := range h.Status().Chats {
			if c.Servers[0].State != runtime.StateNotStarted {
				b.Fatalf("chat %s is not idle: %+v", c.ID, c.Servers[0])
			}
		}
		perChat = float64(liveHeap()-before) / chats / 1024
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
		perClosed = float64(int64(liveHeap())-int64(before)) / chats / 1024
		goruntime.KeepAlive(gw)
	}
	b.ReportMetric(perChat, "KiB/idle-chat")
	b.ReportMetric(perClosed, "KiB/chat-after-disconnect")
	if perChat >= 100 && !testservers.RaceEnabled() {
		b.Errorf("an idle chat costs %.1f KiB of gateway heap; the target is under 100 KiB", perChat)
	}
}

// Target (issue 4): 1000 calls from 20 chats in parallel, to a server with
// parallel: true, complete without error. Each chat sends its 50 calls from
// 5 goroutines at once, over Streamable HTTP.
func BenchmarkParallelCalls1000From20Chats(b *testing.B) {
	const chats, perChat, streams = 20, 50, 5
	marker := noLeaks(b)
	s := testServer("srv", "-tools", "echo,concurrency")
	s.Parallel = true
	h := newTestHost(b, testPlan(s), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: b.TempDir()})
	base, client := httpGateway(b, gw)
	sessions := make([]*mcp.ClientSession, chats)
	for i := range sessions {
		sessions[i] = connectHTTP(b, client, fmt.Sprintf("%s/chats/p%02d/mcp", base, i))
		// Start the chat's process outside the measured loop.
		if _, err := sessions[i].CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		errs, ok := 0, 0
		for ci, cs := range sessions {
			for st := range streams {
				wg.Go(func() {
					for k := range perChat / streams {
						text := fmt.Sprintf("%d/%d/%d", ci, st, k)
						res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
						mu.Lock()
						if err != nil || res.IsError || resultText(res) != text {
							errs++
							if errs < 5 {
								b.Errorf("call %s: %v %v", text, err, res)
							}
						} else {
							ok++
						}
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		if errs > 0 || ok != chats*perChat {
			b.Fatalf("%d of %d calls failed", errs, chats*perChat)
		}
	}
	b.ReportMetric(float64(chats*perChat), "calls/op")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*chats*perChat), "wall-µs/call")
}

// The gateway's cost per proxied call, in-process, over stdio (the line
// transport of `mcpc run --stdio`, on pipes) and over Streamable HTTP, to
// the same server: go test ./runtime -run XXX -bench GatewayCall
// -benchmem -memprofile mem.out. The figures include the client's own
// work, which runs in the same process; the CPU of the gateway alone,
// process against process, is cmd/mcpc/cli's BenchmarkGatewayCPUPerCall.
func BenchmarkGatewayCall(b *testing.B) {
	marker := noLeaks(b)
	h := newTestHost(b, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: b.TempDir()})
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}}
	run := func(b *testing.B, cs *mcp.ClientSession) {
		for range 50 { // the chat's process starts
			if _, err := cs.CallTool(context.Background(), params); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError || resultText(res) != "ping" {
				b.Fatalf("call: %v %v", err, res)
			}
		}
	}
	stdioWorkspace := b.TempDir() // one chat, however often the sub-benchmark runs
	b.Run("stdio", func(b *testing.B) {
		chat, err := h.Chat("stdio", stdioWorkspace)
		if err != nil {
			b.Fatal(err)
		}
		cs, served := serveLines(b, gw, chat)
		run(b, cs)
		cs.Close()
		<-served
	})
	b.Run("http", func(b *testing.B) {
		base, client := httpGateway(b, gw)
		run(b, connectHTTP(b, client, base+"/chats/h/mcp"))
	})
}
