package mcpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/lint"
	"github.com/mcpc-dev/mcpc/rules"
)

// TestEveryRuleHasGoldenCases is the meta-test: every rule in the registry
// has a case that triggers it (fixtures/rule-<id>/, its golden shows the
// rule) and a near-miss (fixtures/rule-<id>-ok/) that stays clean.
func TestEveryRuleHasGoldenCases(t *testing.T) {
	for _, r := range allRules(t) {
		trigger, err := os.ReadFile(filepath.Join("golden", "rule-"+r.ID+".txt"))
		if err != nil {
			t.Errorf("rule %s has no trigger case: %v", r.ID, err)
		} else if !strings.Contains(string(trigger), "["+r.ID+"]") {
			t.Errorf("rule %s: golden/rule-%s.txt does not show the rule", r.ID, r.ID)
		}
		near, err := os.ReadFile(filepath.Join("golden", "rule-"+r.ID+"-ok.txt"))
		if err != nil {
			t.Errorf("rule %s has no near-miss case: %v", r.ID, err)
			continue
		}
		// Clean: exit 0 and no diagnostic of any rule.
		if !strings.Contains(string(near), "\nexit 0\n") {
			t.Errorf("rule %s: the near-miss golden/rule-%s-ok.txt does not exit 0", r.ID, r.ID)
		}
		for _, other := range allRules(t) {
			if strings.Contains(string(near), "["+other.ID+"]") {
				t.Errorf("rule %s: the near-miss golden/rule-%s-ok.txt reports %s", r.ID, r.ID, other.ID)
			}
		}
	}
	// And no case names a rule that does not exist.
	dirs, _ := filepath.Glob(filepath.Join("fixtures", "rule-*"))
	for _, d := range dirs {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(d), "rule-"), "-ok")
		found := false
		for _, r := range allRules(t) {
			if id == r.ID || strings.HasPrefix(id, r.ID+"-") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s names no rule in the registry", d)
		}
	}
}

// TestRulesDoc keeps docs/rules.md equal to the registry (go test . -update
// rewrites it).
func TestRulesDoc(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Rules\n\n")
	b.WriteString("Every diagnostic mcpc prints carries one of these rule ids. `mcpc rules` prints the same list.\n")
	b.WriteString("Each rule has golden cases: `fixtures/rule-<id>/` triggers it, `fixtures/rule-<id>-ok/` is a near-miss that stays clean.\n")
	b.WriteString("This file is generated from `rules/registry.go`, `policies/*.go` and the packs in `policies/` by `go test . -update`.\n\n")
	b.WriteString("| id | severity | description |\n|---|---|---|\n")
	for _, r := range allRules(t) {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", r.ID, r.ID, r.Severity, r.Description)
	}
	for _, r := range allRules(t) {
		fmt.Fprintf(&b, "\n## %s\n\n%s (%s)\n\nExample:\n\n```\n%s\n```\n", r.ID, r.Description, r.Severity, r.Example)
	}
	compareGolden(t, filepath.Join("docs", "rules.md"), b.String())
}

// allRules are the rules mcpc rules lists: the registry, the Go deployment
// rules and the rules of the built-in policy packs.
func allRules(t *testing.T) []rules.Rule {
	t.Helper()
	all, err := lint.Rules()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestCheckAttributesNameDeclaredRules: every @check(rule=…) of the CUE
// schemas names a rule mcpc declares, so a schema cannot report a rule that
// has no description, no severity and no golden cases.
func TestCheckAttributesNameDeclaredRules(t *testing.T) {
	declared := map[string]bool{}
	for _, r := range allRules(t) {
		declared[r.ID] = true
	}
	files, _ := filepath.Glob(filepath.Join("schema", "*.cue"))
	if len(files) == 0 {
		t.Fatal("no schema files")
	}
	attr := regexp.MustCompile(`@check\(rule="([^"]+)"`)
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range attr.FindAllStringSubmatch(string(b), -1) {
			found++
			if !declared[m[1]] {
				t.Errorf("%s: @check(rule=%q) names no declared rule", f, m[1])
			}
		}
	}
	if found == 0 {
		t.Fatal("no @check attribute found: the pattern is stale")
	}
}

// TestGoldenSeveritiesMatchTheDeclarations: every finding in the golden
// outputs carries its rule's declared severity, so that what SARIF's
// defaultConfiguration and `mcpc rules` say is what mcpc reports. The
// exceptions are listed: a rule whose severity depends on the case by
// design, and cases whose mcpc.cue sets severities.
func TestGoldenSeveritiesMatchTheDeclarations(t *testing.T) {
	declared := map[string]string{}
	for _, r := range allRules(t) {
		declared[r.ID] = string(r.Severity)
	}
	// cb-target-os and remote-url-insecure are info for a disabled CraftBot
	// server (it starts and connects nothing).
	varies := map[string]string{"cb-target-os": "info", "remote-url-insecure": "info"}
	line := regexp.MustCompile(`(?m)^\S+:\d+:\d+: (error|warning|info): .* \[([a-z0-9-]+)\]$`)
	files, _ := filepath.Glob(filepath.Join("golden", "*.txt"))
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		if cue, err := os.ReadFile(filepath.Join("fixtures", name, "mcpc.cue")); err == nil && strings.Contains(string(cue), "rules:") {
			continue // the deployment configures severities
		}
		for _, m := range line.FindAllStringSubmatch(string(b), -1) {
			sev, rule := m[1], m[2]
			want, ok := declared[rule]
			if !ok {
				continue // import-* codes and the like are checked where they are declared
			}
			checked++
			if sev != want && varies[rule] != sev {
				t.Errorf("%s: [%s] reported as %s, declared %s", f, rule, sev, want)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d findings checked: the pattern is stale", checked)
	}
}
