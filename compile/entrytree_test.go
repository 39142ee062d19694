package compile

import (
	"sync"
	"testing"
)

// A compiled entry keeps its tree packed, and its readers see one tree:
// Node gives the same tree at every call, from any goroutine, and the
// diagnostics by server (which walk every entry) keep none of them.
func TestEntryNodeIsOneTree(t *testing.T) {
	opts, files := appSettingsOf(`{"Mcp": {"Servers": {"a": {"Command": "x", "Args": ["-y"]}, "b": {"Command": "y"}}}}`)
	opts.CleanEnv, opts.AgentDir, opts.ReadFile = true, "agent", fakeFS(files)
	res, err := Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	res.DiagnosticsByServer()
	for _, e := range res.Entries {
		if e.tree != nil || e.packed.IsZero() || e.unpacked != nil {
			t.Fatalf("%s: not packed after the compilation, or unpacked by the diagnostics by server", e.Name)
		}
		trees := make([]any, 4)
		var wg sync.WaitGroup
		for i := range trees {
			wg.Go(func() { trees[i] = e.Node() })
		}
		wg.Wait()
		for _, tree := range trees {
			if tree != e.Node() || e.Node().Get(FieldCommand) == nil {
				t.Errorf("%s: Node gave another tree", e.Name)
			}
		}
	}
}
