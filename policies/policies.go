// Package policies evaluates policy packs: CUE files of declarative rules over
// a compiled plan (SPEC §7–8, `mcpc lint --policy DIR`). A pack is a
// directory of .cue files of one CUE package. mcpc fills the field `input`
// with the plan, exactly as `mcpc plan` prints it (SPEC §6), and reads the
// pack's `rules`: each rule is one declaration with its id (the field name),
// severity, one-line description, example, and `deny`, the list of its
// violations, each with the plan path it is about, a message and optionally a
// suggestion:
//
//	package team
//
//	import "list"
//
//	input: _
//	launchers: ["npx", "uvx", "docker"]
//
//	rules: "team-launcher": {
//		severity:    "error"
//		description: "Servers start only through an approved launcher."
//		example:     "\"command\": \"/tmp/run.sh\""
//		deny: [for i, s in input.servers if !list.Contains(launchers, s.command) {
//			path:       ["servers", i, "command"]
//			message:    "server \(s.name) starts with \(s.command), which is not an approved launcher"
//			suggestion: "start it with one of \(launchers)"
//		}]
//	}
//
// The packs shipped with mcpc are embedded (Builtin): baseline and strict. A
// violation's path is mapped back to the source that set the value by a
// Locator (the compiler's provenance, or the plan file itself), so its
// diagnostic points where the operator fixes it.
//
// Rules that CUE cannot express (the file system, PATH, the tool lock) are Go
// values of type Check, one per file named after the rule (GoRules).
//
// It serves mcpc's own commands, not embedders: its API may change
// (docs/decisions/0002-package-layout-and-import-direction.md).
package policies

import (
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	cuejson "cuelang.org/go/encoding/json"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

//go:embed baseline/*.cue strict/*.cue
var builtin embed.FS

// BuiltinNames are the packs shipped with mcpc, in the order they run.
var BuiltinNames = []string{"baseline", "strict"}

// maxPackBytes bounds one file of a pack, as every input file is bounded.
const maxPackBytes = 1 << 20

// ruleID is the form of a rule id: kebab-case, as every rule of mcpc.
var ruleID = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// Pack is one policy pack: its CUE source, its rules, and the program its
// fast path runs (fastpath.go). A Pack is built once (Builtin, Load) and may
// be evaluated from several goroutines: the fast path shares nothing that
// changes, and the pack's CUE value, built when CUE first evaluates a rule
// of it, serves one evaluation at a time (CUE values are not safe for
// concurrent use).
type Pack struct {
	Name  string
	files []packFile
	rules []rules.Rule
	// fast is the pack's fast path; nil when fastErr says which construct
	// of the pack it does not understand (CUE then evaluates every rule).
	fast    *fastPack
	fastErr error

	mu      sync.Mutex // held while CUE evaluates the pack
	built   bool
	value   cue.Value
	buildDs []diag.Diagnostic
}

type packFile struct {
	name string
	src  []byte
}

// Rules returns the pack's rule declarations, sorted by id.
func (p *Pack) Rules() []rules.Rule { return append([]rules.Rule(nil), p.rules...) }

// Violation is one finding of a rule: the path it is about (keys and list
// indices from the root of the plan, or of the tool lock when InLock), what
// is wrong and what to do.
type Violation struct {
	Rule       string
	Severity   diag.Severity
	InLock     bool
	Path       []any
	Message    string
	Suggestion string
	// Info reports the violation as info rather than its rule's severity
	// (as rules.Rule.InfoAt does): for a case its rule names harmless by
	// design, a disabled server that starts nothing.
	Info bool
}

// Builtin returns the packs shipped with mcpc, in BuiltinNames order: built
// once per process, shared by every deployment a run lints.
func Builtin() ([]*Pack, error) {
	packs, err := builtinPacks()
	return slices.Clone(packs), err
}

var builtinPacks = sync.OnceValues(func() ([]*Pack, error) {
	var out []*Pack
	taken := builtinRuleIDs()
	for _, name := range BuiltinNames {
		p, ds := loadFS(builtin, name, name, taken, true)
		if len(ds) > 0 {
			return nil, fmt.Errorf("policies: built-in pack %s: %s:%d:%d: %s", name, ds[0].File, ds[0].Line, ds[0].Column, ds[0].Message)
		}
		out = append(out, p)
	}
	return out, nil
})

// Load reads the pack in dir (its .cue files, not its subdirectories). A pack
// that does not compile or whose rules are not complete declarations comes
// back as diagnostics positioned in its files, and a nil pack.
func Load(dir string) (*Pack, []diag.Diagnostic) { return load(dir, false) }

// LoadReplacing reads the pack in dir as Load does, except that it may
// declare the rules of the built-in pack of its own name (policies/baseline
// in a clone of mcpc): it is a working copy of that pack, and runs in its
// place (mcpc policy test runs it alone).
func LoadReplacing(dir string) (*Pack, []diag.Diagnostic) { return load(dir, true) }

func load(dir string, replacing bool) (*Pack, []diag.Diagnostic) {
	entries, err := readDir(dir)
	if err != nil {
		return nil, []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: dir, Line: 1, Column: 1},
			"cannot read the policy pack: "+err.Error(), "give --policy a directory of .cue files")}
	}
	p := &Pack{Name: path.Base(dir)}
	for _, name := range entries {
		file := path.Join(dir, name)
		data, err := inputfile.ReadMax(file, maxPackBytes)
		data = inputfile.TrimBOM(data)
		if err != nil {
			return nil, []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: file, Line: 1, Column: 1},
				"cannot read the policy file: "+err.Error(), "")}
		}
		p.files = append(p.files, packFile{name: file, src: data})
	}
	if len(p.files) == 0 {
		return nil, []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: dir, Line: 1, Column: 1},
			"the policy pack has no .cue file", "a pack is a directory of .cue files that declare rules: {…}")}
	}
	// A pack that several deployments of a run name (or a pack read again
	// unchanged) is built once: by its directory and the bytes of its files.
	key := sha256.New()
	fmt.Fprintf(key, "%t\x00%s\x00", replacing, dir)
	for _, f := range p.files {
		fmt.Fprintf(key, "%s\x00%d\x00", f.name, len(f.src))
		key.Write(f.src)
	}
	id := string(key.Sum(nil))
	if c, ok := loaded.Load(id); ok {
		c := c.(loadResult)
		return c.pack, c.ds
	}
	pack, ds := p.load(dir, replacing)
	loaded.Store(id, loadResult{pack, ds})
	return pack, ds
}

