package lint

import (
	"slices"
	"sync"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/policies/toollock"
	"github.com/mcpc-dev/mcpc/policies/versionpacks"
	"github.com/mcpc-dev/mcpc/schema"
)

// Options are one lint run.
type Options struct {
	// Compile are the deployment's sources (from mcpc.cue and the flags).
	Compile compile.Options
	// Deployment is the mcpc.cue in force; nil when there is none.
	Deployment *Deployment
	// Packs are the policy packs to run.
	Packs []*policies.Pack
	// Target is where the deployment runs.
	Target policies.Target
	// LockFile is the tool lock the tool rules read; "" when there is none.
	LockFile string
	// More, if set, gives the findings of inputs the compiler does not
	// read (a chat's servers.json), so that the deployment's severities
	// and ignores apply to them with the rest, in the one pass that also
	// finds the ignores that matched nothing.
	More func(res *compile.Result) ([]diag.Diagnostic, error)
	// VersionPacks are the host version packs to run
	// (Deployment.VersionPacks).
	VersionPacks []*versionpacks.Pack
}

// Report is what a lint run found.
type Report struct {
	Result *compile.Result
	Applied
	// Files are the files read besides the sources (the lock), for excerpts.
	Files map[string][]byte
}

// Run compiles the deployment, runs the packs and the Go rules over its plan
// (the draft plan when the compiler found errors, so that one run shows
// everything), and applies the deployment's rule configuration. An input
// that cannot be read is an error (exit 2), like compile's.
func Run(opts Options) (*Report, error) {
	res, err := compile.Compile(opts.Compile)
	if err != nil {
		return nil, err
	}
	rep := &Report{Result: res, Files: map[string][]byte{}}
	ds := append([]diag.Diagnostic(nil), res.Diagnostics...)
	p := res.Plan
	if p == nil {
		p = res.Draft()
	}
	if p != nil {
		followOn := followsAnError(res)
		src := policies.PlanSource{Write: p.WriteCanonical, Bytes: p.Canonical}
		if p.Profile != plan.ProfileCraftbot {
			src.Value = p // its canonical JSON is its encoding/json encoding; a craftbot plan's is another view
		}
		evs, err := policies.EvaluatePacks(opts.Packs, src)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			ds = append(ds, e.Diagnostics...)
			n := len(ds)
			ds = policies.AppendDiagnostics(ds, e.Violations, res.Locate)
			ds = append(ds[:n], followOn(ds[n:])...) // followOn filters in place
		}
		in := &policies.Input{Plan: p, Target: opts.Target, EnvValue: envValues(res, p), HostSecrets: hostSecrets(res)}
		var lockRoot *node.Node
		if opts.LockFile != "" {
			lock, root, data, lds, err := readLock(opts.LockFile)
			if err != nil {
				return nil, err
			}
			ds = append(ds, lds...)
			in.Lock, lockRoot = lock, root
			rep.Files[opts.LockFile] = data
		}
		var inPlan, inLock []policies.Violation
		for _, v := range policies.RunGo(in) {
			if v.InLock {
				inLock = append(inLock, v)
			} else {
				inPlan = append(inPlan, v)
			}
		}
		ds = append(ds, followOn(policies.Diagnostics(inPlan, res.Locate))...)
		if lockRoot != nil {
			ds = append(ds, policies.Diagnostics(inLock, policies.PlanFile(lockRoot))...)
		}
	}
	for _, vp := range opts.VersionPacks {
		ds = append(ds, vp.Check(res)...)
	}
	known, err := KnownRules(opts.Packs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(known))
	for i, r := range known {
		ids[i] = r.ID
	}
	inline, ids2 := InlineIgnores(jsoncSources(opts.Compile), sourceText(res, opts.Compile.ReadFile), ids)
	ds = append(ds, ids2...)
	if opts.More != nil {
		more, err := opts.More(res)
		if err != nil {
			return nil, err
		}
		ds = append(ds, more...)
	}
	// The index of the servers' positions is built only for an ignore
	// that names a server.
	serverOf := sync.OnceValue(res.ServerOf)
	rep.Applied = opts.Deployment.applyInto(ds[:0], ds, inline, func(d diag.Diagnostic) string { return serverOf()(d) })
	return rep, nil
}

// sourceText gives a source's text as the compilation read it: the bytes it
// kept (not read again), else read's without a byte order mark.
func sourceText(res *compile.Result, read func(string) ([]byte, error)) func(string) ([]byte, error) {
	if read == nil {
		read = inputfile.Read
	}
	return func(path string) ([]byte, error) {
		if data, ok := res.Files.Text(path); ok {
			return data, nil
		}
		data, err := read(path)
		return inputfile.TrimBOM(data), err
	}
}

// followsAnError returns the filter that drops the policy findings about a
// value the compiler already reports an error in (a typo'd Command is a
// missing-command error, and no launcher, runtime or package finding about
// the empty command it leaves): a finding is dropped when a compiler error
// stands where it points, or inside the value that starts there
// (compile.Result.InValue). Findings about other values of the same server
// stay: they are true whatever the error.
func followsAnError(res *compile.Result) func([]diag.Diagnostic) []diag.Diagnostic {
	errs := diag.Errors(res.Diagnostics)
	if len(errs) == 0 {
		return func(ds []diag.Diagnostic) []diag.Diagnostic { return ds }
	}
	inValue := res.InValue()
	// A finding follows an error only on the error's line (InValue): the
	// errors by line, so that many findings and many errors cost no
	// product of the two.
	type fileLine struct {
		file string
		line int
	}
	byLine := map[fileLine][]diag.Pos{}
	for _, e := range errs {
		k := fileLine{e.File, e.Line}
		byLine[k] = append(byLine[k], e.Pos())
	}
	return func(ds []diag.Diagnostic) []diag.Diagnostic {
		out := ds[:0]
		for _, d := range ds {
			follows := false
			for _, e := range byLine[fileLine{d.File, d.Line}] {
				if inValue(d.Pos(), e) {
					follows = true
					break
				}
			}
			if !follows {
				out = append(out, d)
			}
		}
		return out
	}
}

