package policies

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// server is one plan server for the tests: the defaults of a stdio entry.
func server(name, command string, args ...string) map[string]any {
	if args == nil {
		args = []string{} // as in every plan
	}
	return map[string]any{"name": name, "command": command, "args": args, "enabled": true, "transport": "stdio",
		"env": map[string]any{}, "idleTimeoutSeconds": 1800, "callTimeoutSeconds": 120, "startupTimeoutSeconds": 60,
		"cwd": "${workspace}", "parallel": false, "promptSection": nil, "stderrLevel": "Warning", "toolPrefix": ""}
}

func planJSON(t *testing.T, servers ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"planVersion": 1, "profile": "volcanic", "servers": servers, "shadowed": []any{}, "sources": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pack(t *testing.T, name string) *Pack {
	t.Helper()
	packs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packs {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pack %s", name)
	return nil
}

func with(s map[string]any, key string, v any) map[string]any { s[key] = v; return s }

// Each shipped rule: plans that trigger it (with the path reported) and
// near-misses that stay clean.
func TestBuiltinRules(t *testing.T) {
	cases := []struct {
		pack, rule string
		server     map[string]any
		path       string // "" = clean
	}{
		{"baseline", "package-unpinned", server("gh", "npx", "-y", "@modelcontextprotocol/server-github"), "servers 0 args 1"},
		{"baseline", "package-unpinned", server("gh", "/usr/local/bin/npx", "-y", "server-x@latest"), "servers 0 args 1"},
		{"baseline", "package-unpinned", server("gh", "npx", "-y", "server-x@^1.2.0"), "servers 0 args 1"},
		{"baseline", "package-unpinned", server("gh", "npx", "-y", "@scope/server-x@1.2.3"), ""},
		{"baseline", "package-unpinned", server("gh", "npx", "-y", "@scope/server-x@2025.9.1-beta.1"), ""},
		{"baseline", "package-unpinned", server("gh", "npx", "./local/server.js"), ""},
		{"baseline", "package-unpinned", server("gh", "npx"), ""},
		{"baseline", "package-unpinned", server("d", "docker", "run"), ""},
		{"baseline", "package-unpinned", server("f", "uvx"), ""},
		{"strict", "launcher-allowed", server("x", "/opt/run.sh"), "servers 0 command"},
		{"baseline", "package-unpinned", server("f", "uvx", "mcp-server-fetch"), "servers 0 args 0"},
		{"baseline", "package-unpinned", server("f", "uvx", "--from", "mcp-server-fetch", "fetch"), "servers 0 args 1"},
		{"baseline", "package-unpinned", server("f", "uvx", "mcp-server-fetch==2025.4.7"), ""},
		{"baseline", "package-unpinned", server("f", "uvx", "--from", "mcp-server-fetch@2025.4.7", "fetch"), ""},
		{"baseline", "package-unpinned", server("p", "pipx", "run", "mcp-tool"), "servers 0 args 1"},
		{"baseline", "package-unpinned", server("p", "pipx", "run", "--spec", "mcp-tool==1.0", "mcp-tool"), ""},
		{"baseline", "package-unpinned", server("d", "docker", "run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/github/github-mcp-server"), "servers 0 args 5"},
		{"baseline", "package-unpinned", server("d", "docker", "run", "-i", "ghcr.io/x/y:latest"), "servers 0 args 2"},
		{"baseline", "package-unpinned", server("d", "docker", "run", "-i", "--rm", "-e", "TOKEN", "localhost:5000/x/y:1.4"), ""},
		{"baseline", "package-unpinned", server("d", "docker", "run", "-i", "ghcr.io/x/y@sha256:0123"), ""},
		{"baseline", "package-unpinned", with(server("gh", "npx", "-y", "server-x"), "enabled", false), ""},
		{"baseline", "master-secret-passed", with(server("x", "npx", "-y", "a@1.0.0"), "env", map[string]any{"T": "${env:TELEGRAM_BOT_TOKEN}"}), "servers 0 env T"},
		{"baseline", "master-secret-passed", with(server("x", "npx", "-y", "a@1.0.0"), "env", map[string]any{"K": "pre-${env:MCP_ENCRYPTION_SECRET}", "N": nil}), "servers 0 env K"},
		{"baseline", "master-secret-passed", with(server("x", "npx", "-y", "a@1.0.0"), "env", map[string]any{"T": "${env:TELEGRAM_BOT_TOKEN_X}", "N": nil}), ""},
		{"strict", "launcher-allowed", server("x", "/opt/run.sh"), "servers 0 command"},
		{"strict", "launcher-allowed", server("x", "uvx", "a==1"), ""},
		{"strict", "idle-timeout-never", with(server("x", "npx"), "idleTimeoutSeconds", 0), "servers 0 idleTimeoutSeconds"},
		{"strict", "idle-timeout-never", with(server("x", "npx"), "idleTimeoutSeconds", 1), ""},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s", i, c.rule), func(t *testing.T) {
			vs, ds := pack(t, c.pack).Evaluate(planJSON(t, c.server))
			if len(ds) > 0 {
				t.Fatalf("diagnostics: %v", ds)
			}
			var got []string
			for _, v := range vs {
				if v.Rule == c.rule {
					got = append(got, fmt.Sprint(v.Path...))
					if v.Message == "" || v.Suggestion == "" {
						t.Errorf("violation without message or suggestion: %+v", v)
					}
				}
			}
			want := []string{}
			if c.path != "" {
				want = []string{strings.ReplaceAll(c.path, " ", "")}
			}
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], " ", "")
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("violations %v, want %v (all: %+v)", got, want, vs)
			}
		})
	}
}