// loaded are the team packs read so far, by loadKey.
var loaded sync.Map

type loadResult struct {
	pack *Pack
	ds   []diag.Diagnostic
}

// load declares the pack's rules against those of mcpc and of the
// built-in packs.
func (p *Pack) load(dir string, replacing bool) (*Pack, []diag.Diagnostic) {
	taken := builtinRuleIDs()
	packs, err := Builtin()
	if err != nil {
		return nil, []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: dir, Line: 1, Column: 1}, err.Error(), "")}
	}
	for _, b := range packs {
		if replacing && b.Name == p.Name {
			continue
		}
		for _, r := range b.rules {
			taken[r.ID] = true
		}
	}
	if ds := p.declare(taken); len(ds) > 0 {
		return nil, ds
	}
	return p, nil
}

// builtinRuleIDs are the ids of mcpc's own rules, which no pack may reuse.
func builtinRuleIDs() map[string]bool {
	taken := map[string]bool{}
	for _, r := range rules.All() {
		taken[r.ID] = true
	}
	return taken
}

func loadFS(fsys fs.FS, dir, name string, taken map[string]bool, shipped bool) (*Pack, []diag.Diagnostic) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: dir, Line: 1, Column: 1}, err.Error(), "")}
	}
	p := &Pack{Name: name}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".cue") {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: dir, Line: 1, Column: 1}, err.Error(), "")}
		}
		p.files = append(p.files, packFile{name: "policies/" + dir + "/" + e.Name(), src: b})
	}
	if shipped && p.declareFast(taken) {
		return p, nil
	}
	return p, p.declare(taken)
}

