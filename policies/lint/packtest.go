package lint

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// TestDataDir is the directory of a pack that holds its test deployments
// (mcpc policy test), and ExpectedFile the file in each that lists the
// findings the pack must produce there.
const (
	TestDataDir  = "testdata"
	ExpectedFile = "expected.txt"
)

// PackCase is one test deployment of a pack: a directory of its testdata/
// with the deployment's sources (its mcpc.cue, or sources lint recognises
// without one) and ExpectedFile.
type PackCase struct {
	Name string // the directory's name
	Dir  string
	// Diagnostics are what the pack found there, after the case's mcpc.cue
	// (severities, ignores), with their files relative to Dir: the pack's
	// own rules, policy-invalid, and the errors of the compiler (a case
	// whose sources do not compile tests nothing). Other rules' findings
	// (the Go rules, which read this machine) are not the pack's.
	Diagnostics []diag.Diagnostic
	// Redact hides the case's secrets in what is printed.
	Redact func(string) string
}

// TestPack runs the pack in dir over each deployment of dir/testdata, alone:
// no other pack, no version pack, and a host environment that is only what
// the case's sources say (a pack's tests do not depend on the machine). A
// pack with the name of a built-in pack replaces it (LoadReplacing). A pack
// that does not load, or a case whose mcpc.cue does not, comes back as
// diagnostics; a directory without cases, or a case without sources, as an
// InputError.
func TestPack(dir string) (*policies.Pack, []PackCase, []diag.Diagnostic, error) {
	pack, ds := policies.LoadReplacing(dir)
	if len(ds) > 0 {
		return nil, nil, ds, nil
	}
	root := filepath.Join(dir, TestDataDir)
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, nil, inputError("policy test %s: %v (each directory of %s is a test deployment with its %s)", dir, err, root, ExpectedFile)
	}
	own := map[string]bool{rules.PolicyInvalid.ID: true}
	for _, r := range pack.Rules() {
		own[r.ID] = true
	}
	var cases []PackCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c, ds, err := runCase(pack, own, e.Name(), filepath.Join(root, e.Name()))
		if err != nil || len(ds) > 0 {
			return nil, nil, ds, err
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, nil, nil, inputError("policy test %s: %s has no test deployment (a directory with its sources and %s)", dir, root, ExpectedFile)
	}
	return pack, cases, nil, nil
}

func runCase(pack *policies.Pack, own map[string]bool, name, dir string) (PackCase, []diag.Diagnostic, error) {
	var d *Deployment
	if file := filepath.Join(dir, FileName); fileExists(file) {
		var ds []diag.Diagnostic
		if d, ds = Load(file); len(ds) > 0 {
			return PackCase{}, ds, nil
		}
	} else {
		found, err := Detect(dir)
		if err != nil {
			return PackCase{}, nil, inputError("policy test: case %s: no sources found: give it an %s or the sources lint recognises", dir, FileName)
		}
		found.Dir = dir
		found.join()
		d = &found
	}
	opts, err := CompileOptions(d, dir, Flags{})
	if err != nil {
		return PackCase{}, nil, inputError("policy test: case %s: %v", dir, err)
	}
	rep, err := Run(Options{Compile: opts, Deployment: d, Packs: []*policies.Pack{pack}})
	if err != nil {
		return PackCase{}, nil, inputError("policy test: case %s: %v", dir, err)
	}
	compileErrors := map[string]bool{}
	for _, x := range rep.Result.Diagnostics {
		if x.Severity == diag.Error {
			compileErrors[x.Rule] = true
		}
	}
	c := PackCase{Name: name, Dir: dir, Redact: rep.Result.Redactor.Redact}
	for _, x := range rep.Diagnostics {
		if !own[x.Rule] && !(x.Severity == diag.Error && compileErrors[x.Rule]) {
			continue
		}
		if rel, err := filepath.Rel(dir, x.File); err == nil && filepath.IsLocal(rel) {
			x.File = filepath.ToSlash(rel)
		}
		c.Diagnostics = append(c.Diagnostics, x)
	}
	diag.Sort(c.Diagnostics)
	return c, nil, nil
}

// Untested are the rules of pack that no case reports.
func Untested(pack *policies.Pack, cases []PackCase) []string {
	reported := map[string]bool{}
	for _, c := range cases {
		for _, x := range c.Diagnostics {
			reported[x.Rule] = true
		}
	}
	var out []string
	for _, r := range pack.Rules() {
		if !reported[r.ID] {
			out = append(out, r.ID)
		}
	}
	sort.Strings(out)
	return out
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
