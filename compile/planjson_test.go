package compile_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	_ "github.com/mcpc-dev/mcpc/compile/volcanic"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// deployment is settings.json with n servers, in a directory of t's.
func deployment(t *testing.T, n int) compile.Options {
	var b strings.Builder
	b.WriteString("{\"mcpServers\": {\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `"s%05d": {"command": "npx", "args": ["-y", "@scope/server-%d@1.0.0", "${workspace}"], "env": {"MODE": "fast"}}`, i, i)
	}
	b.WriteString("\n}}\n")
	dir := t.TempDir()
	files := map[string][]byte{filepath.Join(dir, "settings.json"): []byte(b.String())}
	read := func(p string) ([]byte, error) {
		if data, ok := files[p]; ok {
			return data, nil
		}
		return nil, fmt.Errorf("open %s: no such file", p)
	}
	return compile.Options{CleanEnv: true, AgentDir: dir, HomeDir: dir, ReadFile: read}
}

// With KeepPlanJSON, PlanJSON gives the bytes Plan.Canonical gives, digest
// included, without encoding the plan a second time (sealing it encoded it
// once already): `mcpc plan` encoded every plan twice.
func TestPlanJSONIsTheCanonicalPlanEncodedOnce(t *testing.T) {
	opts := deployment(t, 300)
	opts.KeepPlanJSON = true
	res, err := compile.Compile(opts)
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
	if _, err := (&compile.Result{}).PlanJSON(); err == nil {
		t.Error("PlanJSON without a plan gave no error")
	}
}

// Without KeepPlanJSON (validate, explain, tools) a compilation holds no
// copy of the plan's encoding: the digest is computed as the plan is
// encoded, and a copy held would be much of the memory of a large
// compilation. PlanJSON still gives the canonical plan, encoded again.
func TestCompileHoldsNoPlanEncodingUnlessAsked(t *testing.T) {
	opts := deployment(t, 300)
	res, err := compile.Compile(opts)
	if err != nil || res.Plan == nil {
		t.Fatalf("%v %v", err, res.Diagnostics)
	}
	if compile.HoldsPlanEncoding(res) {
		t.Errorf("the result holds the plan's encoding (%d bytes)", len(compile.PlanEncoding(res)))
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