// declareFast reads the declarations of a shipped pack from its fast path,
// without compiling the pack with CUE (a few milliseconds of every lint,
// more than a small deployment's rules cost), when each rule is declared
// with string literals as declare requires; the pack's CUE is compiled when
// CUE first evaluates a rule. It reports false, having changed nothing, for
// anything else: declare then reads the pack with CUE and says what is
// wrong. TestShippedPacksDeclareAsCUEDoes holds it to declare.
func (p *Pack) declareFast(taken map[string]bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	fp, err := p.deriveFast()
	if err != nil {
		return false
	}
	var rs []rules.Rule
	for id, r := range fp.rules {
		text := func(name string) (string, bool) {
			f := r.sub.fields[name]
			if f == nil || f.sub != nil {
				return "", false
			}
			lit, ok := f.expr.(*ast.BasicLit)
			if !ok {
				return "", false
			}
			v, ok := literalOrNil(lit).(val)
			return v.s, ok && v.k == kStr
		}
		sev, okSev := text("severity")
		desc, okDesc := text("description")
		ex, okEx := text("example")
		if !ruleID.MatchString(id) || taken[id] || !okSev || sev != "error" && sev != "warning" && sev != "info" ||
			!okDesc || strings.TrimSpace(desc) == "" || !okEx || strings.TrimSpace(ex) == "" || r.sub.fields["deny"] == nil {
			return false
		}
		rs = append(rs, rules.Rule{ID: id, Severity: diag.Severity(sev), Description: desc, Example: ex})
	}
	for _, r := range rs {
		taken[r.ID] = true
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	p.fast, p.rules = fp, rs
	return true
}

// built is the pack's CUE value, compiled on first use; p.mu is held.
func (p *Pack) compiled() (cue.Value, []diag.Diagnostic) {
	if !p.built {
		p.value, p.buildDs = p.build()
		p.built = true
	}
	return p.value, p.buildDs
}

// build compiles the pack's files into one CUE value in a fresh context.
func (p *Pack) build() (cue.Value, []diag.Diagnostic) {
	ctx := cuecontext.New()
	var v cue.Value
	for i, f := range p.files {
		file, err := parser.ParseFile(f.name, f.src, parser.ParseComments)
		if err != nil {
			return cue.Value{}, cueDiagnostics(err, f.name, "the policy file is not valid CUE")
		}
		fv := ctx.BuildFile(file)
		if err := fv.Err(); err != nil {
			return cue.Value{}, cueDiagnostics(err, f.name, "the policy file does not compile")
		}
		if i == 0 {
			v = fv
		} else {
			v = v.Unify(fv)
		}
	}
	if err := v.Err(); err != nil {
		return cue.Value{}, cueDiagnostics(err, p.files[0].name, "the policy files of the pack conflict")
	}
	return v, nil
}

// declare reads the rule declarations (everything of each rule but deny,
// which needs an input) and checks them. taken holds the rule ids already in
// use; declare adds the pack's own.
func (p *Pack) declare(taken map[string]bool) []diag.Diagnostic {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ds := p.compiled()
	if ds != nil {
		return ds
	}
	p.fast, p.fastErr = p.deriveFast()
	rs := v.LookupPath(cue.ParsePath("rules"))
	at := func(x cue.Value) (string, int, int) { return position(x.Pos(), p.files[0].name) }
	if !rs.Exists() {
		file, line, col := at(v)
		return []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: file, Line: line, Column: col},
			"the policy pack declares no rules", `declare them as rules: "my-rule": {severity: "error", description: "…", example: "…", deny: [...]}`)}
	}
	iter, err := rs.Fields()
	if err != nil {
		return cueDiagnostics(err, p.files[0].name, "rules is not a struct of rule declarations")
	}
	for iter.Next() {
		id, rv := iter.Selector().Unquoted(), iter.Value()
		file, line, col := at(rv)
		bad := func(msg, sugg string) {
			ds = append(ds, rules.PolicyInvalid.At(diag.Pos{File: file, Line: line, Column: col},
				fmt.Sprintf("rule %s: %s", id, msg), sugg))
		}
		if !ruleID.MatchString(id) {
			bad("a rule id is kebab-case (a-z, 0-9, single dashes)", "rename it, e.g. "+suggestID(id))
			continue
		}
		if taken[id] {
			bad("the id is taken by a built-in rule or a rule of another pack", "give the rule an id of its own, e.g. with a team prefix")
			continue
		}
		taken[id] = true
		var decl struct {
			Severity    *string `json:"severity"`
			Description *string `json:"description"`
			Example     *string `json:"example"`
		}
		if err := rv.Decode(&decl); err != nil {
			bad("its declaration does not decode: "+firstLine(err), "")
			continue
		}
		switch {
		case decl.Severity == nil || (*decl.Severity != "error" && *decl.Severity != "warning" && *decl.Severity != "info"):
			if sv := rv.LookupPath(cue.ParsePath("severity")); sv.Exists() {
				file, line, col = at(sv)
			}
			bad(`severity must be "error", "warning" or "info"`, `severity: "warning"`)
		case decl.Description == nil || strings.TrimSpace(*decl.Description) == "":
			bad("it has no description", `description: "what the rule checks, in one line"`)
		case decl.Example == nil || strings.TrimSpace(*decl.Example) == "":
			bad("it has no example", `example: "a value the rule reports"`)
		case !rv.LookupPath(cue.ParsePath("deny")).Exists():
			bad("it has no deny list", "deny: [for i, s in input.servers if … {path: [\"servers\", i], message: \"…\"}]")
		default:
			p.rules = append(p.rules, rules.Rule{ID: id, Severity: diag.Severity(*decl.Severity),
				Description: *decl.Description, Example: *decl.Example})
		}
	}
	sort.Slice(p.rules, func(i, j int) bool { return p.rules[i].ID < p.rules[j].ID })
	diag.Sort(ds)
	return ds
}

