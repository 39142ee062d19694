package mcpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/shlex"
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
