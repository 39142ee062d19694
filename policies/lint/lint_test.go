package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	_ "github.com/mcpc-dev/mcpc/compile/profiles"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies"
)

func shown(ds []diag.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.Pos().String() + " " + string(d.Severity) + " " + d.Rule + " " + d.Message + "\n")
	}
	return b.String()
}

func TestParseDeployment(t *testing.T) {
	d, ds := Parse("deploy/mcpc.cue", []byte(`
profile: "volcanic"
sources: {
	appsettings: ["appsettings.json", "/etc/host/appsettings.Production.json"]
	envFiles: ["host.env"]
	agentDir: "agent"
}
rules: "package-unpinned": "error"
ignores: [{path: "**/appsettings*.json", rule: "unknown-field", reason: "the host reads Logging"}]
policies: packs: ["baseline", "strict"]
`))
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	if d.Sources.AppSettings[0] != filepath.Join("deploy", "appsettings.json") || d.Sources.AppSettings[1] != "/etc/host/appsettings.Production.json" ||
		d.Sources.AgentDir != filepath.Join("deploy", "agent") || d.Rules["package-unpinned"] != "error" || d.Ignores[0].Pos.Line != 9 {
		t.Fatalf("%+v", d)
	}
	bad := []struct{ src, want string }{
		{`sorces: {}`, "mcpc.cue:1:1 error deployment-invalid unknown field \"sorces\" is ignored by mcpc"},
		{`rules: x: "warn"`, "mcpc.cue:1:11 error deployment-invalid rules.x must be off, info, warning or error"},
		{`ignores: [{path: "*.json", rule: "unknown-field", reason: ""}]`, "an ignore needs a reason"},
		{`ignores: [{path: "*.json", rule: "unknown-field"}]`, "ignores[0].reason is missing"},
		{`ignores: [{path: "[", rule: "unknown-field", reason: "legacy file"}]`, "not a valid glob"},
		{`profile: string`, "cue-syntax"},
	}
	for _, b := range bad {
		d, ds := Parse("mcpc.cue", []byte(b.src))
		if d != nil || !strings.Contains(shown(ds), b.want) {
			t.Errorf("%s: got\n%s want %q", b.src, shown(ds), b.want)
		}
	}
}

func TestCheckRules(t *testing.T) {
	d, ds := Parse("mcpc.cue", []byte("rules: \"pakage-unpinned\": \"off\"\nignores: [{path: \"x\", rule: \"no-such-rule\", reason: \"why not\"}]\n"))
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	ds = d.CheckRules([]string{"package-unpinned", "unknown-field"})
	if len(ds) != 2 || ds[0].Line != 1 || ds[0].Suggestion != `did you mean "package-unpinned"?` || ds[1].Line != 2 {
		t.Fatalf("%s", shown(ds))
	}
}

func TestApply(t *testing.T) {
	d, ds := Parse("deploy/mcpc.cue", []byte(`
rules: {"package-unpinned": "error", "unknown-field": "off"}
ignores: [{path: "agent/*.json", rule: "tool-prefix-chars", reason: "legacy agent settings"}]
`))
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	in := []diag.Diagnostic{
		{File: "deploy/host.env", Line: 1, Column: 1, Severity: diag.Warning, Rule: "package-unpinned", Message: "a"},
		{File: "deploy/appsettings.json", Line: 1, Column: 1, Severity: diag.Warning, Rule: "unknown-field", Message: "b"},
		{File: "deploy/agent/settings.json", Line: 1, Column: 1, Severity: diag.Error, Rule: "tool-prefix-chars", Message: "c"},
		{File: "other/agent/settings.json", Line: 1, Column: 1, Severity: diag.Error, Rule: "tool-prefix-chars", Message: "d"},
	}
	got := d.Apply(in, nil, nil)
	if len(got.Diagnostics) != 2 || got.Diagnostics[0].Severity != diag.Error || got.Diagnostics[0].Rule != "package-unpinned" ||
		got.Diagnostics[1].Message != "d" || got.Off["unknown-field"] != 1 || got.Ignored["tool-prefix-chars"] != 1 {
		t.Fatalf("%+v", got)
	}
	var none *Deployment
	if got := none.Apply(in, nil, nil); len(got.Diagnostics) != 4 {
		t.Fatalf("no deployment: %+v", got)
	}
}

