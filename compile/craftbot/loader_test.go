package craftbot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// Each case is one entry read as CraftBot 605efb4's loader reads it
// (agent_core/core/impl/mcp/config.py: no type checked, Python truthiness)
// and starts it (server.py: a subprocess call that refuses what is not a
// string): whether it loads, whether it can start, what runs, and the
// rules reported with their severity.
func TestCheckReadsEntriesAsTheHost(t *testing.T) {
	for _, c := range []struct {
		name, entry string
		// state is skip=<rule> or loads [cannot-start] enabled=<bool> name=<name> args=<args>
		state string
		rules []string
	}{
		{"no transport is stdio", `{"name": "fs", "command": "npx", "args": ["-y", "x"]}`,
			`loads enabled=true name="fs" command="npx" args=["-y" "x"]`, nil},
		{"enabled false string starts", `{"name": "fs", "command": "npx", "enabled": "false"}`,
			`loads enabled=true name="fs" command="npx" args=[]`, []string{"error cb-field-type"}},
		{"enabled 0 is off", `{"name": "fs", "command": "npx", "enabled": 0}`,
			`loads enabled=false name="fs" command="npx" args=[]`, []string{"warning cb-field-type"}},
		{"enabled null is off", `{"name": "fs", "command": "npx", "enabled": null}`,
			`loads enabled=false name="fs" command="npx" args=[]`, []string{"warning cb-field-type"}},
		{"enabled NaN is on", `{"name": "fs", "command": "npx", "enabled": NaN}`,
			`loads enabled=true name="fs" command="npx" args=[]`, []string{"warning cb-field-type"}},
		{"enabled -Infinity is on", `{"name": "fs", "command": "npx", "enabled": -Infinity}`,
			`loads enabled=true name="fs" command="npx" args=[]`, []string{"warning cb-field-type"}},
		{"name Infinity", `{"name": Infinity, "command": "npx", "args": ["NaN"], "enabled": 1e400}`,
			`loads enabled=true name="inf" command="npx" args=["NaN"]`, []string{"error cb-name-invalid", "warning cb-field-type"}},
		{"name with space and dot", `{"name": "my server.v2", "command": "npx"}`,
			`loads enabled=true name="my server.v2" command="npx" args=[]`, nil},
		{"61 characters", `{"name": "` + strings.Repeat("n", 61) + `", "command": "npx"}`,
			`loads enabled=true name="` + strings.Repeat("n", 61) + `" command="npx" args=[]`, nil},
		{"empty name loads", `{"name": "", "command": "npx"}`,
			`loads enabled=true name="" command="npx" args=[]`, nil},
		{"number name", `{"name": 42, "command": "npx"}`,
			`loads enabled=true name="42" command="npx" args=[]`, []string{"error cb-name-invalid"}},
		{"float name", `{"name": 1.0, "command": "npx", "enabled": false}`,
			`loads enabled=false name="1.0" command="npx" args=[]`, []string{"warning cb-name-invalid"}},
		{"null name", `{"name": null, "command": "npx"}`,
			`loads enabled=true name="None" command="npx" args=[]`, []string{"error cb-name-invalid"}},
		{"bool name", `{"name": true, "command": "npx"}`,
			`loads enabled=true name="True" command="npx" args=[]`, []string{"error cb-name-invalid"}},
		{"quote in name", `{"name": "a\"b", "command": "npx"}`,
			`loads enabled=true name="a\"b" command="npx" args=[]`, []string{"error cb-name-invalid"}},
		{"backslash in name", `{"name": "a\\b", "command": "npx"}`,
			`loads enabled=true name="a\\b" command="npx" args=[]`, []string{"error cb-name-invalid"}},
		{"line break in name", `{"name": "a\nb", "command": "npx", "enabled": false}`,
			`loads enabled=false name="a\nb" command="npx" args=[]`, []string{"warning cb-name-invalid"}},
		{"list name", `{"name": ["a"], "command": "npx"}`,
			`loads cannot-start enabled=true name="['a']" command="npx" args=[]`, []string{"error cb-cannot-start"}},
		{"missing name", `{"command": "npx"}`, `skip=cb-name-invalid`, []string{"error cb-name-invalid", "warning cb-edit-drops"}},
		{"missing name disabled", `{"command": "npx", "enabled": false}`, `skip=cb-name-invalid`, []string{"warning cb-name-invalid", "warning cb-edit-drops"}},
		{"transport null", `{"name": "a", "transport": null, "command": "npx"}`, `skip=cb-transport`, []string{"error cb-transport", "warning cb-edit-drops"}},
		{"transport 5", `{"name": "a", "transport": 5, "command": "npx", "enabled": 0}`, `skip=cb-transport`,
			[]string{"warning cb-transport", "warning cb-edit-drops"}},
		{"transport http", `{"name": "a", "transport": "http", "url": "https://x"}`, `skip=cb-transport`, []string{"error cb-transport", "warning cb-edit-drops"}},
		{"transport list", `{"name": "a", "transport": ["stdio"], "command": "npx"}`, `skip=cb-transport`, []string{"error cb-transport", "warning cb-edit-drops"}},
		{"command empty", `{"name": "a", "command": ""}`, `skip=cb-missing-command`, []string{"error cb-missing-command", "warning cb-edit-drops"}},
		{"command 0", `{"name": "a", "command": 0}`, `skip=cb-missing-command`, []string{"error cb-missing-command", "warning cb-edit-drops"}},
		{"command empty list", `{"name": "a", "command": []}`, `skip=cb-missing-command`, []string{"error cb-missing-command", "warning cb-edit-drops"}},
		{"command null", `{"name": "a", "command": null}`, `skip=cb-missing-command`, []string{"error cb-missing-command", "warning cb-edit-drops"}},
		{"command blank", `{"name": "a", "command": " "}`,
			`loads cannot-start enabled=true name="a" command=" " args=[]`, []string{"error cb-cannot-start"}},
		{"command list", `{"name": "a", "command": ["npx", "-y", "x"]}`,
			`loads cannot-start enabled=true name="a" command="" args=[]`, []string{"error cb-cannot-start"}},
		{"command list disabled", `{"name": "a", "command": ["npx"], "enabled": false}`,
			`loads cannot-start enabled=false name="a" command="" args=[]`, []string{"warning cb-cannot-start"}},
		{"command number", `{"name": "a", "command": 7}`,
			`loads cannot-start enabled=true name="a" command="" args=[]`, []string{"error cb-cannot-start"}},
		{"args a string", `{"name": "a", "command": "npx", "args": "-y x"}`,
			`loads enabled=true name="a" command="npx" args=["-" "y" " " "x"]`, []string{"error cb-field-type"}},
		{"args null", `{"name": "a", "command": "npx", "args": null}`,
			`loads cannot-start enabled=true name="a" command="npx" args=[]`, []string{"error cb-cannot-start"}},
		{"args number", `{"name": "a", "command": "npx", "args": 3}`,
			`loads cannot-start enabled=true name="a" command="npx" args=[]`, []string{"error cb-cannot-start"}},
		{"arg not a string", `{"name": "a", "command": "npx", "args": ["-y", 1]}`,
			`loads cannot-start enabled=true name="a" command="npx" args=["-y"]`, []string{"error cb-cannot-start"}},
		{"env null", `{"name": "a", "command": "npx", "env": null}`,
			`loads cannot-start enabled=true name="a" command="npx" args=[]`, []string{"error cb-cannot-start"}},
		{"env list", `{"name": "a", "command": "npx", "env": ["A=b"]}`,
			`loads cannot-start enabled=true name="a" command="npx" args=[]`, []string{"error cb-cannot-start"}},
		{"env empty list", `{"name": "a", "command": "npx", "env": []}`,
			`loads enabled=true name="a" command="npx" args=[]`, nil},
		{"env number value", `{"name": "a", "command": "npx", "env": {"K": 1}}`,
			`loads cannot-start enabled=true name="a" command="npx" args=[]`, []string{"error cb-cannot-start"}},
		{"url blank", `{"name": "a", "transport": "sse", "url": " "}`,
			`loads cannot-start enabled=true name="a" command="" args=[]`, []string{"error cb-cannot-start"}},
		{"url empty", `{"name": "a", "transport": "sse", "url": ""}`, `skip=cb-missing-url`, []string{"error cb-missing-url", "warning cb-edit-drops"}},
		{"description number", `{"name": "a", "command": "npx", "description": 5}`,
			`loads enabled=true name="a" command="npx" args=[]`, []string{"warning cb-field-type"}},
		{"core action set", `{"name": "a", "command": "npx", "action_set_name": "core"}`,
			`loads enabled=true name="a" command="npx" args=[]`, []string{"warning cb-action-set-core"}},
		{"unknown field", `{"name": "a", "command": "npx", "headers": {"X": "y"}}`,
			`loads enabled=true name="a" command="npx" args=[]`, []string{"warning cb-edit-drops"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := `{"mcp_servers": [` + c.entry + `]}`
			cfg, ds := check(t, src, Options{})
			if len(cfg.Entries) != 1 {
				t.Fatalf("%d entries", len(cfg.Entries))
			}
			if got := entryState(cfg.Entries[0]); got != c.state {
				t.Errorf("state\n%s\nwant\n%s", got, c.state)
			}
			var got []string
			for _, d := range ds {
				got = append(got, string(d.Severity)+" "+d.Rule)
			}
			want := append([]string(nil), c.rules...)
			diagSortStrings(got)
			diagSortStrings(want)
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("rules %v, want %v: %v", got, want, ds)
			}
		})
	}
}

