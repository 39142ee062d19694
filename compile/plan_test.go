package compile

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The plan's types declare their fields in sorted key order so that they
// encode canonically without a second pass; this guards that order.
func TestPlanEncodesCanonically(t *testing.T) {
	opts, _ := deployment(12)
	res, err := Compile(opts)
	if err != nil || res.Plan == nil {
		t.Fatalf("%v %v", err, res.Diagnostics)
	}
	res.Plan.Shadowed = append(res.Plan.Shadowed, Shadowed{Name: "x", Origin: Origin{Source: "env", Key: "K"}})
	direct, err := res.Plan.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.Plan)
	generic, err := canonicalJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(direct, generic) {
		t.Errorf("plan fields are not declared in sorted key order:\n%s\nvs\n%s", direct, generic)
	}
}
