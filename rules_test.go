package mcpc_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/importer"
	"github.com/mcpc-dev/mcpc/internal/golden"
	"github.com/mcpc-dev/mcpc/policies/lint"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// TestEveryRuleHasGoldenCases is the meta-test: every rule in the registry
// has a case that triggers it (fixtures/rule-<id>/, its golden shows the
// rule) and a near-miss (fixtures/rule-<id>-ok/) that stays clean.
//
// A rule in goTestCases has its cases in a Go test instead of fixtures/:
// the test writes the same two goldens, whose first line names it.
func TestEveryRuleHasGoldenCases(t *testing.T) {
	for id, c := range goTestCases {
		checkGoTestCase(t, id, c)
	}
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

// goTestCase names the Go test that runs a rule's trigger and near-miss.
type goTestCase struct {
	pkg, test string
}

// goTestCases are the rules whose cases need what the golden harness cannot
// set up: remote-tool-missing needs a live remote server (on 127.0.0.1) that
// lists fewer tools than the allowlist names.
var goTestCases = map[string]goTestCase{
	"remote-tool-missing": {pkg: "cmd/mcpc/cli", test: "TestRuleRemoteToolMissing"},
}

// checkGoTestCase checks that a Go-test-backed case is one: the test exists
// in its package, both goldens say they come from it, and no fixtures/
// folder claims the same case.
func checkGoTestCase(t *testing.T, id string, c goTestCase) {
	t.Helper()
	if _, ok := rules.Lookup(id); !ok {
		t.Errorf("goTestCases names %s, which is not a rule of the registry", id)
	}
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(filepath.FromSlash(c.pkg), "*_test.go"))
	found := false
	for _, f := range files {
		parsed, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range parsed.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == c.test {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("rule %s: its case %s is not a test of %s", id, c.test, c.pkg)
	}
	header := "# go test ./" + c.pkg + " -run " + c.test + " "
	for _, name := range []string{"rule-" + id + ".txt", "rule-" + id + "-ok.txt"} {
		b, err := os.ReadFile(filepath.Join("golden", name))
		if err == nil && !strings.HasPrefix(string(b), header) {
			t.Errorf("golden/%s does not come from %s (its first line is not %q)", name, c.test, header)
		}
	}
	for _, dir := range []string{"rule-" + id, "rule-" + id + "-ok"} {
		if _, err := os.Stat(filepath.Join("fixtures", dir)); err == nil {
			t.Errorf("fixtures/%s exists, but the cases of %s are %s", dir, id, c.test)
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
	b.WriteString("This file is generated from `policies/rules/registry.go` and the packs in `policies/` by `go test . -run TestRulesDoc -update`.\n\n")
	b.WriteString("| id | severity | description |\n|---|---|---|\n")
	for _, r := range allRules(t) {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", r.ID, r.ID, r.Severity, r.Description)
	}
	for _, r := range allRules(t) {
		fmt.Fprintf(&b, "\n## %s\n\n%s (%s)\n\nChecked in `%s`.\n\nExample:\n\n```\n%s\n```\n", r.ID, r.Description, r.Severity, r.Home, r.Example)
	}
	golden.Compare(t, filepath.Join("docs", "rules.md"), b.String())
}

// TestEveryRuleNamesItsHome: each rule's Home is a file (or a pack's
// directory) of the tree that names the rule: in Go its value
// (rules.Name), in CUE or a pack its id.
func TestEveryRuleNamesItsHome(t *testing.T) {
	values := declaredNames(t) // rule id → the name of its value in package rules
	for _, r := range allRules(t) {
		if r.Home == "" {
			t.Errorf("rule %s names no home", r.ID)
			continue
		}
		var texts []string
		err := filepath.WalkDir(filepath.FromSlash(r.Home), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				texts = append(texts, string(b))
			}
			return err
		})
		if err != nil {
			t.Errorf("rule %s: its home %s: %v", r.ID, r.Home, err)
			continue
		}
		want := `"` + r.ID + `"`
		if v, ok := values[r.ID]; ok && strings.HasSuffix(r.Home, ".go") {
			want = "rules." + v
		}
		found := false
		for _, text := range texts {
			found = found || strings.Contains(text, want)
		}
		if !found {
			t.Errorf("rule %s: its home %s does not name it (%s)", r.ID, r.Home, want)
		}
	}
}

// declaredNames maps each rule id declared in policies/rules/registry.go
// to the name of its value.
func declaredNames(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("policies", "rules", "registry.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\t(\w+)\s*=\s*declare\(Rule\{ID: "([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
		out[m[2]] = m[1]
	}
	if len(out) == 0 {
		t.Fatal("no rule declarations found in registry.go")
	}
	return out
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
	for _, r := range append(allRules(t), importer.Codes...) {
		declared[r.ID] = string(r.Severity)
	}
	// cb-target-os and remote-url-insecure are info for a disabled CraftBot
	// server (it starts and connects nothing), and so are the rules of
	// servers that cannot start or connect.
	varies := map[string]string{"cb-target-os": "info", "remote-url-insecure": "info",
		"npx-without-yes": "info", "placeholder-value": "info", "craftbot-605efb4-sse": "info", "craftbot-605efb4-websocket": "info"}
	// A craftbot entry the host skips or cannot start, or starts otherwise
	// than written, is an error when the host starts it (a warning when
	// it is disabled); so are cb-action-name and cb-action-escape (an
	// enabled server's tools, a disabled one's name).
	for _, id := range []string{"cb-transport", "cb-missing-command", "cb-missing-url", "cb-duplicate-name", "cb-name-invalid", "cb-cannot-start", "cb-field-type", "cb-action-name", "cb-action-escape"} {
		varies[id] = "error"
	}
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
				continue // a finding of another tool's output (a fixture's own text)
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

// TestReportsGoThroughRuleValues: outside package rules, no Go code (tests
// aside) spells a rule id or builds a diagnostic's rule or severity by hand.
// A finding is made by its rule's value (rules.NameShadowed.At, InfoAt,
// ErrorAt, Claim), which fills in the declared id and severity, so that what
// mcpc rules, docs/rules.md and SARIF's defaultConfiguration say is what
// mcpc reports. The scan flags, in every non-test .go file outside policies/rules/:
// a string literal equal to a declared rule id; a diag.Diagnostic literal
// with a Rule or Severity field; an assignment of a literal (a string, or
// diag.Error, diag.Warning, diag.Info) to a .Rule or .Severity field; and a
// rules.Rule literal with a literal severity (a rule declared outside the
// registry), except in the one file of another namespace's declarations:
// the import report's codes (compile/importer/codes.go), which its converter
// reports through in the same way.
func TestReportsGoThroughRuleValues(t *testing.T) {
	declared := map[string]bool{}
	for _, r := range allRules(t) {
		declared[r.ID] = true
	}
	files := nonTestGoFiles(t)
	if len(files) < 100 {
		t.Fatalf("only %d Go files found: the walk is stale", len(files))
	}
	for _, f := range files {
		for _, problem := range handBuiltFindings(t, f, declared) {
			t.Error(problem)
		}
	}
}

// TestTheRuleValueGuardFlagsHandBuiltFindings proves the scan above sees
// each thing it forbids, on a file written the old way.
func TestTheRuleValueGuardFlagsHandBuiltFindings(t *testing.T) {
	src := `package x

import "github.com/mcpc-dev/mcpc/internal/diag"
import "github.com/mcpc-dev/mcpc/policies/rules"

const ruleX = "name-shadowed"

func f(pos diag.Pos, d *diag.Diagnostic, ds []diag.Diagnostic) []diag.Diagnostic {
	d.Severity = diag.Error
	ds[0].Rule = "anything"
	_ = rules.Rule{ID: ruleX, Severity: diag.Warning}
	_ = rules.NameShadowed.At(pos, "fine", "")
	_ = "name-shadowed-not-a-rule"
	return []diag.Diagnostic{{File: pos.File, Rule: ruleX}, diag.Diagnostic{Severity: diag.Info}}
}
`
	dir := t.TempDir()
	file := filepath.Join(dir, "x.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := handBuiltFindings(t, file, map[string]bool{"name-shadowed": true})
	want := []string{
		`x.go:6:15: the rule id "name-shadowed" is spelt out`,
		`x.go:9:2: .Severity is set to a literal`,
		`x.go:10:2: .Rule is set to a literal`,
		`x.go:11:6: a rules.Rule with a literal severity`,
		`x.go:14:44: a diag.Diagnostic literal sets Rule`,
		`x.go:14:74: a diag.Diagnostic literal sets Severity`,
	}
	for i := range got {
		got[i] = strings.TrimPrefix(got[i], dir+string(filepath.Separator))
		got[i] = got[i][:strings.Index(got[i], " (")]
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the guard found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// codeDeclarations are the files that declare the codes of another
// namespace than the rule registry, as policies/rules/registry.go declares rules.
var codeDeclarations = map[string]bool{filepath.Join("compile", "importer", "codes.go"): true}

// nonTestGoFiles are the module's Go files outside policies/rules/, tests,
// node_modules and codeDeclarations.
func nonTestGoFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case "node_modules", filepath.Join("policies", "rules"), ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && !codeDeclarations[path] {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// handBuiltFindings scans one Go file for what TestReportsGoThroughRuleValues
// forbids, each problem as "file:line:col: what (how to fix)".
func handBuiltFindings(t *testing.T, file string, declared map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	flag := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%s: %s (report through the rule's value in package rules)", fset.Position(n.Pos()), what))
	}
	isSel := func(e ast.Expr, pkg, name string) bool {
		s, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := s.X.(*ast.Ident)
		return ok && x.Name == pkg && (name == "" || s.Sel.Name == name)
	}
	isSeverity := func(e ast.Expr) bool {
		return isSel(e, "diag", "Error") || isSel(e, "diag", "Warning") || isSel(e, "diag", "Info")
	}
	isDiagnostic := func(e ast.Expr) bool {
		if f.Name.Name == "diag" {
			if id, ok := e.(*ast.Ident); ok && id.Name == "Diagnostic" {
				return true
			}
		}
		return isSel(e, "diag", "Diagnostic")
	}
	checkDiagnostic := func(lit *ast.CompositeLit) {
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "Rule" || k.Name == "Severity") {
					flag(kv, "a diag.Diagnostic literal sets "+k.Name)
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil && declared[s] {
					flag(n, fmt.Sprintf("the rule id %q is spelt out", s))
				}
			}
		case *ast.CompositeLit:
			switch {
			case isDiagnostic(n.Type):
				checkDiagnostic(n)
			case isSel(n.Type, "rules", "Rule"):
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && isSeverity(kv.Value) {
						flag(n, "a rules.Rule with a literal severity")
					}
				}
			default:
				// []diag.Diagnostic{{…}}: the elements' type is elided.
				if arr, ok := n.Type.(*ast.ArrayType); ok && isDiagnostic(arr.Elt) {
					for _, el := range n.Elts {
						if lit, ok := el.(*ast.CompositeLit); ok && lit.Type == nil {
							checkDiagnostic(lit)
						}
					}
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != len(n.Rhs) {
				break
			}
			for i, lhs := range n.Lhs {
				sel, ok := lhs.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Rule" && sel.Sel.Name != "Severity" {
					continue
				}
				if _, lit := n.Rhs[i].(*ast.BasicLit); lit || isSeverity(n.Rhs[i]) {
					flag(n, "."+sel.Sel.Name+" is set to a literal")
				}
			}
		}
		return true
	})
	return out
}