// Evaluate runs the pack's rules on a plan (its canonical JSON) and returns
// the violations, sorted by rule and path. A rule that fails to evaluate
// (an error in its comprehension, a violation without a path or message)
// is a diagnostic that names the rule and points into the pack. The fast
// path decides the rules it can; CUE evaluates the others.
func (p *Pack) Evaluate(planJSON []byte) ([]Violation, []diag.Diagnostic) {
	es, _ := EvaluatePacks([]*Pack{p}, PlanBytes(planJSON)) // bytes never fail
	return es[0].Violations, es[0].Diagnostics
}

// Evaluation is what Evaluate gives for one pack.
type Evaluation struct {
	Violations  []Violation
	Diagnostics []diag.Diagnostic
}

// PlanSource is a plan's canonical JSON, written to a stream (which the
// fast paths read as it comes, never holding it whole) and as bytes (for
// CUE, asked for only when CUE evaluates a rule).
type PlanSource struct {
	Write func(w io.Writer) error
	Bytes func() ([]byte, error)
	// Value, when set, is the plan as a Go value whose encoding/json
	// encoding is that JSON (a volcanic *plan.Plan): the fast paths then
	// read its fields where they are (planview.go), and Write is not used.
	Value any
}

// PlanBytes is the source of a plan's JSON held in memory.
func PlanBytes(planJSON []byte) PlanSource {
	return PlanSource{
		Write: func(w io.Writer) error { _, err := w.Write(planJSON); return err },
		Bytes: func() ([]byte, error) { return planJSON, nil },
	}
}