// jsoncSources are the sources of o the host reads with comments: the
// appsettings files of a volcanic deployment.
func jsoncSources(o compile.Options) []string {
	if o.Profile != "" && o.Profile != compile.ProfileVolcanic {
		return nil
	}
	return o.AppSettings
}

// envValues gives the Go rules the env values a plan holds as references:
// a craftbot plan's ${config:KEY}, read from the mcp_config.json the
// compilation read. nil (the plan's own values) for another profile.
func envValues(res *compile.Result, p *plan.Plan) func(int, string) (string, bool) {
	cfg := craftbot.ConfigOf(res)
	if cfg == nil {
		return nil
	}
	return func(i int, key string) (string, bool) {
		s := p.Servers[i]
		v := s.Env[key]
		if v == nil {
			return "", false
		}
		if plan.IsConfigRef(key, *v) {
			return cfg.EnvValue(s.Name, key)
		}
		return *v, true
	}
}

// hostSecrets are the deny-listed variables of the host environment the
// deployment describes: those its env files and --env entries set. mcpc's
// own process environment is not the host's, so it counts for nothing.
func hostSecrets(res *compile.Result) []string {
	if res.Env == nil || res.Deny == nil {
		return nil
	}
	var out []string
	for _, name := range res.Env.Names() {
		if v, _ := res.Env.Lookup(name); v.Source != "environment" && res.Deny.Denied(name) {
			out = append(out, name)
		}
	}
	return out
}

// readLock reads the tool lock with positions.
func readLock(file string) (*toollock.Lock, *node.Node, []byte, []diag.Diagnostic, error) {
	data, err := inputfile.ReadText(file)
	if err != nil {
		return nil, nil, nil, nil, &compile.InputError{Path: file, Err: err}
	}
	v, err := schema.Acquire()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer schema.Release(v)
	f, ds := toollock.Read(file, data, v)
	if f == nil {
		return nil, nil, data, ds, nil
	}
	root, d := node.ParseJSON(file, data, false)
	if d != nil {
		return nil, nil, data, []diag.Diagnostic{*d}, nil
	}
	return f.Lock, root, data, nil, nil
}

// Rules are every rule mcpc lint can report: the compiler's (package rules),
// the Go deployment rules, the rules of the built-in packs, and the two
// rules about lint's own inputs.
func Rules() ([]rules.Rule, error) {
	out := rules.All() // the Go deployment rules are declared there too
	declared, err := builtinPackRules()
	if err != nil {
		return nil, err
	}
	return append(out, declared...), nil
}

// builtinPackRules are the rules the built-in packs declare, read once: a
// declaration is a plain value, unlike a pack's CUE values (which each
// lint compiles for itself), and compiling the packs is most of what
// listing the rules costs.
var builtinPackRules = sync.OnceValues(func() ([]rules.Rule, error) {
	packs, err := policies.Builtin()
	if err != nil {
		return nil, err
	}
	var out []rules.Rule
	for _, p := range packs {
		for _, r := range p.Rules() {
			if r.Home == "" {
				r.Home = "policies/" + p.Name // a built-in pack's directory
			}
			out = append(out, r)
		}
	}
	return slices.Clip(out), nil
})

// LoadPacks loads the packs a deployment names (baseline when it names none),
// then the team packs of its dirs and of extraDirs (--policy DIR).
func (d *Deployment) LoadPacks(extraDirs []string) ([]*policies.Pack, []diag.Diagnostic) {
	names := []string{"baseline"}
	var dirs []string
	if d != nil {
		if d.Policies.Packs != nil {
			names = d.Policies.Packs
		}
		dirs = append(dirs, d.Policies.Dirs...)
	}
	dirs = append(dirs, extraDirs...)
	builtin, err := policies.Builtin()
	if err != nil {
		return nil, []diag.Diagnostic{rules.PolicyInvalid.At(diag.Pos{File: "policies", Line: 1, Column: 1}, err.Error(), "")}
	}
	var out []*policies.Pack
	for _, name := range names {
		for _, p := range builtin {
			if p.Name == name {
				out = append(out, p)
			}
		}
	}
	var ds []diag.Diagnostic
	owner := map[string]string{}
	for _, dir := range dirs {
		p, pds := policies.Load(dir)
		ds = append(ds, pds...)
		if p == nil {
			continue
		}
		for _, r := range p.Rules() {
			if other, taken := owner[r.ID]; taken {
				ds = append(ds, rules.PolicyInvalid.At(diag.Pos{File: dir, Line: 1, Column: 1},
					"rule "+r.ID+" is declared by the packs in "+other+" and "+dir, "give each rule an id of its own"))
			}
			owner[r.ID] = dir
		}
		out = append(out, p)
	}
	return out, ds
}
