package volcanic

import (
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// Compiling a valid deployment allocates a bounded amount per server. A CUE
// build and unify per entry allocated tens of KB per server (most of a
// validation's allocations, and its GC); looking each .NET configuration key
// up from the root, with an upper-cased copy per level, and decoding every
// string literal through encoding/json again added more.
func TestCompileAllocatesLittlePerServer(t *testing.T) {
	if testservers.RaceEnabled() {
		t.Skip("the race detector changes allocations")
	}
	const n = 3000
	opts, _ := deployment(n)
	if _, err := compile.Compile(opts); err != nil { // schemas compiled, pools filled
		t.Fatal(err)
	}
	var res *compile.Result
	allocated := testservers.AllocatedBytes(func() {
		var err error
		if res, err = compile.Compile(opts); err != nil {
			t.Fatal(err)
		}
	})
	if res.Plan == nil || len(res.Plan.Servers) != n+1 {
		t.Fatalf("plan: %v", res.Diagnostics)
	}
	t.Logf("%d bytes per server", allocated/n)
	if per := allocated / n; per > limitPerServer {
		t.Errorf("compiling %d servers allocated %d KB per server, want at most %d KB", n, per>>10, limitPerServer>>10)
	}
}

const limitPerServer = 24 << 10
