package denylist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultDenies(t *testing.T) {
	l := Default()
	for name, want := range map[string]bool{
		"TELEGRAM_BOT_TOKEN": true, "GITHUB_TOKEN": true, "github_token": true, "MY_SERVICE_TOKEN": true,
		"DB_PASSWORD": true, "SIGNING_PRIVATE_KEY": true, "STRIPE_API_KEY": true, "APP_SECRET": true,
		"AWS_SESSION_TOKEN": true, "PATH": false, "HOME": false, "TOKEN": false, "TOKENS_URL": false, "API_KEY_ID": false,
	} {
		if got := l.Denied(name); got != want {
			t.Errorf("Denied(%q) = %v, want %v", name, got, want)
		}
	}
}

func load(t *testing.T, name, content string) (*List, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(f)
}

// A custom list adds to the built-in one unless it says replace: true; the
// sealing keys are denied either way.
func TestLoadAddsUnlessItReplaces(t *testing.T) {
	for _, c := range []struct {
		name, content string
		replace       bool
	}{
		{"add.json", `{"names": ["ONLY_THIS"], "patterns": ["CORP_*"]}`, false},
		{"add.cue", "names: [\"ONLY_THIS\"]\npatterns: [\"CORP_*\"]\nreplace: false\n", false},
		{"replace.json", `{"names": ["ONLY_THIS"], "patterns": ["CORP_*"], "replace": true}`, true},
		{"replace.cue", "// Our own list.\nreplace: true\nnames: [\"only_this\"]\npatterns: [\"CORP_*\"]\n", true},
	} {
		l, err := load(t, c.name, c.content)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !l.Denied("only_this") || !l.Denied("CORP_X") {
			t.Errorf("%s: the file's names and patterns are not denied", c.name)
		}
		if got := l.Denied("GITHUB_TOKEN") && l.Denied("DB_PASSWORD"); got == c.replace {
			t.Errorf("%s: the built-in list is kept = %v, want %v", c.name, got, !c.replace)
		}
		for _, n := range AlwaysDenied() {
			if !l.Denied(n) || !l.Denied(strings.ToLower(n)) {
				t.Errorf("%s: the sealing key %s is not denied", c.name, n)
			}
		}
	}
}

// An empty, comment-only or misspelt file is an error naming the file (and
// for a field, its position and the field it resembles), never an empty
// list.
func TestLoadRefusesWhatDeniesNothing(t *testing.T) {
	for _, c := range []struct{ name, content, want string }{
		{"empty.cue", "", "lists no names and no patterns"},
		{"comments.cue", "// names: [\"X\"]\n", "lists no names and no patterns"},
		{"empty.json", `{}`, "lists no names and no patterns"},
		{"lists.json", `{"names": [], "patterns": [], "replace": true}`, "lists no names and no patterns"},
		{"names.json", `{"Names": ["X"]}`, `names.json:1:2: unknown field "Names"; did you mean "names"?`},
		{"patterns.json", "{\n  \"names\": [\"A\"],\n  \"Patterns\": [\"*_X\"]\n}", `patterns.json:3:3: unknown field "Patterns"; did you mean "patterns"?`},
		{"typo.cue", "names: [\"A\"]\npaterns: [\"*_X\"]\n", `typo.cue:2:1: unknown field "paterns"; did you mean "patterns"?`},
		{"replaces.cue", "names: [\"A\"]\nreplaces: true\n", `unknown field "replaces"; did you mean "replace"?`},
		{"other.json", `{"names": ["A"], "allow": ["B"]}`, `other.json:1:18: unknown field "allow"; a deny-list has the fields names, patterns, replace`},
		{"type.json", `{"names": "x"}`, "type.json"},
		{"replace-type.json", `{"names": ["A"], "replace": "yes"}`, "replace-type.json"},
		{"pattern.json", `{"names": [], "patterns": ["["]}`, `bad pattern "["`},
		{"syntax.json", `{"names": [`, "syntax.json"},
	} {
		l, err := load(t, c.name, c.content)
		if err == nil {
			t.Errorf("%s loads (%v)", c.name, l)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: %q, want it to name the file and say %q", c.name, err, c.want)
		}
	}
}

// A byte order mark does not move positions.
func TestLoadWithByteOrderMark(t *testing.T) {
	if _, err := load(t, "bom.json", "\uFEFF{\"names\": [\"A\"]}"); err != nil {
		t.Error(err)
	}
	if _, err := load(t, "bom.json", "\uFEFF{\"Names\": [\"A\"]}"); err == nil || !strings.Contains(err.Error(), "bom.json:1:2:") {
		t.Errorf("%v", err)
	}
}

// A blank name or pattern denies nothing: a list made of blanks would be in
// effect empty, so it is refused like an empty one.
func TestLoadRefusesBlankEntries(t *testing.T) {
	for _, content := range []string{
		`{"names": [""], "replace": true}`,
		`{"names": ["OK_NAME", "  "]}`,
		`{"patterns": [""], "replace": true}`,
	} {
		l, err := load(t, "blank.json", content)
		if err == nil || !strings.Contains(err.Error(), "is blank and would deny nothing") {
			t.Errorf("%s: list %v, error %v", content, l, err)
		}
	}
	if _, err := load(t, "ok.json", `{"names": ["OK_NAME"], "replace": true}`); err != nil {
		t.Errorf("a list with one name: %v", err)
	}
}