func entryState(e *Entry) string {
	if e.Skip != "" {
		return "skip=" + e.Skip
	}
	s := "loads"
	if e.CannotStart != "" {
		s += " cannot-start"
	}
	args := fmt.Sprintf("%q", e.Args)
	if len(e.Args) == 0 {
		args = "[]"
	}
	return s + fmt.Sprintf(" enabled=%v name=%q command=%q args=%s", e.Enabled, e.Name, e.Command, args)
}

// Files the host loads nothing from are errors that say both
// consequences: no MCP server, and the next edit's loss of every entry.
func TestCheckFilesTheHostLoadsNothingFrom(t *testing.T) {
	for _, c := range []struct{ name, src, rule string }{
		{"byte order mark", "\ufeff{\"mcp_servers\": [{\"name\": \"a\", \"command\": \"npx\"}]}", "json-syntax"},
		{"syntax error", `{"mcp_servers": [}`, "json-syntax"},
		{"invalid UTF-8", "{\"mcp_servers\": [], \"x\": \"\xff\"}", "json-syntax"},
		{"top level a list", `[]`, "type-mismatch"},
		{"servers null", `{"mcp_servers": null}`, "type-mismatch"},
		{"servers a number", `{"mcp_servers": 3}`, "type-mismatch"},
		{"servers a string", `{"mcp_servers": "fs"}`, "type-mismatch"},
		{"servers an object", `{"mcp_servers": {"fs": {}}}`, "type-mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, ds, err := Check("mcp_config.json", []byte(c.src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.LoadsNothing == "" {
				t.Errorf("the host loads this file")
			}
			errs := diag.Errors(ds)
			if len(errs) != 1 || errs[0].Rule != c.rule || !strings.Contains(errs[0].Message, "CraftBot starts with no MCP server") ||
				!strings.Contains(errs[0].Message, "saves a file that holds only the new server") {
				t.Errorf("errors %v", errs)
			}
		})
	}
	// "" and {} iterate as nothing: the host loads the file, with no server.
	for _, src := range []string{`{"mcp_servers": ""}`, `{"mcp_servers": {}}`, `{}`} {
		cfg, ds, _ := Check("mcp_config.json", []byte(src), Options{})
		if cfg.LoadsNothing != "" || len(diag.Errors(ds)) > 0 {
			t.Errorf("%s: %q %v", src, cfg.LoadsNothing, ds)
		}
	}
}

