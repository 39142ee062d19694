package mcpc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/mcpc-dev/mcpc/"

// mayImport is the import direction of mcpc's packages: for each package, the
// packages of this module it may import (outside its tests). This table is
// the one statement of it: package doc comments say each package's job and
// do not restate it. Shared vocabulary (diagnostics,
// positioned values, tool names, redaction, the plan) sits in leaf packages,
// so dependencies point one way: the CLI uses everything, the runtime runs a
// plan without the compiler, and nothing imports the CLI.
var mayImport = map[string][]string{
	// Leaves: the standard library (and CUE or the MCP SDK) only.
	"internal/diag":       {},
	"internal/redact":     {},
	"internal/inputfile":  {},
	"internal/term":       {},
	"internal/atomicfile": {},
	"internal/loopback":   {},
	// What a value left for the operator to fill in looks like.
	"internal/placeholder": {},
	// The one clock interface: the runtime's, the gateway's sessions', the
	// watcher's.
	"internal/clock": {},
	// The url policy and origin guard of every remote server.
	"internal/remotehttp": {"internal/loopback"},
	// The user's runtime directory, token files, owner-only sockets.
	"internal/private": {"internal/atomicfile", "internal/inputfile"},

	"policies/rules":        {"internal/diag"},
	"internal/node":         {"internal/diag", "policies/rules"},
	"compile/naming":        {"policies/rules"},
	"compile/plan/denylist": {"internal/inputfile"},
	"schema":                {"internal/diag", "internal/node", "policies/rules"},
	"compile/plan":          {"internal/diag", "internal/node", "policies/rules", "schema", "compile/plan/denylist"},
	// What the runtime needs of CraftBot: how tools become actions.
	"compile/craftbot/actions": {"policies/rules"},
	"policies":                 {"internal/diag", "internal/node", "internal/placeholder", "policies/rules", "compile/plan", "policies/toollock", "internal/inputfile"},

	// MCP's transports: the stdio line transports, the websocket and sse clients.
	"runtime/transport": {"internal/remotehttp", "internal/node", "internal/clock"},
	// A server process: start, watch, reap and kill its process group, the
	// guard, the stderr tail, the cancellation ledger. Below the host: it
	// knows no plan, host, chat or gateway.
	"runtime/supervisor": {"runtime/transport"},

	"compile": {"internal/diag", "internal/node", "policies/rules", "schema", "compile/plan", "internal/redact", "compile/plan/denylist", "internal/inputfile"},
	// The volcanic profile: the .NET host's appsettings and environment,
	// the Playwright preset and settings.json.
	"compile/volcanic": {"compile", "compile/plan", "compile/plan/denylist", "internal/diag", "internal/node", "internal/redact", "policies/rules", "schema"},
	// Every profile, linked (and registered) by one import.
	"compile/profiles": {"compile/craftbot", "compile/volcanic"},
	// The craftbot profile: mcp_config.json read, compiled, explained and
	// edited.
	"compile/craftbot": {"compile", "compile/plan", "internal/diag", "internal/atomicfile", "internal/inputfile", "internal/placeholder", "internal/remotehttp", "internal/node", "internal/redact", "policies/rules", "schema"},
	// Host version packs: checks of the compiler's model of one host's file.
	"policies/versionpacks": {"compile", "compile/craftbot", "compile/plan", "internal/diag", "internal/node", "policies/rules"},
	"policies/lint":         {"compile", "compile/craftbot", "compile/plan", "policies", "policies/versionpacks", "compile/plan/denylist", "schema", "policies/toollock", "internal/node", "internal/diag", "policies/rules", "internal/inputfile"},
	"internal/report":       {"internal/diag", "policies/rules", "internal/term"},
	"policies/toollock":     {"internal/diag", "internal/node", "policies/rules", "schema", "compile/plan"},
	"runtime/remote":        {"internal/diag", "internal/node", "policies/rules", "schema", "internal/redact", "internal/atomicfile", "internal/inputfile", "internal/remotehttp", "internal/term"},
	// A chat's set of remote server connections: it reports to its owner
	// through hooks it declares, never by importing the runtime.
	"runtime/remoteset": {"compile/naming", "internal/clock", "internal/redact", "policies/rules", "runtime/remote"},
	"runtime":           {"internal/clock", "compile/craftbot/actions", "compile/plan", "compile/plandiff", "compile/naming", "policies/rules", "internal/redact", "runtime/remote", "runtime/remoteset", "compile/plan/denylist", "runtime/transport", "runtime/supervisor", "runtime/internal/hooks"},
	// Test hooks of the host core: a leaf.
	"runtime/internal/hooks": {},
	// The gateway: the MCP server side of a host, built on the host core's
	// port (runtime/port.go); the core's row does not name it, and cannot:
	// the import would be a cycle.
	"runtime/gateway":  {"compile/naming", "compile/plan", "internal/loopback", "internal/private", "internal/redact", "runtime", "runtime/transport"},
	"compile/importer": {"internal/diag", "internal/node", "compile/plan/denylist", "internal/redact", "policies/rules"},

	"runtime/toolreport": {"compile/craftbot/actions", "internal/diag", "runtime/transport", "compile/naming", "compile/plan", "internal/redact", "runtime/remote", "runtime/remoteset", "policies/rules", "runtime", "policies/toollock"},

	// mcpc ui: the servers page (both profiles, craftbot edits) and a gateway's.
	"cmd/mcpc/ui": {"compile", "compile/craftbot", "internal/diag", "internal/inputfile", "internal/loopback", "internal/private", "compile/plan", "runtime", "runtime/gateway"},

	// What a plan change makes a runtime do (mcpc diff, and reload).
	"compile/plandiff": {"compile/plan", "internal/term"},
	// Watching files for a reload (mcpc run --watch): fsnotify and the clock.
	"internal/watch": {"internal/clock"},

	"cmd/mcpc/cli": {"compile", "compile/profiles", "compile/volcanic", "compile/craftbot", "compile/craftbot/actions", "internal/diag", "compile/importer", "internal/atomicfile", "internal/inputfile", "internal/loopback", "internal/private", "internal/term", "runtime/transport", "internal/watch", "policies/lint", "compile/naming", "internal/node", "compile/plan", "runtime/supervisor",
		"compile/plandiff", "policies", "compile/plan/denylist", "internal/redact", "runtime/remote", "runtime/remoteset", "internal/report", "policies/rules", "runtime", "runtime/gateway", "schema", "policies/toollock", "runtime/toolreport", "cmd/mcpc/ui"},
	"cmd/mcpc": {"cmd/mcpc/cli"},

	// Test support: imported by tests only.
	"internal/testmain":            {},
	"internal/testservers":         {"internal/testmain"},
	"internal/diagtest":            {"internal/diag"},
	"internal/golden":              {},
	"internal/clocktest":           {"internal/clock"},
	"runtime/remote/remotetest":    {},
	"runtime/remote/sealtest":      {"internal/testservers", "runtime/remote"},
	"fixtures/servers/testserver":  {},
	"fixtures/servers/wsserver":    {},
	"fixtures/servers/conformance": {},
}

