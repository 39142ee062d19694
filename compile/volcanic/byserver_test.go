package volcanic

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
)

// Each diagnostic lands with the server defined where it points: in a
// pretty file, in a minified one with two servers on one line, and on the
// env-file line of a .NET-bound variable; one about no server is the
// deployment's.
func TestDiagnosticsByServer(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "appsettings.json")
	// a: unknown field "comand" (and so no command); b clean; c (minified,
	// beside d on one line) an unknown field; d clean.
	writeFile(t, app, `{"Mcp": {"Servers": {
  "a": {
    "comand": "x"
  },
  "b": {"Command": "y"},
  "c": {"Command": "z", "Argz": []}, "d": {"Command": "w"}
}}}`)
	env := filepath.Join(dir, "host.env")
	writeFile(t, env, "Mcp__Servers__e__Command=v\nMcp__Servers__e__Timeoutz=3\n")
	res, err := compile.Compile(compile.Options{CleanEnv: true, AppSettings: []string{app}, EnvFiles: []string{env}, AgentDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	by, rest := res.DiagnosticsByServer()
	rules := func(ds []diag.Diagnostic) map[string]bool {
		m := map[string]bool{}
		for _, d := range ds {
			m[d.Rule] = true
		}
		return m
	}
	if r := rules(by["a"]); !r["missing-command"] || !r["unknown-field"] || len(by["a"]) != 2 {
		t.Errorf("a: %v", by["a"])
	}
	if len(by["b"]) != 0 || len(by["d"]) != 0 {
		t.Errorf("b, d: %v %v", by["b"], by["d"])
	}
	if len(by["c"]) != 1 || by["c"][0].Rule != "unknown-field" {
		t.Errorf("c: %v", by["c"])
	}
	if len(by["e"]) == 0 {
		t.Errorf("e: nothing; all: %v", res.Diagnostics)
	}
	n := len(rest)
	for _, ds := range by {
		n += len(ds)
	}
	if n != len(res.Diagnostics) {
		t.Errorf("%d diagnostics sorted, %d found", n, len(res.Diagnostics))
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
