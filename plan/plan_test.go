package plan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The plan's types declare their fields in sorted key order so that they
// encode canonically without a second pass; this guards that order, with
// every field of every type set so that none is left out of the check.
func TestPlanEncodesCanonically(t *testing.T) {
	v, section := "v", "section"
	origin := Origin{Column: 3, Key: "Mcp__Servers__a__Command", Line: 2, Path: "appsettings.json", Source: "appsettings"}
	p := &Plan{
		Digest: "sha256:00", PlanVersion: Version, Profile: "volcanic",
		Servers: []Server{{
			Args: []string{"-y"}, CallTimeoutSeconds: 1, Command: "npx", Cwd: "${workspace}", Enabled: true,
			Env: map[string]*string{"B": &v, "A": nil}, IdleTimeoutSeconds: 2, Name: "a", Origin: origin,
			Parallel: true, PromptSection: &section, StartupTimeoutSeconds: 3, StderrLevel: "Warning",
			ToolPrefix: "a_", Transport: "stdio",
		}},
		Shadowed: []Shadowed{{Name: "a", Origin: origin, Winner: origin}},
		Sources:  []SourceRef{{Kind: "appsettings", Path: "appsettings.json"}},
	}
	direct, err := p.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(p)
	generic, err := canonicalJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(direct, generic) {
		t.Errorf("plan fields are not declared in sorted key order:\n%s\nvs\n%s", direct, generic)
	}
}
