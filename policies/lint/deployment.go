// Package lint checks a deployment before it starts (`mcpc lint`): every
// check the compiler makes, the deployment rules of package policies (the
// built-in packs, the Go rules, a team's own packs), and then one pass that
// applies the deployment's rule severities and ignores, by rule id, as
// golangci-lint does. The deployment is described by mcpc.cue (Deployment),
// found upward from the directory being checked.
//
// It serves mcpc's own commands, not embedders: its API may change
// (docs/decisions/0002-package-layout-and-import-direction.md).
package lint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/bmatcuk/doublestar/v4"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/policies/versionpacks"
	"github.com/mcpc-dev/mcpc/schema"
)

// FileName is the deployment file mcpc lint looks for.
const FileName = "mcpc.cue"

// Deployment is what mcpc.cue says. Paths in it are relative to its
// directory; Load joins them to Dir.
type Deployment struct {
	File         string            `json:"-"`
	Dir          string            `json:"-"`
	Profile      string            `json:"profile"`
	Sources      Sources           `json:"sources"`
	Rules        map[string]string `json:"rules"`
	Ignores      []Ignore          `json:"ignores"`
	BuiltinTools []string          `json:"builtinTools"`
	Target       Target            `json:"target"`
	Policies     Policies          `json:"policies"`

	root *node.Node
}

// Sources are the deployment's inputs (the source flags of SPEC §8).
type Sources struct {
	AppSettings []string `json:"appsettings"`
	EnvFiles    []string `json:"envFiles"`
	Env         []string `json:"env"`
	CleanEnv    bool     `json:"cleanEnv"`
	AgentDir    string   `json:"agentDir"`
	Config      string   `json:"config"`
	DenyList    string   `json:"denyList"`
}

