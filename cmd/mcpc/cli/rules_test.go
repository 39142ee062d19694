package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// mcpc rules ID shows that rule in full: severity, description, example,
// where its check lives and its docs entry; in JSON too. An unknown id is
// exit 2 with the id it may have meant.
func TestRulesShowsOneRuleInFull(t *testing.T) {
	code, stdout, stderr := run(t, "rules", "ignore-unused")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"ignore-unused (warning)\n", "matched no finding", "Example:\n  ignores: [",
		"Checked in: policies/lint/apply.go\n", "Docs: " + RulesDocURL + "#ignore-unused\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in\n%s", want, stdout)
		}
	}
	code, stdout, _ = run(t, "rules", "--format", "json", "package-unpinned")
	var r map[string]string
	if err := json.Unmarshal([]byte(stdout), &r); code != ExitOK || err != nil || r["severity"] != "warning" || r["home"] != "policies/baseline" ||
		r["docs"] != RulesDocURL+"#package-unpinned" || r["example"] == "" || r["description"] == "" {
		t.Fatalf("exit %d, %v: %s", code, err, stdout)
	}
	code, _, stderr = run(t, "rules", "pakage-unpinned")
	if code != ExitUsage || !strings.Contains(stderr, `rule "pakage-unpinned" does not exist; did you mean "package-unpinned"?`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// An unknown command says which one was meant.
func TestUnknownCommandDidYouMean(t *testing.T) {
	code, _, stderr := run(t, "lnt")
	if code != ExitUsage || !strings.Contains(stderr, `unknown command "lnt" (did you mean "lint"?)`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, _, stderr := run(t, "zzzzzzzz"); strings.Contains(stderr, "did you mean") {
		t.Fatalf("a guess for a word nothing is near: %s", stderr)
	}
}