// Duplicate names as the host runs them: every entry loads, the first of
// the name is what starts for each enabled one, even when it is disabled.
func TestCheckDuplicatesStartTheFirst(t *testing.T) {
	cfg, ds := check(t, `{"mcp_servers": [
		{"name": "fs", "command": "first", "enabled": false},
		{"name": "fs", "command": "second", "enabled": true},
		{"name": "gh", "command": "a"},
		{"name": "gh", "command": "b"},
		{"name": "off", "command": "a"},
		{"name": "off", "command": "b", "enabled": false}]}`, Options{})
	e := cfg.Entries
	for i, want := range []*Entry{nil, e[0], nil, e[2], nil, e[4]} {
		if e[i].Skip != "" || e[i].Winner != want {
			t.Errorf("entry %d: skip %q winner %v", i, e[i].Skip, e[i].Winner)
		}
	}
	if !e[0].starts {
		t.Errorf("the disabled first fs does not start for the enabled second")
	}
	var got []string
	for _, d := range ds {
		got = append(got, fmt.Sprintf("%d %s %s", d.Line, d.Severity, d.Rule))
		if d.Rule == RuleDuplicateName && d.Line == 3 && !strings.Contains(d.Message, "that disabled entry's command runs") {
			t.Errorf("message: %s", d.Message)
		}
		if d.Rule == RuleDuplicateName && d.Line == 5 && !strings.Contains(d.Message, "twice") {
			t.Errorf("message: %s", d.Message)
		}
	}
	if want := "3 error cb-duplicate-name, 5 error cb-duplicate-name, 7 warning cb-duplicate-name"; strings.Join(got, ", ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// A falsy auto_connect connects nothing in the host's run.
func TestCheckAutoConnectOff(t *testing.T) {
	for src, off := range map[string]bool{`{"auto_connect": false}`: true, `{"auto_connect": []}`: true, `{"auto_connect": "no"}`: false, `{}`: false} {
		cfg, ds := check(t, src, Options{})
		has := false
		for _, d := range ds {
			has = has || d.Rule == RuleAutoConnectOff
		}
		if cfg.AutoConnect == off || has != off {
			t.Errorf("%s: auto_connect %v, warned %v", src, cfg.AutoConnect, has)
		}
	}
}
