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

// A craftbot plan is written through its own view: canonical (sorted keys),
// without the volcanic fields, and it reads back with its digest intact.
func TestCraftbotPlanCanonicalAndReadBack(t *testing.T) {
	on, ref := true, ConfigRef("GITHUB_TOKEN")
	empty := ""
	origin := Origin{Column: 5, Line: 3, Path: "mcp_config.json", Source: "config"}
	p := &Plan{
		AutoConnect: &on, PlanVersion: Version, Profile: ProfileCraftbot,
		Servers: []Server{{
			ActionSet: "mcp_github", Args: []string{"-y", "x"}, Command: "npx", Description: "d <b>", Enabled: true,
			Env: map[string]*string{"GITHUB_TOKEN": &ref, "EMPTY": &empty}, Name: "github", Origin: origin, Transport: "stdio",
		}, {ActionSet: "mcp_sentry", Name: "sentry", Origin: origin, Transport: "sse", URL: "https://s.example.com/sse"}},
		Shadowed: []Shadowed{{Name: "github", Origin: origin, Winner: origin}},
		Skipped:  []Skipped{{Name: "bad", Origin: origin, Rule: "cb-transport"}},
		Sources:  []SourceRef{{Kind: "config", Path: "mcp_config.json"}},
	}
	if err := p.Seal(); err != nil {
		t.Fatal(err)
	}
	direct, err := p.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	generic, err := CanonicalJSON(p.craftbotView())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(direct, generic) {
		t.Errorf("craftbot plan fields are not declared in sorted key order:\n%s\nvs\n%s", direct, generic)
	}
	for _, volcanicOnly := range []string{"cwd", "toolPrefix", "startupTimeoutSeconds", "stderrLevel", "promptSection", "parallel"} {
		if bytes.Contains(direct, []byte(`"`+volcanicOnly+`"`)) {
			t.Errorf("craftbot plan has the volcanic field %s:\n%s", volcanicOnly, direct)
		}
	}
	back, ds := Read("plan.json", direct)
	if len(ds) > 0 {
		t.Fatalf("craftbot plan does not read back: %v\n%s", ds, direct)
	}
	again, _ := back.Canonical()
	if !bytes.Equal(again, direct) {
		t.Errorf("read back differs:\n%s\nvs\n%s", again, direct)
	}
	// A craftbot plan edited to carry a null env value is not a plan.
	edited := bytes.Replace(direct, []byte(`"EMPTY": ""`), []byte(`"EMPTY": null`), 1)
	if _, ds := Read("plan.json", edited); len(ds) == 0 {
		t.Errorf("an edited craftbot plan was accepted")
	}
}

// The streamed encoding of a volcanic plan is byte for byte what
// encoding/json gives for the whole plan, whatever the plan holds.
func TestCanonicalStreamsAsEncodingJSON(t *testing.T) {
	v, html := "v", "<a & b>\u2028é"
	origin := Origin{Column: 3, Line: 2, Path: "app<s>.json", Source: "appsettings"}
	full := Server{Args: []string{"-y", html}, CallTimeoutSeconds: 1, Command: "npx", Cwd: "${workspace}", Enabled: true,
		Env: map[string]*string{"B": &v, "A": nil, "C": &html}, Name: "a", Origin: origin, PromptSection: &html, Transport: "stdio"}
	yes := true
	for i, p := range []*Plan{
		{PlanVersion: Version, Profile: "volcanic"},
		{PlanVersion: Version, Profile: "volcanic", Servers: []Server{}, Shadowed: []Shadowed{}, Sources: []SourceRef{}},
		{Digest: "sha256:00", PlanVersion: Version, Profile: "volcanic", Servers: []Server{full, {Name: "b"}},
			Shadowed: []Shadowed{{Name: "a", Origin: origin, Winner: origin}}, Sources: []SourceRef{{Kind: "env"}}},
		{AutoConnect: &yes, PlanVersion: 2, Profile: "volcanic", Servers: []Server{full}, Skipped: []Skipped{{Name: "x"}}},
	} {
		got, err := p.streamCanonical()
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeCanonical(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("plan %d: streamed\n%s\nencoding/json\n%s", i, got, want)
		}
		var written bytes.Buffer
		if err := p.WriteCanonical(&written); err != nil || !bytes.Equal(written.Bytes(), want) {
			t.Errorf("plan %d: WriteCanonical (%v)\n%s\nencoding/json\n%s", i, err, written.Bytes(), want)
		}
	}
}
