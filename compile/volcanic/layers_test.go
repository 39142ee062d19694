package volcanic

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/golden"
)

// layeredDeployment sets servers every way the host configuration allows:
// keys that hold several levels ("b:Command", "Mcp:Servers:c:Command"), a
// server list, keys differing in case within a file (an error) and across
// layers, scalars and null where a server goes, array overrides by a later
// file (with comments and trailing commas) and by variables, variables
// below and at a server, and settings.json entries shadowed by host ones,
// defined twice, with keys twice.
func layeredDeployment() (compile.Options, map[string][]byte) {
	files := map[string][]byte{
		"appsettings.json": []byte(`{
  "Mcp:Servers:c:Command": "npx",
  "Mcp": {
    "Servers": {
      "a": {"Command": "x", "Args": ["1", "2", "3"], "Env": {"K": "v", "TOKEN": "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
      "A": {"Args": ["over"], "ToolPrefix": "p_"},
      "b:Command": "node",
      "b:Args:0": "b.js",
      "d": {"Command": "x", "command": "y", "Env": {"E": "1", "e": "2"}},
      "e": "scalar",
      "f": null,
      "g": {"Command": "uvx", "Args": {"0": "one", "1": "two"}, "StartupTimeoutSeconds": "0x10", "Enabled": " TRUE ", "Unknown": {"deep": [1, {"x": null}]}}
    },
    "Playwright": {"Enabled": false}
  },
  "Mcp:Servers:c": {"Args": ["z", "${workspace}"], "Cwd": "${workspace}/c"}
}`),
		"appsettings.Production.json": []byte("{\"Mcp\": {\"Servers\": {\"a\": {\"Args\": [\"only-first\",]}, // comment\n /* block */ \"h\": {\"Command\": \"prod\", \"IdleTimeoutSeconds\": \"nope\",},},},}"),
		"list.json":                   []byte(`{"MCP": {"servers": [{"Command": "zero"}, {"Command": "one", "Args": ["x"]}]}}`),
		filepath.Join("agent", "settings.json"): []byte(`{"mcpServers": {
  "a": {"command": "shadowed"},
  "s1": {"command": "node", "args": ["s.js"], "env": {"X": "${env:HOST_VAR}", "Y": null, "X": "again"}, "args": []},
  "s1": {"command": "second"},
  "S1": {"command": "case"},
  "s2": {"comand": "typo", "timeout": 3}
}}`),
	}
	env := []string{
		"Mcp__Servers__a__Command=override",
		"Mcp__Servers__a__Args__1=env-second",
		"mcp__servers__G__Env__FROM_ENV=yes",
		"Mcp__Servers__i__Command=uvx",
		"Mcp__Servers__i__Args__0=mcp-server-i",
		"Mcp__Servers__i__Env__SECRET=${env:HOST_VAR}",
		"Mcp__Servers__j=scalar-from-env",
		"Mcp__Servers__0__Args__0=list-arg",
		"Mcp__Servers__k__Command=",
		"Mcp__Servers__k__StderrLevel=Verbose",
		"Mcp_Servers_single=1",
		"HOST_VAR=host-value",
		"GITHUB_TOKEN=ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
	}
	return compile.Options{CleanEnv: true, AppSettings: []string{"appsettings.json", "appsettings.Production.json", "list.json"}, Env: env,
		AgentDir: "agent", ReadFile: fakeFS(files)}, files
}

// dumpResult writes what a compilation tells: its diagnostics, its plan
// (the draft when there are errors), every name explained, where each
// value of every plan server comes from, and the diagnostics by server.
func dumpResult(t *testing.T, res *compile.Result) string {
	t.Helper()
	var b strings.Builder
	for _, d := range res.Diagnostics {
		fmt.Fprintf(&b, "%s:%d:%d %s %s: %s | %s\n", d.File, d.Line, d.Column, d.Severity, d.Rule, d.Message, d.Suggestion)
	}
	p := res.Plan
	if p == nil {
		p = res.Draft()
	}
	out, err := p.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	b.Write(out)
	names := map[string]bool{}
	for _, e := range res.Entries {
		names[e.Name] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		x, ok := res.Explain(n)
		j, _ := json.Marshal(x)
		fmt.Fprintf(&b, "explain %q %v %s\n", n, ok, j)
	}
	for i, s := range p.Servers {
		paths := [][]any{{"servers", i}, {"servers", i, "name"}, {"servers", i, "command"}, {"servers", i, "cwd"}}
		for a := range s.Args {
			paths = append(paths, []any{"servers", i, "args", a})
		}
		for k := range s.Env {
			paths = append(paths, []any{"servers", i, "env", k})
		}
		sort.Slice(paths, func(x, y int) bool { return fmt.Sprint(paths[x]) < fmt.Sprint(paths[y]) })
		for _, path := range paths {
			fmt.Fprintf(&b, "locate %v %s\n", path, res.Locate(path))
		}
	}
	by, rest := res.DiagnosticsByServer()
	for _, n := range sorted {
		for _, d := range by[n] {
			fmt.Fprintf(&b, "server %q: %s:%d:%d %s\n", n, d.File, d.Line, d.Column, d.Rule)
		}
	}
	for _, d := range rest {
		fmt.Fprintf(&b, "deployment: %s:%d:%d %s\n", d.File, d.Line, d.Column, d.Rule)
	}
	return b.String()
}

// A layered host configuration binds, checks, merges and explains as it
// did when every layer was added whole before binding (the golden was
// written by that code): adding what lies below each server when it is
// bound, and packing the trees of checked entries, change nothing that a
// compilation tells.
func TestLayeredConfigurationCompilesAsBefore(t *testing.T) {
	opts, _ := layeredDeployment()
	res, err := compile.Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	got := dumpResult(t, res)
	golden.Compare(t, filepath.Join("testdata", "layers.golden"), got)
}

// cutLevel cuts a variable name where strings.Split(strings.ReplaceAll(name,
// "__", ":"), ":") does.
func TestCutLevelSplitsAsEnvironmentKeys(t *testing.T) {
	for _, name := range []string{"Mcp__Servers__a__Command", "a:b__c", "a_:b", "a__:b", "a___b", "a____b", "__a", "a__", ":", "", "Mcp:Servers__x", "_", "a_b"} {
		want := strings.Split(strings.ReplaceAll(name, "__", ":"), ":")
		var got []string
		rest := name
		for {
			level, more, found := cutLevel(rest)
			got = append(got, level)
			if !found {
				break
			}
			rest = more
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
}
