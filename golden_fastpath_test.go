package mcpc_test

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/node"
	"github.com/mcpc-dev/mcpc/schema"
)

// TestGoldenFastPathAgreesWithCUE runs every golden case (validate and plan,
// or the case's own command) with the schema's cross-check on: each value
// that the fast path of schema.Check settles without CUE is checked by CUE
// as well, and the two lists of diagnostics must be equal. TestGolden shows
// that the outputs did not change; this shows that no value the fast path
// accepted would have drawn a diagnostic from CUE.
func TestGoldenFastPathAgreesWithCUE(t *testing.T) {
	var mu sync.Mutex
	settled := 0
	var diffs []string
	defer schema.SetCrossCheck(func(def string, data *node.Node, fast, viaCUE []diag.Diagnostic) {
		mu.Lock()
		defer mu.Unlock()
		settled++
		if !reflect.DeepEqual(fast, viaCUE) {
			diffs = append(diffs, fmt.Sprintf("%s at %s: fast path %v, CUE %v", def, data.Pos(), fast, viaCUE))
		}
	})()
	for _, c := range loadCases(t) {
		if c.command != nil {
			run(c.command...)
			continue
		}
		run(append([]string{"validate"}, c.args...)...)
		run(append([]string{"plan"}, c.args...)...)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, d := range diffs {
		t.Error(d)
	}
	if settled < 100 {
		t.Errorf("the fast path settled only %d values in the golden cases", settled)
	}
	t.Logf("%d values settled by the fast path, each confirmed by CUE", settled)
}
