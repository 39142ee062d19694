package mcpc_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/mcpc-dev/mcpc/"

// mayImport is the import direction of mcpc's packages: for each package, the
// packages of this module it may import (outside its tests). Each package's
// doc comment says the same in words. Shared vocabulary (diagnostics,
// positioned values, tool names, redaction, the plan) sits in leaf packages,
// so dependencies point one way: the CLI uses everything, the runtime runs a
// plan without the compiler, and nothing imports the CLI.
var mayImport = map[string][]string{
	// Leaves: the standard library (and CUE or the MCP SDK) only.
	"diag":                {},
	"redact":              {},
	"internal/inputfile":  {},
	"internal/term":       {},
	"internal/atomicfile": {},
	"internal/loopback":   {},

	"rules":             {"diag"},
	"node":              {"diag", "rules"},
	"naming":            {"rules"},
	"policies/denylist": {"internal/inputfile"},
	"schema":            {"diag", "node", "rules"},
	"plan":              {"diag", "node", "rules", "schema", "policies/denylist"},
	"craftbot":          {"diag", "internal/atomicfile", "internal/inputfile", "internal/transport", "node", "redact", "rules", "schema"},
	"policies":          {"diag", "node", "rules", "plan", "toollock", "internal/inputfile"},

	// MCP's transports: the stdio line transports, the websocket and sse clients.
	"internal/transport": {"internal/loopback", "node"},

	"compile":  {"craftbot", "diag", "node", "rules", "schema", "plan", "redact", "policies/denylist", "internal/inputfile"},
	"lint":     {"compile", "craftbot", "policies", "policies/denylist", "schema", "toollock", "node", "diag", "rules", "internal/inputfile"},
	"report":   {"diag", "rules"},
	"toollock": {"diag", "node", "rules", "schema", "plan"},
	"remote":   {"diag", "node", "rules", "schema", "redact", "internal/atomicfile", "internal/inputfile", "internal/loopback", "internal/term"},
	"runtime":  {"craftbot", "plan", "plandiff", "naming", "node", "rules", "redact", "remote", "policies/denylist", "internal/loopback", "internal/transport"},
	"importer": {"diag", "node", "policies/denylist", "redact", "rules"},

	"toolreport": {"craftbot", "diag", "internal/transport", "naming", "plan", "redact", "remote", "rules", "runtime", "toollock"},

	// mcpc ui: the servers page (both profiles, craftbot edits) and a gateway's.
	"ui": {"compile", "craftbot", "diag", "internal/inputfile", "internal/loopback", "plan", "runtime"},

	// What a plan change makes a runtime do (mcpc diff, and reload).
	"plandiff": {"plan"},
	// Watching files for a reload (mcpc run --watch): fsnotify only.
	"internal/watch": {},

	"cmd/mcpc/cli": {"compile", "craftbot", "diag", "importer", "internal/atomicfile", "internal/inputfile", "internal/loopback", "internal/term", "internal/transport", "internal/watch", "lint", "naming", "node", "plan",
		"plandiff", "policies", "policies/denylist", "redact", "remote", "report", "rules", "runtime", "schema", "toollock", "toolreport", "ui"},
	"cmd/mcpc": {"cmd/mcpc/cli"},

	// Test support: imported by tests only.
	"internal/testmain":            {},
	"internal/testservers":         {"internal/testmain"},
	"internal/diagtest":            {"diag"},
	"remote/remotetest":            {},
	"fixtures/servers/testserver":  {},
	"fixtures/servers/wsserver":    {},
	"fixtures/servers/conformance": {},
}

// testOnly are packages that only tests may import.
var testOnly = []string{"internal/testmain", "internal/testservers", "internal/diagtest", "remote/remotetest"}

// TestImportDirection guards the direction of dependencies: every package is
// in the table above, imports only what the table allows, and the runtime
// does not depend on the compiler, even indirectly.
func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if fields[0] == strings.TrimSuffix(module, "/") {
			continue // the root package holds only tests
		}
		seen[pkg] = true
		allowed, ok := mayImport[pkg]
		if !ok {
			t.Errorf("package %s is not in mayImport: add it with the packages it may import, and say so in its doc comment", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			for _, only := range testOnly {
				if imp == only && !contains(testOnly, pkg) {
					t.Errorf("%s imports %s, which only tests may import", pkg, imp)
				}
			}
			if !contains(allowed, imp) {
				t.Errorf("%s imports %s; it may import only %v", pkg, imp, allowed)
			}
		}
	}
	var stale []string
	for pkg := range mayImport {
		if !seen[pkg] {
			stale = append(stale, pkg)
		}
	}
	sort.Strings(stale)
	for _, pkg := range stale {
		t.Errorf("mayImport names %s, which does not exist any more", pkg)
	}

	deps, err := exec.Command("go", "list", "-deps", "./runtime").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(deps)) {
		if dep == module+"compile" || dep == module+"cmd/mcpc/cli" {
			t.Errorf("the runtime depends on %s: it must run a plan without the compiler", dep)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestEveryTestBinaryUsesTestmain: every package with tests has a TestMain
// that runs testmain.Run or testservers.Main (which starts with
// testmain.NoRaceExitSleep), so that no test binary of the suite sleeps a
// second at exit under -race.
func TestEveryTestBinaryUsesTestmain(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}} {{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mainCall := regexp.MustCompile(`(?m)^func TestMain\(m \*testing\.M\) \{[^}]*((testmain\.)?Run\(m\)|testservers\.Main\(m,)`)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue // no tests
		}
		found := false
		for _, f := range fields[1:] {
			b, err := os.ReadFile(filepath.Join(fields[0], f))
			if err != nil {
				t.Fatal(err)
			}
			found = found || mainCall.Match(b)
		}
		if !found {
			t.Errorf("%s: no TestMain that calls testmain.Run(m) or testservers.Main(m, …)", fields[0])
		}
	}
}
