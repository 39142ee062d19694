package gateway

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// The cost of the gateway on a pass-through request: the same request to
// the same fixture server (the conformance fixture, over stdio), once
// directly and once through the gateway (a client on an in-memory
// transport, as `mcpc run --stdio` serves it, to the chat's process),
// alternating within one loop so that both see the same machine load.
// Reported: µs per request of each path, and proxied/direct, the ratio.
//
//	go test -run '^$' -bench BenchmarkPassThroughLatency -benchtime 2000x ./runtime
func BenchmarkPassThroughLatency(b *testing.B) {
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, cs *mcp.ClientSession, prompt string) error
	}{
		{"resources-read", func(ctx context.Context, cs *mcp.ClientSession, _ string) error {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
			return err
		}},
		{"prompts-get", func(ctx context.Context, cs *mcp.ClientSession, prompt string) error {
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
			return err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			direct, proxied := passThroughPair(b)
			ctx := context.Background()
			// Warm both paths: the chat's process is started and its
			// prompts and resources listed by the first request.
			for range 3 {
				if err := tc.call(ctx, direct, "test_prompt_with_arguments"); err != nil {
					b.Fatal(err)
				}
				if err := tc.call(ctx, proxied, "p_test_prompt_with_arguments"); err != nil {
					b.Fatal(err)
				}
			}
			var dDirect, dProxied time.Duration
			n := 0
			for b.Loop() {
				n++
				start := time.Now()
				if err := tc.call(ctx, direct, "test_prompt_with_arguments"); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if err := tc.call(ctx, proxied, "p_test_prompt_with_arguments"); err != nil {
					b.Fatal(err)
				}
				dDirect += mid.Sub(start)
				dProxied += time.Since(mid)
			}
			b.ReportMetric(float64(dDirect.Microseconds())/float64(n), "µs-direct/op")
			b.ReportMetric(float64(dProxied.Microseconds())/float64(n), "µs-proxied/op")
			b.ReportMetric(float64(dProxied)/float64(dDirect), "proxied/direct")
		})
	}
}

// passThroughPair starts the conformance fixture twice: once as a direct
// client's server, once as the server of a gateway's chat (prefix p_),
// and returns a client session on each.
func passThroughPair(b *testing.B) (direct, proxied *mcp.ClientSession) {
	marker := noLeaks(b)
	bin := testservers.Conformance(b)
	ctx := context.Background()
	cmd := exec.Command(bin)
	cmd.Dir = b.TempDir()
	cmd.Env = []string{leakMarkerVar + "=" + marker}
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })

	s := testServer("p")
	s.Command = bin
	s.ToolPrefix = "p_"
	h := newTestHost(b, testPlan(s), runtime.HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{Version: "bench"})
	b.Cleanup(gw.Close)
	chat, err := h.Chat("bench", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- gw.ServeTransport(ctx, chat, st) }()
	proxied, err = mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		proxied.Close()
		<-served
	})
	return direct, proxied
}
