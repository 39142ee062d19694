package runtime

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A tool named like a built-in is reported once, however often the tool
// table is rebuilt (each discovery and each listing rebuilds it).
func TestBuiltinConflictLoggedOnce(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	a := testServer("alpha", "-tools", "echo,read")
	b := testServer("beta", "-tools", "echo")
	b.ToolPrefix = "b_"
	var log logRecorder
	h := newTestHost(t, testPlan(a, b), HostOptions{Env: testEnv(marker), Builtins: []string{"read"}, Log: log.log})
	c, err := h.Chat("c", filepath.Join(dir, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Tools(context.Background()); err != nil {
			t.Fatal(err)
		}
		h.rebuildTable()
	}
	if n := strings.Count(log.text(), "[tool-builtin-conflict]"); n != 1 {
		t.Errorf("tool-builtin-conflict logged %d times, want 1:\n%s", n, log.text())
	}
}
