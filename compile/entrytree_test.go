package compile

import (
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/node"
)

// A packed entry's readers see one tree: Node gives the same tree at every
// call, from any goroutine, and a reader of every entry (NodeIn, as the
// merge and the diagnostics by server read) keeps none.
func TestEntryNodeIsOneTree(t *testing.T) {
	tree, d := node.ParseJSON("settings.json", []byte(`{"command": "x", "args": ["-y"]}`), false)
	if d != nil {
		t.Fatal(d)
	}
	e := &Entry{Name: "a"}
	e.SetNode(tree)
	e.Pack()
	var scratch node.Scratch
	if n := e.NodeIn(&scratch); n == nil || n.Get("command") == nil {
		t.Fatal("NodeIn lost the tree")
	}
	if e.tree != nil || e.packed.IsZero() || e.unpacked != nil {
		t.Fatal("not packed, or kept unpacked by NodeIn")
	}
	trees := make([]*node.Node, 4)
	var wg sync.WaitGroup
	for i := range trees {
		wg.Go(func() { trees[i] = e.Node() })
	}
	wg.Wait()
	for _, got := range trees {
		if got != e.Node() || got.Get("command") == nil {
			t.Error("Node gave another tree")
		}
	}
}
