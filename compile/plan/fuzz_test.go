package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diagtest"
)

// FuzzReadPlan: a plan file never panics the reader, and every problem is
// positioned inside it.
func FuzzReadPlan(f *testing.F) {
	matches, _ := filepath.Glob(filepath.Join("..", "..", "golden", "*.plan.json"))
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ds := Read("plan.json", data)
		if (p == nil) == (len(ds) == 0) {
			t.Fatalf("plan %v with %d diagnostics", p != nil, len(ds))
		}
		diagtest.CheckPositions(t, ds, map[string][]string{"plan.json": diagtest.Lines(data)})
	})
}