// EvaluatePacks evaluates each pack on the plan, as Evaluate does, reading
// the plan for their fast paths once. An error is the plan's source's.
func EvaluatePacks(packs []*Pack, src PlanSource) ([]Evaluation, error) {
	read := readFor(packs, src)
	bytes := sync.OnceValues(src.Bytes)
	out := make([]Evaluation, len(packs))
	for i, p := range packs {
		var err error
		out[i].Violations, out[i].Diagnostics, err = p.evaluate(read, bytes)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// planRead is the plan as the fast paths of some packs read it: with the
// keys any of them names.
type planRead struct {
	input val
	names map[string]string
	ok    bool
}

func readFor(packs []*Pack, src PlanSource) *planRead {
	names, whole := map[string]string{}, map[string]bool{}
	for _, p := range packs {
		if p.fast == nil {
			continue
		}
		for k, v := range p.fast.names {
			names[k] = v
		}
		for k := range p.fast.whole {
			whole[k] = true
		}
	}
	if len(names) == 0 {
		return &planRead{}
	}
	if src.Value != nil {
		input := viewOf(reflect.ValueOf(src.Value))
		if input.k == kObj {
			input.o.sv.memo = map[string]val{}
		}
		return &planRead{input: input, names: names, ok: input.k == kObj}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(src.Write(pw)) }()
	input, ok := readPlan(pr, names, whole)
	pr.CloseWithError(errReadDone) // a writer still writing stops
	return &planRead{input: input, names: names, ok: ok}
}

var errReadDone = errors.New("the plan was read")

func (p *Pack) evaluate(read *planRead, planBytes func() ([]byte, error)) ([]Violation, []diag.Diagnostic, error) {
	out, slow := p.evaluateFast(read)
	var ds []diag.Diagnostic
	if len(slow) > 0 {
		planJSON, err := planBytes()
		if err != nil {
			return nil, nil, err
		}
		vs, cds := p.evaluateCUE(planJSON, slow)
		out, ds = append(out, vs...), cds
	}
	sortViolations(out)
	diag.Sort(ds)
	if report := crossCheck.Load(); report != nil {
		planJSON, err := planBytes()
		if err != nil {
			return nil, nil, err
		}
		settled := p.rules
		if len(slow) > 0 {
			settled = nil
			for _, r := range p.rules {
				if !slices.Contains(slow, r) {
					settled = append(settled, r)
				}
			}
		}
		fast := slices.DeleteFunc(slices.Clone(out), func(v Violation) bool {
			return !slices.ContainsFunc(settled, func(r rules.Rule) bool { return r.ID == v.Rule })
		})
		var viaCUE []Violation
		var cds []diag.Diagnostic
		if len(settled) > 0 {
			viaCUE, cds = p.evaluateCUE(planJSON, settled)
			sortViolations(viaCUE)
		}
		var left []string
		for _, r := range slow {
			left = append(left, r.ID)
		}
		(*report)(CrossCheck{Pack: p.Name, PlanJSON: planJSON, Fast: fast, ViaCUE: viaCUE, CUEDiagnostics: cds, LeftToCUE: left})
	}
	return out, ds, nil
}

// evaluateFast runs the fast path on each rule; slow are the rules it left
// to CUE.
func (p *Pack) evaluateFast(read *planRead) (out []Violation, slow []rules.Rule) {
	if p.fast == nil || !read.ok {
		return nil, p.rules
	}
	ev := &eval{fp: p.fast, input: read.input, names: read.names, done: map[*mfield]val{}, busy: map[*mfield]bool{}, matched: map[[2]string]bool{}}
	byRule := make([]chunks[Violation], len(p.rules))
	n := 0
	for i, r := range p.rules {
		vs, ok := ev.violations(r.ID)
		if !ok {
			slow = append(slow, r)
			continue
		}
		for _, part := range vs.parts {
			for j := range part {
				part[j].Rule, part[j].Severity = r.ID, r.Severity
			}
		}
		byRule[i], n = vs, n+vs.n
	}
	if n > 0 {
		out = make([]Violation, 0, n)
	}
	for i := range byRule {
		out = byRule[i].appendTo(out)
	}
	return out, slow
}

// crossCheck, when set, is called by Evaluate with the violations of the
// rules the fast path decided and CUE's of the same rules; see
// SetCrossCheck.
var crossCheck atomic.Pointer[func(CrossCheck)]

// CrossCheck is one evaluation with the cross-check on: the violations of
// the rules the fast path decided, CUE's of the same rules (and its
// diagnostics, which must be none), and the rules the fast path left to CUE.
type CrossCheck struct {
	Pack           string
	PlanJSON       []byte
	Fast, ViaCUE   []Violation
	CUEDiagnostics []diag.Diagnostic
	LeftToCUE      []string
}

// SetCrossCheck makes every Evaluate run CUE on the rules the fast path
// decided as well, and call report with both results (report may be called
// from several goroutines at once). It is for the tests that hold the fast
// path to CUE. It returns a function that turns it off again.
func SetCrossCheck(report func(CrossCheck)) (restore func()) {
	crossCheck.Store(&report)
	return func() { crossCheck.Store(nil) }
}

// FastPathError says why the pack has no fast path (a construct it does
// not understand, and where); nil when it has one.
func (p *Pack) FastPathError() error { return p.fastErr }

// deriveFast parses the pack's files again (CUE's compiler annotates the
// syntax it builds, so the fast path keeps its own) and reads them as the
// fast path's program.
func (p *Pack) deriveFast() (*fastPack, error) {
	var files []*ast.File
	for _, f := range p.files {
		file, err := parser.ParseFile(f.name, f.src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	return deriveFast(files)
}

// evaluateCUE runs the rules rs of the pack with CUE.
func (p *Pack) evaluateCUE(planJSON []byte, rs []rules.Rule) ([]Violation, []diag.Diagnostic) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ds := p.compiled()
	if ds != nil {
		return nil, ds
	}
	expr, err := cuejson.Extract("plan.json", planJSON)
	if err != nil {
		return nil, []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: p.files[0].name, Line: 1, Column: 1},
			"the plan does not convert to CUE: "+firstLine(err), "")}
	}
	v = v.FillPath(cue.ParsePath("input"), v.Context().BuildExpr(expr))
	var out []Violation
	for _, r := range rs {
		rv := v.LookupPath(cue.MakePath(cue.Str("rules"), cue.Str(r.ID), cue.Str("deny")))
		var found []struct {
			Path       []any   `json:"path"`
			Message    *string `json:"message"`
			Suggestion string  `json:"suggestion"`
		}
		file, line, col := position(rv.Pos(), p.files[0].name)
		fail := func(msg string) {
			ds = append(ds, rules.PolicyInvalid.At(diag.Pos{File: file, Line: line, Column: col},
				fmt.Sprintf("policy %s (pack %s) fails to evaluate: %s", r.ID, p.Name, msg), "check the rule against a plan: mcpc plan -o plan.json shows its input"))
		}
		if err := rv.Decode(&found); err != nil {
			if e := cueerrors.Errors(err); len(e) > 0 {
				if f, l, c := position(e[0].Position(), ""); f != "" {
					file, line, col = f, l, c
				}
			}
			fail(firstLine(err))
			continue
		}
		for _, f := range found {
			if f.Message == nil || *f.Message == "" || len(f.Path) == 0 {
				fail("a violation needs a path (a list of keys and indices into the plan) and a message")
				break
			}
			if !pathSteps(f.Path) {
				fail(fmt.Sprintf("path %v: each step is a key (a string) or a list index (an integer)", f.Path))
				break
			}
			out = append(out, Violation{Rule: r.ID, Severity: r.Severity, Path: f.Path, Message: *f.Message, Suggestion: f.Suggestion})
		}
	}
	return out, ds
}

