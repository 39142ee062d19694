package schema

import (
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

func check(t *testing.T, def, src string) []diag.Diagnostic {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	n, d := node.ParseJSON("x.json", []byte(src), false)
	if d != nil {
		t.Fatal(d)
	}
	return v.Check(def, n, `server "x"`, nil)
}

// One problem, one diagnostic, at the value in the user's file, with the
// rule the schema's @check attribute names for constraint violations.
func TestCheckReportsEachProblemOnceAtItsValue(t *testing.T) {
	src := `{"comand": "npx", "args": ["a", 3], "env": {"A": 1, "B": null}, "startupTimeoutSeconds": 0, "callTimeoutSeconds": "5", "idleTimeoutSeconds": 1.5, "stderrLevel": "Warn", "toolPrefix": "a.b", "enabled": "yes", "promptSection": null}`
	got := map[string]string{}
	for _, d := range check(t, Server, src) {
		key := d.Pos().String() + " " + d.Rule
		if _, dup := got[key]; dup {
			t.Errorf("duplicate diagnostic %s", key)
		}
		got[key] = d.Message + " | " + d.Suggestion
		if strings.Contains(d.Message, "disjunction") || strings.Contains(d.Message, "#Server") {
			t.Errorf("CUE noise in %q", d.Message)
		}
	}
	want := map[string]string{
		"x.json:1:2 unknown-field":         `server "x": unknown field "comand" is ignored by the host | did you mean "command"?`,
		"x.json:1:33 type-mismatch":        `server "x": args[1] must be a string, not a number | `,
		"x.json:1:50 type-mismatch":        `server "x": env.A must be a string or null, not a number | `,
		"x.json:1:90 timeout-not-positive": `server "x": startupTimeoutSeconds must be a number of seconds greater than 0, not 0 | `,
		"x.json:1:115 type-mismatch":       `server "x": callTimeoutSeconds must be an integer, not a string | `,
		"x.json:1:142 type-mismatch":       `server "x": idleTimeoutSeconds must be an integer, not a number | `,
		"x.json:1:162 stderr-level":        `server "x": stderrLevel must be one of Trace, Debug, Information, Warning, Error, Critical, None, not "Warn" | did you mean "Warning"?`,
		"x.json:1:184 tool-prefix-chars":   `server "x": toolPrefix must be only letters A-Z a-z, digits, _ and -, not "a.b" | `,
		"x.json:1:202 type-mismatch":       `server "x": enabled must be true or false, not a string | `,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got  %q\n want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d diagnostics, want %d: %v", len(got), len(want), got)
	}
}

func TestCheckAcceptsAValidEntry(t *testing.T) {
	src := `{"command": "npx", "args": [], "cwd": "${workspace}", "env": {"A": "1", "B": null}, "toolPrefix": "aZ09_-", "enabled": false, "parallel": true, "startupTimeoutSeconds": 1, "callTimeoutSeconds": 1, "idleTimeoutSeconds": 0, "stderrLevel": "critical", "promptSection": "Use the tools."}`
	if ds := check(t, Server, src); len(ds) != 0 {
		t.Errorf("unexpected %v", ds)
	}
}

func TestFieldsComeFromTheSchema(t *testing.T) {
	v, _ := New()
	got := strings.Join(v.Fields(Server), " ")
	want := "command args cwd env toolPrefix enabled parallel startupTimeoutSeconds callTimeoutSeconds idleTimeoutSeconds stderrLevel promptSection"
	if got != want {
		t.Errorf("fields %q", got)
	}
}

func BenchmarkCheckServer(b *testing.B) {
	v, _ := New()
	src := `{"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1", "B": null}, "startupTimeoutSeconds": 10, "stderrLevel": "Warning", "toolPrefix": "ab"}`
	n, _ := node.ParseJSON("x.json", []byte(src), false)
	for b.Loop() {
		if ds := v.Check(Server, n, "", nil); len(ds) > 0 {
			b.Fatal(ds)
		}
	}
}

// A key that is not a CUE identifier ("s-1", "A-B", "0") comes back quoted
// in CUE's error paths; the diagnostic must still find the value, not
// fall back to its parent with "is missing".
func TestCheckFindsKeysThatCUEQuotes(t *testing.T) {
	got := map[string]string{}
	for _, d := range check(t, Settings, `{"mcpServers": {"s-1": 2, "0": 3, "a\"b": 4}}`) {
		got[d.Pos().String()] = d.Message
	}
	for _, d := range check(t, Server, `{"command": "x", "env": {"A-B": 3}}`) {
		got[d.Pos().String()] = d.Message
	}
	want := map[string]string{
		"x.json:1:24": `mcpServers.s-1 must be an object, not a number`,
		"x.json:1:32": ` must be an object, not a number`,
		"x.json:1:43": `mcpServers.a"b must be an object, not a number`,
		"x.json:1:33": `env.A-B must be a string or null, not a number`,
	}
	for k, w := range want {
		if !strings.HasSuffix(got[k], w) {
			t.Errorf("%s: got %q, want it to end with %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
}
