package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A first discovery an early start took (adoptFirst) is not started again
// by what asks for it meanwhile (a listing's ensure, a reload's), and is
// ended once, by the start: with its list, or, for a server a reload
// retired meanwhile, without a discovery of its own.
func TestAdoptedDiscoveryEndsOnce(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	startLog := filepath.Join(t.TempDir(), "starts")
	h := newTestHost(t, testPlan(testServer("a", "-tools", "echo", "-start-log", startLog),
		testServer("b", "-tools", "echo", "-start-log", startLog)), HostOptions{Env: testEnv(marker)})
	a, b := h.servers()[0], h.servers()[1]

	done := a.adoptFirst()
	if done == nil || a.adoptFirst() != nil {
		t.Fatal("adoptFirst: the first takes the discovery, a second does not")
	}
	if got := a.ensure(); got != done {
		t.Fatal("ensure did not wait for the adopted discovery")
	}
	a.adopted(done, &Discovery{Tools: []*mcp.Tool{{Name: "listed", InputSchema: map[string]any{"type": "object"}}}}, "c")
	<-done
	if d := h.Status().Servers[0]; d.State != "ok" || d.Discoveries != 1 || d.Tools != 1 {
		t.Errorf("a: %+v, want ok, 1 discovery, 1 tool", d)
	}

	done = b.adoptFirst()
	b.retired.Store(true)
	b.adopted(done, nil, "c")
	<-done
	if d := h.Status().Servers[1]; !strings.HasPrefix(d.State, "failed: ") {
		t.Errorf("b, retired: %+v, want failed", d)
	}
	h.Close()
	if _, err := os.Stat(startLog); err == nil {
		t.Errorf("a process started: %q", lines(t, startLog))
	}
}
