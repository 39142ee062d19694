package mcpc_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/shlex"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// The README stands alone: no link or path in it, in docs/ or in the
// decision records leaves the repository, and every relative link names a file that exists.
func TestDocsStayInTheRepository(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	records, _ := filepath.Glob("docs/decisions/*.md")
	files = append(append(files, records...), "README.md")
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(text, "../shared") || strings.Contains(text, "SPEC.md") {
			t.Errorf("%s refers to the specification outside the repository", f)
		}
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				t.Errorf("%s links outside the repository: %s", f, target)
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, target)
			}
		}
	}
}

// The README's one-line compile and the plan command of "Run the example"
// run as written (in-process, the plan file in a temporary directory).
func TestReadmePlanCommands(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "go run ./cmd/mcpc plan ") || strings.HasPrefix(l, "go run ./cmd/mcpc validate ") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 || !strings.HasPrefix(string(data), "# mcpc\n\n```sh\ngo run ./cmd/mcpc plan ") {
		t.Fatalf("the README does not open with the one-line compile, or lacks the example's plan command (%d found)", len(lines))
	}
	out := filepath.Join(t.TempDir(), "plan.json")
	for _, l := range lines {
		words, err := shlex.Split(strings.ReplaceAll(l, "/tmp/volcanic-plan.json", out))
		if err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := run(words[3:]...); code != 0 {
			t.Errorf("%s: exit %d\n%s", l, code, stderr)
		}
	}
}

