package mcpc_test

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/schema"
)

// crossCheckCUE turns the schema's cross-check on for the golden cases
// (TestGolden): each value that the fast path of schema.Check settles
// without CUE, or checks part by part, is checked by CUE as a whole as
// well, and the two lists of diagnostics must be equal. The goldens show that the outputs did not change; this
// shows that no value the fast path accepted would have drawn a diagnostic
// from CUE. (One run of the cases does both: running them twice, once for
// each, cost the suite a run of every case under the race detector.)
// The returned function turns it off and reports; all says whether every
// case ran (not a -run selection), for the check that the fast path
// settled enough values to mean something.
func crossCheckCUE(t *testing.T) (report func(all bool)) {
	var mu sync.Mutex
	settled := 0
	var diffs []string
	restore := schema.SetCrossCheck(func(def string, data *node.Node, fast, viaCUE []diag.Diagnostic) {
		mu.Lock()
		defer mu.Unlock()
		settled++
		// In the order every report prints them: the check by parts
		// finds them in another order than CUE's walk of the value.
		fast, viaCUE = slices.Clone(fast), slices.Clone(viaCUE)
		diag.Sort(fast)
		diag.Sort(viaCUE)
		if !reflect.DeepEqual(fast, viaCUE) {
			diffs = append(diffs, fmt.Sprintf("%s at %s: fast path %v, CUE %v", def, data.Pos(), fast, viaCUE))
		}
	})
	return func(all bool) {
		restore()
		mu.Lock()
		defer mu.Unlock()
		for _, d := range diffs {
			t.Error(d)
		}
		if all && settled < 100 {
			t.Errorf("the fast path settled only %d values in the golden cases", settled)
		}
		t.Logf("%d values checked by the fast path, each confirmed by CUE", settled)
	}
}
