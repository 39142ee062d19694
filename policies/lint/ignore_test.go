package lint

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// An ignore scoped by server drops that server's findings only, anywhere;
// with a path too, only in those files. An ignore that matched nothing is
// reported where it is written (ignore-unused); one whose rule is off is
// not stale.
func TestIgnoreServerScopeAndUnused(t *testing.T) {
	d, ds := Parse("deploy/mcpc.cue", []byte(`rules: {"unknown-field": "off"}
ignores: [
	{server: "github", rule: "package-unpinned", reason: "the image pins it"},
	{server: "git", path: "other.json", rule: "package-unpinned", reason: "not this file"},
	{path: "*.json", rule: "unknown-field", reason: "the host reads Logging"},
	{path: "*.json", rule: "missing-command", reason: "stale by now"},
]
`))
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	in := []diag.Diagnostic{
		{File: "deploy/appsettings.json", Line: 3, Column: 1, Severity: diag.Warning, Rule: "package-unpinned", Message: "github's"},
		{File: "deploy/appsettings.json", Line: 9, Column: 1, Severity: diag.Warning, Rule: "package-unpinned", Message: "git's"},
		{File: "deploy/appsettings.json", Line: 2, Column: 1, Severity: diag.Warning, Rule: "unknown-field", Message: "off"},
	}
	serverOf := func(x diag.Diagnostic) string {
		if x.Line < 8 {
			return "github"
		}
		return "git"
	}
	got := d.Apply(in, nil, serverOf)
	var lines []string
	for _, x := range got.Diagnostics {
		lines = append(lines, x.Pos().String()+" "+x.Rule+" "+x.Message)
	}
	want := []string{
		"deploy/appsettings.json:9:1 package-unpinned git's",
		`deploy/mcpc.cue:4:2 ignore-unused this ignore of package-unpinned matched no finding: no package-unpinned finding in other.json of server "git"`,
		"deploy/mcpc.cue:6:2 ignore-unused this ignore of missing-command matched no finding: no missing-command finding in *.json",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got.Ignored["package-unpinned"] != 1 || got.Off["unknown-field"] != 1 {
		t.Fatalf("%+v", got)
	}
	// ignore-unused has a severity like any rule.
	d.Rules[rules.IgnoreUnused.ID] = "off"
	if got := d.Apply(in, nil, serverOf); len(got.Diagnostics) != 1 || got.Off[rules.IgnoreUnused.ID] != 2 {
		t.Fatalf("ignore-unused off: %+v", got)
	}
}

// An ignore without a path or a server, one with a short reason (the
// message says how long), and one of ignore-unused are refused.
func TestIgnoreNeeds(t *testing.T) {
	_, ds := Parse("mcpc.cue", []byte(`ignores: [
	{rule: "package-unpinned", reason: "everywhere"},
	{path: "a.json", rule: "package-unpinned", reason: "ok"},
	{path: "a.json", rule: "ignore-unused", reason: "too noisy"},
]
`))
	got := shown(ds)
	for _, want := range []string{
		"mcpc.cue:2:2 error deployment-invalid an ignore needs a path, a server or both",
		"mcpc.cue:3:53 error deployment-invalid an ignore needs a reason of at least 3 characters",
		"mcpc.cue:4:25 error deployment-invalid an ignore-unused finding is not ignored",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

// Inline ignores of a JSONC source: on the line of a value, or on a line
// of their own above one (a server's key: the whole server), each rule of
// a list; a // or /* inside a string is no comment; a missing reason, a
// missing rule and an unknown rule are errors where they stand.
func TestInlineIgnores(t *testing.T) {
	files := map[string]string{"appsettings.json": `{
  "Mcp": {"Servers": {
    // mcpc:ignore package-unpinned, npx-without-yes -- the image pins it
    "github": {
      "Command": "npx",
      "Args": ["x@latest"]
    },
    "git": {"Command": "uvx", "Args": ["y"]}, // mcpc:ignore package-unpinned -- vendored
    "web": {"Command": "// mcpc:ignore package-unpinned -- not a comment"},
    /* mcpc:ignore package-unpinned */
    "a": {},
    // mcpc:ignore -- no rule
    "b": {},
    // mcpc:ignore pakage-unpinned -- misspelt
    "c": {}
  }}
}
`}
	read := func(f string) ([]byte, error) { return []byte(files[f]), nil }
	igs, ds := InlineIgnores([]string{"appsettings.json"}, read, []string{"package-unpinned", "npx-without-yes"})
	var got []string
	for _, ig := range igs {
		got = append(got, ig.Pos.String()+" "+ig.Rule+" "+ig.Reason+" "+strconv.Itoa(ig.From)+"-"+strconv.Itoa(ig.To))
	}
	want := []string{
		"appsettings.json:3:5 package-unpinned the image pins it 4-7",
		"appsettings.json:3:5 npx-without-yes the image pins it 4-7",
		"appsettings.json:8:47 package-unpinned vendored 8-8",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	errs := shown(ds)
	for _, w := range []string{
		"appsettings.json:10:5 error deployment-invalid an ignore needs a reason of at least 3 characters",
		"appsettings.json:12:5 error deployment-invalid an inline ignore names the rules it ignores",
		`appsettings.json:14:5 error deployment-invalid rule "pakage-unpinned" does not exist`,
	} {
		if !strings.Contains(errs, w) {
			t.Errorf("missing %q in\n%s", w, errs)
		}
	}
	if len(ds) != 3 {
		t.Errorf("%d errors, want 3:\n%s", len(ds), errs)
	}
	// Applied: the finding on line 6 and the one on line 8 are dropped,
	// the npx-without-yes ignore matched nothing.
	in := []diag.Diagnostic{
		{File: "appsettings.json", Line: 6, Column: 15, Rule: "package-unpinned", Severity: diag.Warning},
		{File: "appsettings.json", Line: 8, Column: 40, Rule: "package-unpinned", Severity: diag.Warning},
		{File: "appsettings.json", Line: 9, Column: 20, Rule: "package-unpinned", Severity: diag.Warning},
	}
	a := (*Deployment)(nil).Apply(in, igs, nil)
	if len(a.Diagnostics) != 2 || a.Diagnostics[0].Line != 3 || a.Diagnostics[0].Rule != rules.IgnoreUnused.ID || a.Diagnostics[1].Line != 9 {
		t.Fatalf("%+v", a.Diagnostics)
	}
}

// A policy finding about a value the compiler already reports an error in
// is not reported: a typo'd Command gives missing-command, not also
// launcher-allowed and runtime-missing about the command it leaves empty;
// an unknown variable in a package argument, not also package-unpinned.
// A finding about another value of the same server stays.
func TestPolicyFindingsDoNotFollowAnError(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "appsettings.json")
	if err := os.WriteFile(app, []byte(`{"Mcp": {"Servers": {
  "github": {
    "Comand": "npx",
    "Args": ["-y", "@modelcontextprotocol/server-github@latest"]
  },
  "d": {"Command": "npx", "Args": ["-y", "x@${ver}"]},
  "e": {"Command": "npx", "Args": ["-y", "x@latest"]}
}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, ds := Parse(filepath.Join(dir, "mcpc.cue"), []byte(`policies: packs: ["baseline", "strict"]`))
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	packs, ds := d.LoadPacks(nil)
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	rep, err := Run(Options{Compile: compile.Options{CleanEnv: true, AppSettings: []string{app}, AgentDir: dir},
		Deployment: d, Packs: packs, Target: policies.ImageTarget("linux", dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range rep.Diagnostics {
		got = append(got, strconv.Itoa(x.Line)+":"+strconv.Itoa(x.Column)+" "+x.Rule)
	}
	want := []string{
		"2:3 missing-command",
		"3:5 unknown-field",
		"6:20 runtime-missing", // about d's Command, not its Args: it stays
		"6:45 unknown-variable",
		"7:20 runtime-missing",
		"7:42 package-unpinned",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Lint reads each source once: the inline ignores of an appsettings file
// are read from the text the compiler kept, positioned as the compiler's
// findings are (after a byte order mark).
func TestInlineIgnoresReadTheCompilersText(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "appsettings.json")
	if err := os.WriteFile(app, []byte("\ufeff"+`{"Mcp": {"Servers": {
  "e": {"Command": "npx", "Args": ["-y", "x@latest"]}, // mcpc:ignore package-unpinned -- pinned by the image
  "f": {"Command": "npx", "Args": ["-y", "y@latest"]}
}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	reads := map[string]int{}
	read := func(path string) ([]byte, error) {
		reads[path]++
		return os.ReadFile(path)
	}
	d, ds := Parse(filepath.Join(dir, "mcpc.cue"), []byte(`policies: packs: ["baseline"]`))
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	packs, ds := d.LoadPacks(nil)
	if len(ds) > 0 {
		t.Fatal(shown(ds))
	}
	rep, err := Run(Options{Compile: compile.Options{CleanEnv: true, AppSettings: []string{app}, AgentDir: dir, ReadFile: read},
		Deployment: d, Packs: packs, Target: policies.ImageTarget("linux", dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if reads[app] != 1 {
		t.Errorf("%s read %d times, want once", app, reads[app])
	}
	var got []string
	for _, x := range rep.Suppressed {
		got = append(got, strconv.Itoa(x.Diagnostic.Line)+":"+strconv.Itoa(x.Diagnostic.Column)+" "+x.Diagnostic.Rule+" ignored")
	}
	for _, x := range rep.Diagnostics {
		if x.Rule == "package-unpinned" {
			got = append(got, strconv.Itoa(x.Line)+":"+strconv.Itoa(x.Column)+" "+x.Rule)
		}
	}
	want := []string{"2:42 package-unpinned ignored", "3:42 package-unpinned"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
