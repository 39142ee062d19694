package plan

import (
	"strings"
	"testing"
)

// A plan is no union of both profiles' fields: a read plan is checked
// against its own profile's definition, so a field of the other profile
// is refused, positioned, whatever it holds.
func TestReadRefusesTheOtherProfilesFields(t *testing.T) {
	yes := true
	prompt := "p"
	volcanic := &Plan{PlanVersion: Version, Profile: ProfileVolcanic, Sources: []SourceRef{}, Shadowed: []Shadowed{},
		Servers: []Server{{Name: "a", Command: "npx", Args: []string{}, Env: map[string]*string{}, Transport: TransportStdio,
			Enabled: true, PromptSection: &prompt, StderrLevel: "Warning", ToolPrefix: "a_", CallTimeoutSeconds: 60,
			StartupTimeoutSeconds: 30, Origin: Origin{Source: "settings", Path: "settings.json", Line: 1, Column: 1}}}}
	craftbot := &Plan{PlanVersion: Version, Profile: ProfileCraftbot, AutoConnect: &yes, Sources: []SourceRef{}, Shadowed: []Shadowed{},
		Skipped: []Skipped{}, Servers: []Server{{Name: "a", Command: "npx", Args: []string{}, Env: map[string]*string{}, Transport: TransportStdio,
			Enabled: true, ActionSet: "mcp_a", Origin: Origin{Source: "config", Path: "mcp_config.json", Line: 1, Column: 1}}}}
	for _, c := range []struct {
		name  string
		p     *Plan
		after string // the line a foreign field is written after
		field string
	}{
		{"volcanic plan with autoConnect", volcanic, "{\n", `"autoConnect": true,`},
		{"volcanic server with actionSet", volcanic, `"args": [],`, `"actionSet": "mcp_a",`},
		{"volcanic server with url", volcanic, `"args": [],`, `"url": "https://example.com/sse",`},
		{"craftbot plan with a server's cwd", craftbot, `"args": [],`, `"cwd": "/tmp",`},
		{"craftbot server with toolPrefix", craftbot, `"args": [],`, `"toolPrefix": "a_",`},
		{"craftbot server with a timeout", craftbot, `"args": [],`, `"callTimeoutSeconds": 60,`},
	} {
		if err := c.p.Seal(); err != nil {
			t.Fatal(err)
		}
		b, err := c.p.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if p, ds := Read("plan.json", b); p == nil {
			t.Fatalf("%s: the plan as written is refused: %v", c.name, ds)
		}
		text := strings.Replace(string(b), c.after, c.after+"\n"+c.field, 1)
		if text == string(b) {
			t.Fatalf("%s: %q is not in the plan", c.name, c.after)
		}
		p, ds := Read("plan.json", []byte(text))
		key := c.field[:strings.Index(c.field, ":")]
		if p != nil || len(ds) == 0 || ds[0].Rule != "plan-invalid" || !strings.Contains(ds[0].Message, "unknown field "+key) || ds[0].Pos().Line == 0 {
			t.Errorf("%s: plan %v, diagnostics %v", c.name, p != nil, ds)
		}
	}
}
