package compile

import (
	"testing"

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
	if _, err := Compile(opts); err != nil { // schemas compiled, pools filled
		t.Fatal(err)
	}
	var res *Result
	allocated := testservers.AllocatedBytes(func() {
		var err error
		if res, err = Compile(opts); err != nil {
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

// With KeepPlanJSON, PlanJSON gives the bytes Plan.Canonical gives, digest
// included, without encoding the plan a second time (sealing it encoded it
// once already): `mcpc plan` encoded every plan twice.
func TestPlanJSONIsTheCanonicalPlanEncodedOnce(t *testing.T) {
	opts, _ := deployment(300)
	opts.KeepPlanJSON = true
	res, err := Compile(opts)
	if err != nil || res.Plan == nil {
		t.Fatalf("%v %v", err, res.Diagnostics)
	}
	want, err := res.Plan.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	allocated := testservers.AllocatedBytes(func() {
		if got, err = res.PlanJSON(); err != nil {
			t.Fatal(err)
		}
	})
	if string(got) != string(want) {
		t.Fatalf("PlanJSON differs from Plan.Canonical:\n%.300s\n---\n%.300s", got, want)
	}
	// The digest is the one plan.Seal computes.
	again := *res.Plan
	if err := again.Seal(); err != nil || again.Digest != res.Plan.Digest {
		t.Errorf("digest %s, plan.Seal gives %s (%v)", res.Plan.Digest, again.Digest, err)
	}
	if !testservers.RaceEnabled() && allocated > uint64(len(want))*3/2 {
		t.Errorf("PlanJSON allocated %d bytes for a %d-byte plan: it encoded the plan again", allocated, len(want))
	}
	if _, err := (&Result{}).PlanJSON(); err == nil {
		t.Error("PlanJSON without a plan gave no error")
	}
}

// Without KeepPlanJSON (validate, explain, tools) a compilation holds no
// copy of the plan's encoding: the digest is computed as the plan is
// encoded, and the copy held was a quarter of the memory of a 50 000-server
// compilation. PlanJSON still gives the canonical plan, encoded again.
func TestCompileHoldsNoPlanEncodingUnlessAsked(t *testing.T) {
	opts, _ := deployment(300)
	res, err := Compile(opts)
	if err != nil || res.Plan == nil {
		t.Fatalf("%v %v", err, res.Diagnostics)
	}
	if res.unsealed != nil {
		t.Errorf("the result holds the plan's encoding (%d bytes)", len(res.unsealed))
	}
	want, err := res.Plan.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.PlanJSON()
	if err != nil || string(got) != string(want) {
		t.Fatalf("PlanJSON differs from Plan.Canonical (%v):\n%.300s\n---\n%.300s", err, got, want)
	}
	again := *res.Plan
	if err := again.Seal(); err != nil || again.Digest != res.Plan.Digest {
		t.Errorf("digest %s, plan.Seal gives %s (%v)", res.Plan.Digest, again.Digest, err)
	}
}