// Ignore drops the findings of one rule: in mcpc.cue, those in the files a
// glob matches (Path), of the server named (Server), or both; inline (an
// mcpc:ignore comment of a JSONC source), those on the lines From to To of
// File. Pos is where the ignore is written, where ignore-unused points.
type Ignore struct {
	Path   string `json:"path"`
	Server string `json:"server"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	Pos    diag.Pos

	File     string `json:"-"`
	From, To int    `json:"-"`
}

// MinReason is how many characters an ignore's reason has at least.
const MinReason = 3

// reasonProblem is what is wrong with an ignore's reason ("" when
// nothing): it says why the finding does not apply, in MinReason
// characters at least.
func reasonProblem(reason string) string {
	if n := len([]rune(strings.TrimSpace(reason))); n < MinReason {
		return fmt.Sprintf("an ignore needs a reason of at least %d characters: why the finding does not apply here", MinReason)
	}
	return ""
}

// Target is where the deployment runs.
type Target struct {
	OS      string   `json:"os"`
	Path    string   `json:"path"`
	Clients []string `json:"clients"`
	Lock    string   `json:"lock"`
}

// Policies are the packs to run.
type Policies struct {
	Packs []string `json:"packs"`
	Dirs  []string `json:"dirs"`
	// VersionPacks switches host version packs (package versionpacks) on
	// or off by name: "on" or "off". A pack not named is on for a
	// deployment of its profile.
	VersionPacks map[string]string `json:"versionPacks"`
}

// VersionPacks are the host version packs that run on a deployment of
// profile: those of the profile that d (nil: no mcpc.cue) does not switch
// off.
func (d *Deployment) VersionPacks(profile string) []*versionpacks.Pack {
	var out []*versionpacks.Pack
	for _, p := range versionpacks.For(profile) {
		if d == nil || d.Policies.VersionPacks[p.Name] != "off" {
			out = append(out, p)
		}
	}
	return out
}

// EditNotes are what an editor of the craftbot file configFile adds to its
// reply after an edit: the notes of the version packs on for it, as the
// mcpc.cue found upward from the file's directory (the way mcpc lint finds
// it) says. An mcpc.cue that does not load switches nothing off: the edit
// was made, and lint reports the file.
func EditNotes(configFile string) []string {
	var d *Deployment
	if file := Find(filepath.Dir(configFile)); file != "" {
		d, _ = Load(file)
	}
	var out []string
	for _, p := range d.VersionPacks(plan.ProfileCraftbot) {
		if p.EditNote != "" {
			out = append(out, p.EditNote)
		}
	}
	return out
}

// Find looks for mcpc.cue in dir and its parents; "" when there is none.
func Find(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		candidate := filepath.Join(abs, FileName)
		if fi, err := os.Stat(candidate); err == nil && fi.Mode().IsRegular() {
			rel, err := filepath.Rel(mustWd(), candidate)
			if err == nil && !filepath.IsAbs(rel) && len(rel) < len(candidate) {
				return rel
			}
			return candidate
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return ""
		}
		abs = parent
	}
}

func mustWd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}

// Load reads mcpc.cue (CUE, or JSON, which is CUE too), checks it against
// the schema's #Deployment and its ignores (a reason each, a glob that
// compiles), and joins its paths to its directory. Every problem is an error
// positioned in the file: mcpc does not guess what a deployment meant. The
// rule ids it names are checked by CheckRules, once the packs it names are
// loaded.
func Load(file string) (*Deployment, []diag.Diagnostic) {
	data, err := inputfile.ReadText(file)
	if err != nil {
		return nil, []diag.Diagnostic{rules.DeploymentInvalid.At(diag.Pos{File: file, Line: 1, Column: 1},
			"cannot read the deployment file: "+err.Error(), "")}
	}
	return Parse(file, data)
}

// Parse is Load of data already read.
func Parse(file string, data []byte) (*Deployment, []diag.Diagnostic) {
	root, ds := schema.ParseCUE(file, data)
	if ds != nil {
		return nil, ds
	}
	v, err := schema.Acquire()
	if err != nil {
		return nil, []diag.Diagnostic{rules.DeploymentInvalid.At(root.Pos(), err.Error(), "")}
	}
	ds = v.Check(schema.Deployment, root, "", nil)
	schema.Release(v)
	for i := range ds {
		ds[i] = rules.DeploymentInvalid.Claim(ds[i])
	}
	if len(ds) > 0 {
		diag.Sort(ds)
		return nil, ds
	}
	raw, err := json.Marshal(toAny(root))
	if err != nil {
		return nil, []diag.Diagnostic{rules.DeploymentInvalid.At(root.Pos(), err.Error(), "")}
	}
	d := &Deployment{File: file, Dir: filepath.Dir(file), root: root}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, []diag.Diagnostic{rules.DeploymentInvalid.At(root.Pos(), "the deployment does not decode: "+err.Error(), "")}
	}
	ds = append(ds, d.checkIgnores()...)
	diag.Sort(ds)
	if len(ds) > 0 {
		return nil, ds
	}
	d.join()
	return d, nil
}

// CheckRules reports every rule id the file names (a severity, an ignore)
// that is not among known: a misspelt id would silently configure nothing.
func (d *Deployment) CheckRules(known []string) []diag.Diagnostic {
	var ds []diag.Diagnostic
	isKnown := map[string]bool{}
	for _, id := range known {
		isKnown[id] = true
	}
	unknown := func(pos diag.Pos, id string) {
		ds = append(ds, unknownRule(pos, id, known))
	}
	if m := d.root.Member("rules"); m != nil {
		for _, r := range m.Value.Members {
			if !isKnown[r.Key] {
				unknown(r.KeyPos(), r.Key)
			}
		}
	}
	if m := d.root.Member("ignores"); m != nil {
		for i, e := range m.Value.Elems {
			if !isKnown[d.Ignores[i].Rule] {
				unknown(e.Get("rule").Pos(), d.Ignores[i].Rule)
			}
		}
	}
	diag.Sort(ds)
	return ds
}

// unknownRule reports the rule id id, which is not among known, at pos.
func unknownRule(pos diag.Pos, id string, known []string) diag.Diagnostic {
	sugg := "mcpc rules lists every rule id"
	if best := Closest(id, known); best != "" {
		sugg = fmt.Sprintf("did you mean %q?", best)
	}
	return rules.DeploymentInvalid.At(pos, fmt.Sprintf("rule %q does not exist", id), sugg)
}

// checkIgnores: every ignore has a reason, a glob that compiles, and a
// path or a server (an ignore of a rule everywhere is rules: ID: "off").
func (d *Deployment) checkIgnores() []diag.Diagnostic {
	var ds []diag.Diagnostic
	if m := d.root.Member("ignores"); m != nil {
		for i, e := range m.Value.Elems {
			d.Ignores[i].Pos = e.Pos()
			ig := d.Ignores[i]
			if p := reasonProblem(ig.Reason); p != "" {
				ds = append(ds, rules.DeploymentInvalid.At(e.Get("reason").Pos(), p, `reason: "the image pins the package by digest"`))
			}
			if ig.Path == "" && ig.Server == "" {
				ds = append(ds, rules.DeploymentInvalid.At(e.Pos(),
					"an ignore needs a path, a server or both: an ignore of a rule everywhere is a severity",
					fmt.Sprintf(`server: "github", or rules: %q: "off"`, ig.Rule)))
			}
			if ig.Rule == rules.IgnoreUnused.ID {
				ds = append(ds, rules.DeploymentInvalid.At(e.Get("rule").Pos(),
					"an ignore-unused finding is not ignored: remove the ignore it names",
					`rules: "ignore-unused": "off" (to stop reporting stale ignores)`))
			}
			if ig.Path != "" && !doublestar.ValidatePattern(ig.Path) {
				ds = append(ds, rules.DeploymentInvalid.At(e.Get("path").Pos(),
					fmt.Sprintf("path %q is not a valid glob", ig.Path), `path: "**/appsettings*.json"`))
			}
		}
	}
	return ds
}

// join makes the deployment's paths relative to the current directory.
func (d *Deployment) join() {
	j := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(d.Dir, p)
	}
	for i, p := range d.Sources.AppSettings {
		d.Sources.AppSettings[i] = j(p)
	}
	for i, p := range d.Sources.EnvFiles {
		d.Sources.EnvFiles[i] = j(p)
	}
	d.Sources.AgentDir, d.Sources.Config, d.Sources.DenyList = j(d.Sources.AgentDir), j(d.Sources.Config), j(d.Sources.DenyList)
	d.Target.Lock = j(d.Target.Lock)
	for i, p := range d.Policies.Dirs {
		d.Policies.Dirs[i] = j(p)
	}
}

// toAny turns a value tree into plain Go values for decoding.
func toAny(n *node.Node) any {
	switch n.Kind {
	case node.Object:
		m := map[string]any{}
		for _, mem := range n.Members {
			m[mem.Key] = toAny(mem.Value)
		}
		return m
	case node.Array:
		l := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			l[i] = toAny(e)
		}
		return l
	case node.String:
		return n.Text
	case node.Number:
		return json.Number(n.Text)
	case node.Bool:
		return n.Bool
	}
	return nil
}

// Closest suggests the one of known that a misspelt word (a rule id, a
// command) meant: the nearest within three edits, "" when none is.
func Closest(id string, known []string) string {
	best, bestD := "", 4
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	for _, k := range sorted {
		if d := levenshtein.ComputeDistance(id, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// InitFile is the mcpc.cue that `mcpc lint --init` writes for d's profile
// and sources: those, an empty rule configuration with how to fill it, and
// the baseline pack.
func InitFile(d Deployment) string {
	var b strings.Builder
	q := func(s string) string { x, _ := json.Marshal(s); return string(x) }
	list := func(xs []string) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = q(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	b.WriteString("// mcpc.cue: the deployment mcpc lint checks. Paths are relative to this file.\n")
	b.WriteString("// Written by mcpc lint --init; see docs/policies.md and mcpc rules.\n")
	fmt.Fprintf(&b, "profile: %s\n\n", q(d.Profile))
	b.WriteString("sources: {\n")
	if len(d.Sources.AppSettings) > 0 {
		fmt.Fprintf(&b, "\tappsettings: %s\n", list(d.Sources.AppSettings))
	}
	if len(d.Sources.EnvFiles) > 0 {
		fmt.Fprintf(&b, "\tenvFiles: %s\n", list(d.Sources.EnvFiles))
	}
	if len(d.Sources.Env) > 0 {
		fmt.Fprintf(&b, "\tenv: %s\n", list(d.Sources.Env))
	}
	if d.Sources.CleanEnv {
		b.WriteString("\tcleanEnv: true\n")
	}
	for _, f := range []struct{ name, value string }{{"agentDir", d.Sources.AgentDir}, {"config", d.Sources.Config}, {"denyList", d.Sources.DenyList}} {
		if f.value != "" {
			fmt.Fprintf(&b, "\t%s: %s\n", f.name, q(f.value))
		}
	}
	b.WriteString("}\n\n")
	b.WriteString("// Severity per rule id: \"off\", \"info\", \"warning\" or \"error\".\nrules: {}\n\n")
	b.WriteString("// Findings to ignore, each with its reason:\n// ignores: [{path: \"appsettings.json\", rule: \"unknown-field\", reason: \"the host reads Logging\"}]\nignores: []\n\n")
	b.WriteString("// Where the deployment runs: os, the PATH of an image, the clients whose tool limits apply,\n// and the tool lock (mcpc tools --lock FILE) the tool rules read.\ntarget: {}\n\n")
	b.WriteString("policies: packs: [\"baseline\"]\n")
	for _, p := range versionpacks.For(d.Profile) {
		fmt.Fprintf(&b, "\n// The version pack %s says what %s does where its code breaks its manual;\n// for a host of another version, switch it off:\n// policies: versionPacks: %q: \"off\"\n", p.Name, p.Version, p.Name)
	}
	return b.String()
}
