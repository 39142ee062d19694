package schema

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// The fast path must understand every definition of the embedded schemas:
// if one uses a construct the derivation does not know, Check stays correct
// (CUE checks everything) but loses its speed, and this test says which
// construct and where.
func TestFastPathUnderstandsTheSchemas(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.FastPathError(); err != nil {
		t.Fatalf("the fast path is off: %v", err)
	}
	for _, d := range definitions {
		if v.fast[d] == nil {
			t.Errorf("%s has no fast-path rule", d)
		}
	}
}

// A construct whose meaning a rule derived without data cannot capture turns
// the fast path off, loudly (FastPathError), and Check still reports what
// CUE reports.
func TestFastPathRefusesConstructsItDoesNotUnderstand(t *testing.T) {
	cases := map[string]string{
		"default":           `#T: {a?: *1 | int}`,
		"field reference":   `#T: {a?: int, b?: a}`,
		"comprehension":     `#T: {a?: int, if a > 1 {b: int}}`,
		"narrow pattern":    `#T: {[=~"^x"]: int}`,
		"arithmetic":        `#T: {a?: 1 + 1}`,
		"fixed list":        `#T: {a?: [string, int]}`,
		"float bound":       `#T: {a?: >0.5}`,
		"builtin validator": `#T: {a?: string & len(a) > 2}`,
		"let":               `#T: {let x = int, a?: x}`,
		"typed ellipsis":    `#T: {a?: int, ...string}`,
		"interpolation":     `#T: {a?: "x\(1)"}`,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := newValidator(map[string]string{"t.cue": "package schema\n" + src + "\n"}, []string{"#T"})
			if err != nil {
				t.Skipf("CUE itself refuses it: %v", err)
			}
			if v.FastPathError() == nil || v.fast["#T"] != nil {
				t.Fatalf("the fast path accepted %s", src)
			}
			n, _ := node.ParseJSON("x.json", []byte(`{"b": 2}`), false)
			if got, want := v.Check("#T", n, "", nil), v.checkWithoutFastPath("#T", n, "", DefaultNaming); !reflect.DeepEqual(got, want) {
				t.Errorf("Check %v, CUE %v", got, want)
			}
		})
	}
}

// fastCases are values at the edges of what the rules model: each is
// checked against every definition, by both paths.
var fastCases = []string{
	`{"command": "npx", "args": ["-y", "pkg"], "cwd": "${workspace}", "env": {"A": "1", "B": null}, "toolPrefix": "aZ09_-", "enabled": false, "parallel": true, "startupTimeoutSeconds": 1, "callTimeoutSeconds": 120, "idleTimeoutSeconds": 0, "stderrLevel": "critical", "promptSection": "Use the tools."}`,
	`{"command": "npx", "comand": "npx", "Env": {}}`,
	`{"command": "npx", "command": "uvx"}`,
	`{"command": "npx", "command": "npx"}`,
	`{"idleTimeoutSeconds": -0, "startupTimeoutSeconds": -1}`,
	`{"idleTimeoutSeconds": 1e3, "startupTimeoutSeconds": 1.0}`,
	`{"callTimeoutSeconds": 123456789012345678901234567890123456789012345678901234567890}`,
	`{"startupTimeoutSeconds": 0}`,
	`{"stderrLevel": "Warning\n"}`,
	`{"stderrLevel": "WARNING", "toolPrefix": ""}`,
	`{"toolPrefix": "a.b", "stderrLevel": 3}`,
	`{"env": {"A": 1}, "args": [null]}`,
	`{"env": null, "args": null, "promptSection": 3}`,
	`{"mcpServers": {"a": {"command": "x"}, "b": 3}, "other": [1, {"x": null}]}`,
	`{"mcpServers": null}`,
	`{"other": -1, "more": [-0.5, -0, {"a": 1, "a": 1}], "x": {"": 0, "": true}}`,
	`{"other": -1e5, "more": [1E300, 0.0]}`,
	`{"Servers": {"a": {}}, "Playwright": {"Enabled": null, "ExtraArgs": ["--isolated"], "Browser": "firefox"}}`,
	`{"Servers": 1, "Playwright": {"ExtraArgs": "--isolated", "Headles": true}}`,
	`{"version": 1, "servers": [{"name": "notes", "url": "https://x", "transport": "auto", "tools": null, "auth": "headers", "sealed": "abc"}]}`,
	`{"name": "notes", "url": "https://x", "transport": "sse", "tools": ["a", 1], "auth": "headers", "sealed": "abc"}`,
	`{"name": "Notes!", "url": "https://x", "transport": "ws", "auth": "basic", "sealed": "abc"}`,
	`{"version": 2, "servers": {}}`,
	`{"version": 1.0, "servers": []}`,
	`{"planVersion": 1, "profile": "volcanic", "digest": "sha256:` + strings.Repeat("ab", 32) + `", "sources": [{"kind": "settings", "path": "x"}], "servers": [], "shadowed": []}`,
	`{"planVersion": 1, "profile": "craftbot", "digest": "sha256:x", "sources": [{"kind": 1}], "servers": [{"name": "a"}], "shadowed": [{}]}`,
	`{"lockVersion": 1, "servers": [{"name": "a", "command": "x", "args": [], "serverName": "s", "serverVersion": "1", "tools": [{"name": "t", "visibleName": null, "descriptionSha256": "` + strings.Repeat("0", 64) + `", "inputSchemaSha256": "` + strings.Repeat("f", 64) + `"}]}]}`,
	`{"lockVersion": 1, "servers": [{"name": "a", "tools": [{"descriptionSha256": "XYZ"}]}]}`,
	`[]`, `null`, `"x"`, `3`, `{}`,
}

