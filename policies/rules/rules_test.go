package rules

import (
	"regexp"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// Every declaration is complete and its id is taken once: Lookup and Of
// return the first rule of an id, so a second one would never be reported.
func TestDeclarationsAreCompleteAndUnique(t *testing.T) {
	id := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, r := range registry {
		if !id.MatchString(r.ID) {
			t.Errorf("rule id %q is not lower-case words joined by -", r.ID)
		}
		if seen[r.ID] {
			t.Errorf("rule %s is declared twice", r.ID)
		}
		seen[r.ID] = true
		if r.Severity != diag.Error && r.Severity != diag.Warning && r.Severity != diag.Info {
			t.Errorf("rule %s: default severity %q, want error, warning or info", r.ID, r.Severity)
		}
		if r.Description == "" || r.Example == "" {
			t.Errorf("rule %s lacks a description or an example", r.ID)
		}
	}
	if len(All()) != len(registry) || len(registry) < 70 {
		t.Errorf("%d rules declared, All returns %d", len(registry), len(All()))
	}
}

// The reporting methods fill in the rule's id and the severity they name.
func TestReportingFillsIDAndSeverity(t *testing.T) {
	pos := diag.Pos{File: "a.json", Line: 2, Column: 3}
	want := diag.Diagnostic{File: "a.json", Line: 2, Column: 3, Severity: diag.Warning, Rule: "name-shadowed", Message: "m", Suggestion: "s"}
	if got := NameShadowed.At(pos, "m", "s"); got != want {
		t.Errorf("At: %+v", got)
	}
	if got := NameShadowed.InfoAt(pos, "m", "s"); got.Severity != diag.Info || got.Rule != "name-shadowed" {
		t.Errorf("InfoAt: %+v", got)
	}
	if got := CbEntryInvalid.ErrorAt(pos, "m", "s"); got.Severity != diag.Error || got.Rule != "cb-entry-invalid" {
		t.Errorf("ErrorAt: %+v", got)
	}
	other := TypeMismatch.At(pos, "m", "s")
	if got := PlanInvalid.Claim(other); got.Rule != "plan-invalid" || got.Severity != diag.Error || got.Message != "m" || got.Pos() != pos {
		t.Errorf("Claim: %+v", got)
	}
	if got := Of("remote-tool-missing"); got != RemoteToolMissing {
		t.Errorf("Of: %+v", got)
	}
	if got := Of("no-such-rule"); got.ID != "no-such-rule" || got.Severity != diag.Error {
		t.Errorf("Of an undeclared id: %+v", got)
	}
}