// Every ```cue block of docs/policies.md is a whole pack: each is loaded with
// --policy over a deployment that breaks each of its rules, and each rule
// must report (a rule that fails to evaluate is a policy-invalid finding, and
// a message that interpolates a list fails only when it is built).
func TestPoliciesDocPacks(t *testing.T) {
	data, err := os.ReadFile("docs/policies.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```cue\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/policies.md has %d cue blocks, want the example pack and the further rules", len(blocks))
	}
	deployment := t.TempDir()
	var servers []string
	for i := range 11 {
		servers = append(servers, fmt.Sprintf(`"s%d": {"Command": "npx", "Args": ["-y", "pkg%d@1.0.0"]}`, i, i))
	}
	servers = append(servers,
		`"script": {"Command": "/tmp/run.sh"}`,
		`"loose": {"Command": "npx", "Args": ["-y", "some-server"]}`,
		`"bot": {"Command": "npx", "Args": ["-y", "bot@1.0.0"], "Env": {"T": "${env:TELEGRAM_BOT_TOKEN}"}}`)
	settings := `{"Mcp": {"Servers": {` + strings.Join(servers, ",\n") + `}}}`
	if err := os.WriteFile(filepath.Join(deployment, "appsettings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	ruleName := regexp.MustCompile(`(?m)^rules: "([a-z0-9-]+)"`)
	for i, b := range blocks {
		pack := filepath.Join(t.TempDir(), fmt.Sprintf("pack%d", i))
		if err := os.Mkdir(pack, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pack, "pack.cue"), []byte(b[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		names := ruleName.FindAllStringSubmatch(b[1], -1)
		if len(names) == 0 {
			t.Errorf("cue block %d declares no rules:\n%s", i+1, b[1])
			continue
		}
		code, stdout, stderr := run("lint", deployment, "--clean-env", "--policy", pack, "--format", "json")
		if strings.Contains(stdout, "policy-invalid") || code == 2 {
			t.Errorf("cue block %d does not evaluate (exit %d):\n%s\n%s", i+1, code, stdout, stderr)
			continue
		}
		for _, n := range names {
			if !strings.Contains(stdout, `"rule": "`+n[1]+`"`) {
				t.Errorf("cue block %d: rule %s reports nothing over a deployment that breaks it:\n%s", i+1, n[1], stdout)
			}
		}
	}
}

// docCommands are the mcpc command lines of the ```sh blocks of a doc.
func docCommands(t *testing.T, file string) [][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
		for _, l := range strings.Split(b[1], "\n") {
			if !strings.HasPrefix(l, "mcpc ") {
				continue
			}
			if i := strings.Index(l, " #"); i >= 0 {
				l = l[:i]
			}
			words, err := shlex.Split(l)
			if err != nil {
				t.Fatalf("%s: %s: %v", file, l, err)
			}
			out = append(out, words[1:])
		}
	}
	return out
}

// docs/policies.md's commands run as written, in a copy of the shipped
// packs (--update writes there), and pass; --update leaves the committed
// expected findings as they are.
func TestPoliciesDocCommands(t *testing.T) {
	cmds := docCommands(t, "docs/policies.md")
	if len(cmds) == 0 {
		t.Fatal("docs/policies.md shows no mcpc command")
	}
	root := t.TempDir()
	for _, pack := range []string{"baseline", "strict"} {
		if err := os.CopyFS(filepath.Join(root, "policies", pack), os.DirFS(filepath.Join("policies", pack))); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for _, words := range cmds {
		if code, stdout, stderr := run(words...); code != 0 {
			t.Errorf("mcpc %s: exit %d\n%s%s", strings.Join(words, " "), code, stdout, stderr)
		}
	}
	written, _ := filepath.Glob(filepath.Join(root, "policies", "*", "testdata", "*", "expected.txt"))
	if len(written) == 0 {
		t.Fatal("the shipped packs have no expected.txt")
	}
	for _, file := range written {
		rel, _ := filepath.Rel(root, file)
		got, _ := os.ReadFile(file)
		want, err := os.ReadFile(filepath.Join(repo, rel))
		if err != nil || string(got) != string(want) {
			t.Errorf("policy test --update changes %s:\n%s", rel, got)
		}
	}
}

// The README names each prerequisite with the version the repository
// needs: go.mod's Go, the lowest Node.js that every package of the npm
// installs accepts (their engines), the headless shell the browser tests
// look for, the actionlint .ci/run installs.
func TestReadmePrerequisites(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	row := func(what string) []string {
		m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(what) + ` \| ([^|]*) \| ([^|]*) \|$`).FindStringSubmatch(readme)
		if m == nil {
			t.Fatalf("the README's prerequisites have no row for %s", what)
		}
		return m[1:]
	}
	gomod, _ := os.ReadFile("go.mod")
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(gomod))
	if got := row("Go")[0]; goVersion == nil || got != goVersion[1] {
		t.Errorf("README: Go %s, go.mod: %v", got, goVersion)
	}
	nodeRow := row("Node.js, with its npm")[0]
	m := regexp.MustCompile(`^(\d+)\.(\d+) or later`).FindStringSubmatch(nodeRow)
	if m == nil {
		t.Fatalf("README's Node.js version %q: want MAJOR.MINOR or later", nodeRow)
	}
	named := [3]int{atoi(m[1]), atoi(m[2]), 0}
	var specs []string
	for _, lock := range []string{"package-lock.json", "npm/inspector/package-lock.json"} {
		b, err := os.ReadFile(lock)
		if err != nil {
			t.Fatal(err)
		}
		var l struct {
			Packages map[string]struct {
				Engines any `json:"engines"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Packages {
			if e, ok := p.Engines.(map[string]any); ok {
				if s, ok := e["node"].(string); ok {
					specs = append(specs, s)
				}
			}
		}
	}
	if len(specs) < 10 {
		t.Fatalf("the package locks name %d engines", len(specs))
	}
	below := [3]int{named[0], named[1] - 1, 999}
	if named[1] == 0 {
		below = [3]int{named[0] - 1, 999, 999}
	}
	refuses := false
	for _, s := range specs {
		if !satisfies(named, s) {
			t.Errorf("Node.js %d.%d, which the README names, does not satisfy an engines range of the locks: %s", named[0], named[1], s)
		}
		refuses = refuses || !satisfies(below, s)
	}
	if !refuses {
		t.Errorf("every package accepts Node.js %v too: the README names more than is needed", below)
	}
	if got := row("`chromium-headless-shell` (Debian's package, at `" + testservers.HeadlessChromium + "`)"); got[0] == "" {
		t.Error("the README names no version of chromium-headless-shell")
	}
	ci, _ := os.ReadFile(".ci/run")
	lint := regexp.MustCompile(`actionlint/cmd/actionlint@(v[0-9.]+)`).FindSubmatch(ci)
	if lint == nil || !strings.HasPrefix(row("`actionlint`")[0], string(lint[1])+" ") {
		t.Errorf("README: actionlint %s; .ci/run installs %s", row("`actionlint`")[0], lint)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// satisfies reports whether version v is in the npm engines range spec, in
// the forms the locks use: alternatives joined by ||, each of comparators
// >=V, ^V, or a bare V (V.x, V.y.x: that prefix).
func satisfies(v [3]int, spec string) bool {
	parse := func(s string) ([3]int, int) { // the version and how many parts were given
		var out [3]int
		parts := strings.Split(s, ".")
		n := 0
		for i, p := range parts {
			if i > 2 || p == "x" || p == "" {
				break
			}
			out[i], n = atoi(p), i+1
		}
		return out, n
	}
	less := func(a, b [3]int) bool {
		for i := range a {
			if a[i] != b[i] {
				return a[i] < b[i]
			}
		}
		return false
	}
	for _, alt := range strings.Split(spec, "||") {
		alt = strings.ReplaceAll(strings.TrimSpace(alt), ">= ", ">=")
		ok := true
		for _, c := range strings.Fields(alt) {
			switch {
			case strings.HasPrefix(c, ">="):
				w, _ := parse(c[2:])
				ok = ok && !less(v, w)
			case strings.HasPrefix(c, "^"):
				w, _ := parse(c[1:])
				ok = ok && !less(v, w) && v[0] == w[0]
			default:
				w, n := parse(c)
				for i := range n {
					ok = ok && v[i] == w[i]
				}
			}
		}
		if ok {
			return true
		}
	}
	return false
}