// testOnly are packages that only tests may import.
var testOnly = []string{"internal/testmain", "internal/testservers", "internal/diagtest", "internal/golden", "internal/clocktest", "runtime/remote/remotetest", "runtime/remote/sealtest"}

// TestImportDirection guards the direction of dependencies: every package is
// in the table above, imports only what the table allows, and the runtime
// does not depend on the compiler, even indirectly.
func TestImportDirection(t *testing.T) {
	pkgs := modulePackages(t)
	seen := map[string]bool{}
	imports := map[string][]string{} // by import path, this module's only
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				imports[p.ImportPath] = append(imports[p.ImportPath], imp)
			}
		}
		pkg := strings.TrimPrefix(p.ImportPath, module)
		if p.ImportPath == strings.TrimSuffix(module, "/") {
			continue // the root package holds only tests
		}
		seen[pkg] = true
		allowed, ok := mayImport[pkg]
		if !ok {
			t.Errorf("package %s is not in mayImport: add it with the packages it may import", pkg)
			continue
		}
		for _, imp := range imports[p.ImportPath] {
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

	// What the runtime depends on, even indirectly: packages outside
	// the module do not import the module's, so the module's imports
	// reach all of it.
	deps := map[string]bool{}
	var walk func(string)
	walk = func(pkg string) {
		for _, imp := range imports[pkg] {
			if !deps[imp] {
				deps[imp] = true
				walk(imp)
			}
		}
	}
	walk(module + "runtime")
	if len(deps) == 0 {
		t.Fatal("the runtime imports none of the module's packages: go list did not list it")
	}
	for _, dep := range []string{module + "compile", module + "cmd/mcpc/cli"} {
		if deps[dep] {
			t.Errorf("the runtime depends on %s: it must run a plan without the compiler", dep)
		}
	}
}

// listedPackage is what the tests here read of `go list`.
type listedPackage struct {
	ImportPath, Dir                    string
	Imports, TestGoFiles, XTestGoFiles []string
}

var (
	listOnce   sync.Once
	listed     []listedPackage
	listFailed error
)

// modulePackages lists the module's packages, once for all the tests that
// read them (one `go list` costs half a second of CPU).
func modulePackages(t *testing.T) []listedPackage {
	t.Helper()
	listOnce.Do(func() {
		out, err := exec.Command("go", "list", "-json=ImportPath,Dir,Imports,TestGoFiles,XTestGoFiles", "./...").Output()
		if err != nil {
			listFailed = fmt.Errorf("go list: %v", err)
			return
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for dec.More() {
			var p listedPackage
			if err := dec.Decode(&p); err != nil {
				listFailed = fmt.Errorf("go list: %v", err)
				return
			}
			listed = append(listed, p)
		}
	})
	if listFailed != nil {
		t.Fatal(listFailed)
	}
	return listed
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
	mainCall := regexp.MustCompile(`(?m)^func TestMain\(m \*testing\.M\) \{[^}]*((testmain\.)?Run\(m\)|testservers\.Main\(m,)`)
	for _, p := range modulePackages(t) {
		files := append(append([]string(nil), p.TestGoFiles...), p.XTestGoFiles...)
		if len(files) == 0 {
			continue // no tests
		}
		found := false
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			found = found || mainCall.Match(b)
		}
		if !found {
			t.Errorf("%s: no TestMain that calls testmain.Run(m) or testservers.Main(m, …)", p.Dir)
		}
	}
}