// sortViolations orders violations by rule, then file, then path.
func sortViolations(vs []Violation) {
	less := func(i, j int) bool {
		if vs[i].Rule != vs[j].Rule {
			return vs[i].Rule < vs[j].Rule
		}
		if vs[i].InLock != vs[j].InLock {
			return !vs[i].InLock
		}
		return comparePath(vs[i].Path, vs[j].Path) < 0
	}
	// The fast path's violations come in this order (the rules in order,
	// each rule's by server): checking costs less than sorting.
	if !sort.SliceIsSorted(vs, less) {
		sort.SliceStable(vs, less)
	}
}

// comparePath orders paths step by step: indices numerically, keys as
// strings, an index before a key, a prefix before the longer path.
func comparePath(a, b []any) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ai, aInt := a[i].(int)
		bi, bInt := b[i].(int)
		switch {
		case aInt && bInt:
			if ai != bi {
				return ai - bi
			}
		case aInt != bInt:
			if aInt {
				return -1
			}
			return 1
		default:
			as, aStr := a[i].(string)
			bs, bStr := b[i].(string)
			if !aStr || !bStr {
				as, bs = fmt.Sprint(a[i]), fmt.Sprint(b[i])
			}
			if c := strings.Compare(as, bs); c != 0 {
				return c
			}
		}
	}
	return len(a) - len(b)
}

// position turns a CUE position into a diagnostic's file, line and column;
// fallback names the file when CUE has none.
func position(pos token.Pos, fallback string) (string, int, int) {
	if !pos.IsValid() || pos.Filename() == "" {
		return fallback, 1, 1
	}
	return pos.Filename(), pos.Line(), pos.Column()
}

// cueDiagnostics turns CUE errors into diagnostics in the pack's files.
func cueDiagnostics(err error, file, what string) []diag.Diagnostic {
	var ds []diag.Diagnostic
	for _, e := range cueerrors.Errors(err) {
		f, line, col := position(e.Position(), file)
		for _, p := range cueerrors.Positions(e) {
			if p.IsValid() && p.Filename() != "" {
				f, line, col = position(p, file)
				break
			}
		}
		format, args := e.Msg()
		ds = append(ds, rules.PolicyInvalid.At(diag.Pos{File: f, Line: line, Column: col},
			what+": "+fmt.Sprintf(format, args...), ""))
	}
	if len(ds) == 0 {
		ds = append(ds, rules.PolicyInvalid.At(diag.Pos{File: file, Line: 1, Column: 1}, what+": "+firstLine(err), ""))
	}
	diag.Sort(ds)
	return ds
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// suggestID turns an id into kebab-case.
func suggestID(id string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "team-" + s
	}
	return strings.TrimSuffix(s, "-")
}

// readDir lists the .cue files of dir, sorted, after checking that dir is a
// directory.
func readDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".cue") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// pathSteps turns the steps of a decoded path into strings and ints, and
// reports whether every step is one of those.
func pathSteps(path []any) bool {
	for i, step := range path {
		switch v := step.(type) {
		case string, int:
		case int64:
			path[i] = int(v)
		case float64:
			if v != float64(int(v)) {
				return false
			}
			path[i] = int(v)
		default:
			return false
		}
	}
	return true
}
