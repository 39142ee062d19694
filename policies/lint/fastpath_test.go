package lint

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies"
)

// The fast path of the packs finds, byte for byte, what CUE finds on the
// packs' own test cases and on every fixture that is a deployment (both
// shipped packs on each), and decides every rule there whose input is a
// plan: CUE runs only to confirm it.
func TestPacksFastPathMatchesCUEOnFixtures(t *testing.T) {
	var mu sync.Mutex
	decided, left := 0, map[string]bool{}
	restore := policies.SetCrossCheck(func(c policies.CrossCheck) {
		mu.Lock()
		defer mu.Unlock()
		if len(c.LeftToCUE) > 0 {
			left[fmt.Sprintf("%s %v", c.Pack, c.LeftToCUE)] = true
		} else {
			decided++
		}
		if !reflect.DeepEqual(c.Fast, c.ViaCUE) || len(c.CUEDiagnostics) > 0 {
			t.Errorf("pack %s:\n fast path %v\n CUE       %v %v", c.Pack, c.Fast, c.ViaCUE, c.CUEDiagnostics)
		}
	})
	defer restore()
	for _, dir := range []string{"../baseline", "../strict"} {
		if _, _, ds, err := TestPack(dir); err != nil || len(ds) > 0 {
			t.Fatalf("%s: %v %v", dir, err, ds)
		}
	}
	packs, err := policies.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("../../fixtures/*")
	linted := 0
	for _, dir := range dirs {
		found, ok := Of(dir)
		if !ok {
			continue
		}
		var d *Deployment
		if found.File != "" {
			var ds []diag.Diagnostic
			if d, ds = Load(found.File); len(ds) > 0 {
				continue // an mcpc.cue that does not load is a case of its own
			}
		}
		opts, err := CompileOptions(d, dir, Flags{})
		if err != nil {
			continue
		}
		if _, err := Run(Options{Compile: opts, Deployment: d, Packs: packs}); err != nil {
			continue // an input that cannot be read: exit 2, no plan
		}
		linted++
	}
	mu.Lock()
	defer mu.Unlock()
	if linted < 50 || decided < 2*linted {
		t.Errorf("%d fixtures linted, %d evaluations decided by the fast path: too few to mean anything", linted, decided)
	}
	for l := range left {
		t.Errorf("the fast path left rules to CUE: %s", l)
	}
	t.Logf("%d fixtures linted; %d evaluations decided by the fast path, each confirmed by CUE", linted, decided)
}
