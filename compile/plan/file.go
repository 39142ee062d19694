package plan

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// Read reads a plan file written by `mcpc plan -o`. A file that is not a
// valid plan of this mcpc's planVersion, or whose digest does not match its
// content (it was edited after compiling), comes back as positioned
// diagnostics and a nil plan: nothing may start from it.
func Read(file string, data []byte) (*Plan, []diag.Diagnostic) {
	root, d := node.ParseJSON(file, data, false)
	if d != nil {
		return nil, []diag.Diagnostic{*d}
	}
	if root.Kind != node.Object {
		return nil, []diag.Diagnostic{rules.PlanInvalid.At(root.Pos(), "a plan is a JSON object, not "+node.Describe(root), "write it with mcpc plan -o FILE")}
	}
	if m := root.Member("planVersion"); m != nil && m.Value.Kind == node.Number && m.Value.Text != fmt.Sprint(Version) {
		return nil, []diag.Diagnostic{rules.PlanInvalid.At(m.Value.Pos(),
			fmt.Sprintf("planVersion %s: this mcpc reads planVersion %d", m.Value.Text, Version),
			"compile the plan again with this mcpc (mcpc plan -o FILE)")}
	}
	v, err := schema.Acquire()
	if err != nil {
		return nil, []diag.Diagnostic{rules.PlanInvalid.At(root.Pos(), err.Error(), "")}
	}
	defer schema.Release(v)
	def := schema.PlanFile
	if m := root.Member("profile"); m != nil && m.Value.Kind == node.String && m.Value.Text == ProfileCraftbot {
		def = schema.CraftbotPlan
	}
	ds := v.Check(def, root, "plan", nil)
	if len(ds) > 0 {
		for i := range ds {
			ds[i] = rules.PlanInvalid.Claim(ds[i])
		}
		diag.Sort(ds)
		return nil, ds
	}
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&p); err != nil {
		return nil, []diag.Diagnostic{rules.PlanInvalid.At(root.Pos(), "the plan does not decode: "+err.Error(), "")}
	}
	want := p.Digest
	if err := p.Seal(); err != nil || p.Digest != want {
		m := root.Member("digest")
		return nil, []diag.Diagnostic{rules.PlanInvalid.At(m.Value.Pos(),
			"the digest does not match the plan's content: the file was changed after mcpc compiled it",
			"compile the plan again (mcpc plan -o FILE) instead of editing it")}
	}
	return &p, nil
}