// The example deployment: the compiler's checks, the baseline pack (an
// --env entry that unpins the memory server's package, reported on its
// line) and the Go rules against a PATH without npx (reported where each
// server names its command: the host file and the agent's settings).
func TestRunExample(t *testing.T) {
	dir := "../../examples/volcanic/"
	packs, ds := (*Deployment)(nil).LoadPacks(nil)
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{
		Compile: compile.Options{CleanEnv: true, AppSettings: []string{dir + "appsettings.json"}, EnvFiles: []string{dir + "host.env"}, AgentDir: dir + "agent",
			Env: []string{"Mcp__Servers__memory__Args__1=@modelcontextprotocol/server-memory"}},
		Packs:  packs,
		Target: policies.ImageTarget("linux", bin, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := shown(rep.Diagnostics)
	for _, want := range []string{
		compile.EnvFlagFile + ":1:31 warning package-unpinned server memory runs @modelcontextprotocol/server-memory without an exact version, so each start may run different code",
		dir + "appsettings.json:9:20 error runtime-missing server everything starts npx, which is not on the target's PATH",
		dir + "appsettings.json:24:20 error runtime-missing server memory starts npx, which is not on the target's PATH",
		dir + "agent/settings.json:5:18 error runtime-missing server filesystem starts npx, which is not on the target's PATH",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

// A source flag overrides the same source of mcpc.cue, field by field; the
// others stay as the file says.
func TestCompileOptionsFlagsOverrideTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, ds := Parse(filepath.Join(dir, "mcpc.cue"), []byte(`sources: {appsettings: ["a.json"], envFiles: ["h.env"], agentDir: "agent", cleanEnv: true}`))
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	opts, err := CompileOptions(d, dir, Flags{Set: map[string]bool{"env-file": true}, Sources: compile.Options{EnvFiles: []string{"other.env"}}, Environ: []string{"A=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if opts.AppSettings[0] != filepath.Join(dir, "a.json") || opts.EnvFiles[0] != "other.env" || !opts.CleanEnv || opts.Environ != nil {
		t.Fatalf("%+v", opts)
	}
	opts, err = CompileOptions(d, dir, Flags{Set: map[string]bool{"clean-env": true}, Environ: []string{"A=1"}})
	if err != nil || opts.CleanEnv || len(opts.Environ) != 1 {
		t.Fatalf("clean-env false from the flag: %+v %v", opts, err)
	}
	// No file, no flags, no appsettings: nothing to check.
	if _, err := CompileOptions(nil, t.TempDir(), Flags{}); err == nil || !strings.Contains(err.Error(), "nothing to check") {
		t.Fatalf("got %v", err)
	}
	// appsettings.json and appsettings.<Environment>.json of the directory.
	empty := t.TempDir()
	for _, f := range []string{"appsettings.json", "appsettings.Staging.json", "appsettings.Production.json"} {
		if err := os.WriteFile(filepath.Join(empty, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts, err = CompileOptions(nil, empty, Flags{Environ: []string{"ASPNETCORE_ENVIRONMENT=Staging"}})
	if err != nil || len(opts.AppSettings) != 2 || filepath.Base(opts.AppSettings[1]) != "appsettings.Staging.json" {
		t.Fatalf("%+v %v", opts.AppSettings, err)
	}
}

// The Environment that picks appsettings.<Environment>.json is the host
// environment's: --env, the env files, mcpc's own (DOTNET_ENVIRONMENT over
// ASPNETCORE_ENVIRONMENT) unless cleanEnv, and Production without one.
func TestCompileOptionsEnvironmentOfTheHost(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"appsettings.json", "appsettings.Staging.json", "appsettings.Production.json", "appsettings.Test.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "host.env"), []byte("DOTNET_ENVIRONMENT=Test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flag := func(name string, o compile.Options) Flags {
		return Flags{Set: map[string]bool{name: true}, Sources: o, Environ: []string{"DOTNET_ENVIRONMENT=Staging"}}
	}
	for _, c := range []struct {
		name string
		f    Flags
		want string
	}{
		{"none", Flags{}, "appsettings.Production.json"},
		{"own", Flags{Environ: []string{"ASPNETCORE_ENVIRONMENT=Test", "DOTNET_ENVIRONMENT=Staging"}}, "appsettings.Staging.json"},
		{"--env", flag("env", compile.Options{Env: []string{"DOTNET_ENVIRONMENT=Production"}}), "appsettings.Production.json"},
		{"--env-file", flag("env-file", compile.Options{EnvFiles: []string{filepath.Join(dir, "host.env")}}), "appsettings.Test.json"},
		{"--clean-env", flag("clean-env", compile.Options{CleanEnv: true}), "appsettings.Production.json"},
		{"mcpc.cue", Flags{Environ: []string{"DOTNET_ENVIRONMENT=Staging"}}, "appsettings.Test.json"},
	} {
		var d *Deployment
		if c.name == "mcpc.cue" {
			d = &Deployment{Sources: Sources{EnvFiles: []string{filepath.Join(dir, "host.env")}, CleanEnv: true}}
		}
		opts, err := CompileOptions(d, dir, c.f)
		if err != nil || len(opts.AppSettings) != 2 || filepath.Base(opts.AppSettings[1]) != c.want {
			t.Errorf("%s: %v %v, want appsettings.json and %s", c.name, opts.AppSettings, err, c.want)
		}
	}
}

// An env file is a source: an image configured by its environment alone
// (PLAYWRIGHT_*, no appsettings) is something to check.
func TestCompileOptionsEnvFileIsASource(t *testing.T) {
	dir := t.TempDir()
	env := filepath.Join(dir, "host.env")
	if err := os.WriteFile(env, []byte("PLAYWRIGHT_BROWSERS_PATH=/ms-playwright\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dir)
	t.Setenv("VOLCANIC_AGENT_DIR", "")
	opts, err := CompileOptions(nil, dir, Flags{Set: map[string]bool{"env-file": true}, Sources: compile.Options{EnvFiles: []string{env}}})
	if err != nil || len(opts.AppSettings) != 0 || len(opts.EnvFiles) != 1 {
		t.Fatalf("%+v %v", opts, err)
	}
	if _, err := CompileOptions(&Deployment{Sources: Sources{EnvFiles: []string{env}}}, dir, Flags{}); err != nil {
		t.Fatal(err)
	}
}
