package mcpc_test

import (
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