// sameAsCUE checks data against every definition by both paths.
func sameAsCUE(t *testing.T, v *Validator, data *node.Node) (accepted int) {
	t.Helper()
	for _, d := range definitions {
		got := v.Check(d, data, `server "x"`, nil)
		want := v.checkWithoutFastPath(d, data, `server "x"`, DefaultNaming)
		// In the order every report prints them: the check by parts
		// finds them in another order than CUE's walk of the value.
		diag.Sort(got)
		diag.Sort(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the fast path gives\n  %v\nCUE gives\n  %v", d, got, want)
		}
		if v.fast[d].accepts(data) {
			accepted++
		}
	}
	return accepted
}

func TestFastPathMatchesCUE(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for _, src := range fastCases {
		n, d := node.ParseJSON("x.json", []byte(src), false)
		if d != nil {
			t.Fatalf("%s: %v", src, d)
		}
		accepted += sameAsCUE(t, v, n)
	}
	// The comparison means something only if the fast path settles some
	// of the cases itself.
	if accepted < len(definitions) {
		t.Errorf("the fast path accepted only %d of the values", accepted)
	}
}

// FuzzFastPathMatchesCUE: whatever the value, the fast path and CUE give
// the same diagnostics for every definition. Seeds: the cases above and
// every settings.json and servers.json of the golden fixtures.
func FuzzFastPathMatchesCUE(f *testing.F) {
	for _, src := range fastCases {
		f.Add([]byte(src))
	}
	// The fixtures' JSON files seed the fuzzer too, only when it fuzzes:
	// as a plain test they are no news, since TestGolden (crossCheckCUE)
	// cross-checks every golden case with CUE already (and they cost the
	// suite's time under the race detector).
	fuzzing := flag.Lookup("test.fuzz") != nil && flag.Lookup("test.fuzz").Value.String() != ""
	for _, pattern := range []string{"../fixtures/*/agent/settings.json", "../fixtures/*/*.json", "../fixtures/*/*/.volcanic/mcp/servers.json"} {
		if !fuzzing {
			break
		}
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	v, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, d := node.ParseJSON("x.json", data, true)
		if d != nil {
			return
		}
		sameAsCUE(t, v, n)
		if n.Kind == node.Object {
			// Server entries one level down, as settings.json holds them.
			for _, m := range n.Members {
				sameAsCUE(t, v, m.Value)
			}
		}
	})
}
