package testmain

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
)

// skipped are the tests of this binary skipped for lack of a prerequisite,
// by reason.
var skipped struct {
	sync.Mutex
	by map[string][]string
}

// Skip skips t because something it needs is not installed, and records
// why: a passing `go test` shows a skip only with -v, so the binary prints
// the reasons once at its end (Summary), and CI, which installs
// everything, sets the MCPC_REQUIRE_* variable under which the caller
// fails instead of calling Skip.
func Skip(t testing.TB, reason string) {
	t.Helper()
	skipped.Lock()
	if skipped.by == nil {
		skipped.by = map[string][]string{}
	}
	skipped.by[reason] = append(skipped.by[reason], t.Name())
	skipped.Unlock()
	t.Skip(reason)
}

// Summary writes one line naming the tests Skip skipped and why; nothing
// when none was.
func Summary(w io.Writer) {
	skipped.Lock()
	defer skipped.Unlock()
	if len(skipped.by) == 0 {
		return
	}
	reasons := make([]string, 0, len(skipped.by))
	for r := range skipped.by {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	var parts []string
	n := 0
	for _, r := range reasons {
		names := append([]string(nil), skipped.by[r]...)
		sort.Strings(names)
		n += len(names)
		parts = append(parts, strings.Join(names, ", ")+": "+r)
	}
	tests := "tests"
	if n == 1 {
		tests = "test"
	}
	fmt.Fprintf(w, "mcpc: %d %s skipped for lack of a prerequisite (MCPC_REQUIRE_NPM, MCPC_REQUIRE_BROWSER, MCPC_REQUIRE_TOOLS=1 make them fail): %s\n", n, tests, strings.Join(parts, "; "))
}