func TestServerCountMax(t *testing.T) {
	var servers []map[string]any
	for i := 0; i < 21; i++ {
		servers = append(servers, server(fmt.Sprintf("s%02d", i), "npx", "-y", "a@1.0.0"))
	}
	vs, ds := pack(t, "strict").Evaluate(planJSON(t, servers...))
	if len(ds) > 0 || len(vs) != 1 || vs[0].Rule != "server-count-max" || fmt.Sprint(vs[0].Path...) != fmt.Sprint("servers", 20, "name") {
		t.Fatalf("%+v %v", vs, ds)
	}
	vs, _ = pack(t, "strict").Evaluate(planJSON(t, servers[:20]...))
	if len(vs) != 0 {
		t.Fatalf("20 servers: %+v", vs)
	}
}

// A team's pack: loaded from a directory, its rules declared and evaluated;
// a broken pack is positioned diagnostics naming the rule.
func TestLoadTeamPack(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("team.cue", `package team

import "strings"

input: _

rules: "team-no-latest": {
	severity:    "error"
	description: "No @latest."
	example:     "server@latest"
	deny: [for i, s in input.servers for j, a in s.args if strings.HasSuffix(a, "@latest") {
		path: ["servers", i, "args", j]
		message: "\(s.name): \(a)"
	}]
}
`)
	p, ds := Load(dir)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	vs, ds := p.Evaluate(planJSON(t, server("a", "npx", "-y", "x@latest")))
	if len(ds) > 0 || len(vs) != 1 || vs[0].Severity != diag.Error || vs[0].Message != "a: x@latest" {
		t.Fatalf("%+v %v", vs, ds)
	}

	bad := []struct{ src, want string }{
		{"package team\nrules: {", "not valid CUE"},
		{"package team\ninput: _\nrules: \"NoCase\": {severity: \"error\", description: \"d\", example: \"e\", deny: []}", "kebab-case"},
		{"package team\ninput: _\nrules: \"package-unpinned\": {severity: \"error\", description: \"d\", example: \"e\", deny: []}", "taken by a built-in rule"},
		{"package team\ninput: _\nrules: \"team-x\": {severity: \"fatal\", description: \"d\", example: \"e\", deny: []}", "severity must be"},
		{"package team\ninput: _\nrules: \"team-x\": {severity: \"error\", example: \"e\", deny: []}", "no description"},
		{"package team\ninput: _\nrules: \"team-x\": {severity: \"error\", description: \"d\", example: \"e\"}", "no deny list"},
		{"package team\ninput: _\n", "declares no rules"},
	}
	for _, b := range bad {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "p.cue"), []byte(b.src), 0o644); err != nil {
			t.Fatal(err)
		}
		p, ds := Load(dir)
		if p != nil || len(ds) == 0 || !strings.Contains(ds[0].Message, b.want) || ds[0].Rule != rules.PolicyInvalid.ID || ds[0].Line < 1 {
			t.Errorf("%q: pack %v, diagnostics %+v, want %q", b.src, p != nil, ds, b.want)
		}
	}
}

// A rule whose comprehension fails on the input names itself, positioned in
// the pack.
func TestEvaluateFailureNamesRule(t *testing.T) {
	dir := t.TempDir()
	src := "package team\ninput: _\nrules: \"team-x\": {\n\tseverity: \"error\"\n\tdescription: \"d\"\n\texample: \"e\"\n\tdeny: [for s in input.servers {path: [\"servers\"], message: s.nosuchfield}]\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, ds := Load(dir)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	_, ds = p.Evaluate(planJSON(t, server("a", "npx")))
	if len(ds) != 1 || !strings.Contains(ds[0].Message, "policy team-x") || ds[0].File != filepath.Join(dir, "p.cue") {
		t.Fatalf("%+v", ds)
	}
}

// Violations of a plan read from a file point into that file.
func TestPlanFileLocator(t *testing.T) {
	data := []byte("{\n  \"servers\": [\n    {\"name\": \"gh\", \"command\": \"npx\", \"args\": [\"-y\", \"server-x\"], \"enabled\": true, \"transport\": \"stdio\", \"env\": {}}\n  ]\n}\n")
	root, d := node.ParseJSON("plan.json", data, false)
	if d != nil {
		t.Fatal(d)
	}
	vs, ds := pack(t, "baseline").Evaluate(data)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	got := Diagnostics(vs, PlanFile(root))
	if len(got) != 1 || got[0].File != "plan.json" || got[0].Line != 3 || got[0].Column != 53 || got[0].Rule != "package-unpinned" {
		t.Fatalf("%+v", got)
	}
}
