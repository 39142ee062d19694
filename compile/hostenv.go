package compile

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Pseudo-file names of environment sources that have no file of their own.
// Their "lines" are the KEY=VALUE entries: the process environment sorted by
// name, and --env flags in the order given.
const (
	ProcessEnvFile = "<environment>"
	EnvFlagFile    = "<--env>"
)

// EnvVar is one host variable and where it was set.
type EnvVar struct {
	Name  string
	Value string
	// Source is the kind of layer: "environment", "env-file" or "env".
	Source string
	// Loc is the position of the entry (column 1), ValueLoc of its value
	// (Pos and ValuePos give them as diag.Pos): 16 bytes each, a host
	// environment can define thousands of servers.
	Loc, ValueLoc node.Loc
	// Quoted values in env files start one column after ValuePos.
	TextOffset uint8
}

// Pos is the position of the entry (column 1).
func (v *EnvVar) Pos() diag.Pos { return v.Loc.Pos() }

// ValuePos is the position of the value.
func (v *EnvVar) ValuePos() diag.Pos { return v.ValueLoc.Pos() }

// HostEnv is the host environment: the process environment (unless
// --clean-env), overlaid by --env-file files, then by --env flags. Later
// layers replace earlier values of the same name.
type HostEnv struct {
	// byName holds the variable each name has (the last definition of the
	// last layer that defines it), sorted by name: a map of every name
	// cost five times as much, and a host environment may define
	// thousands of servers.
	byName []*EnvVar
	layers [][]*EnvVar // each layer's entries in input order
}

func newHostEnv() *HostEnv { return &HostEnv{} }

func (h *HostEnv) addLayer(vars []*EnvVar) {
	h.layers = append(h.layers, vars)
	// Every definition in layering order, sorted by name keeping that
	// order among equal names: the last of each name is the one it has.
	all := make([]*EnvVar, 0, len(h.byName)+len(vars))
	all = append(append(all, h.byName...), vars...)
	slices.SortStableFunc(all, func(a, b *EnvVar) int { return strings.Compare(a.Name, b.Name) })
	h.byName = all[:0]
	for i, v := range all {
		if i+1 < len(all) && all[i+1].Name == v.Name {
			continue
		}
		h.byName = append(h.byName, v)
	}
	h.byName = slices.Clip(h.byName)
}

// Lookup returns the variable name (exact, as on Linux).
func (h *HostEnv) Lookup(name string) (*EnvVar, bool) {
	i, ok := slices.BinarySearchFunc(h.byName, name, func(v *EnvVar, name string) int { return strings.Compare(v.Name, name) })
	if !ok {
		return nil, false
	}
	return h.byName[i], true
}

// Value returns the value of name, or "" when unset.
func (h *HostEnv) Value(name string) string {
	if v, ok := h.Lookup(name); ok {
		return v.Value
	}
	return ""
}

// Names returns every variable name, sorted.
func (h *HostEnv) Names() []string {
	out := make([]string, len(h.byName))
	for i, v := range h.byName {
		out[i] = v.Name
	}
	return out
}

// Layers returns the entries of each layer, in layering order.
func (h *HostEnv) Layers() [][]*EnvVar { return h.layers }

// entryVars turns KEY=VALUE strings into variables of one layer, numbering
// them as lines of the pseudo-file file. Entries without "=" are reported
// (env-file-syntax).
func entryVars(file, source string, entries []string) ([]*EnvVar, []diag.Diagnostic) {
	// One array of variables, not one allocation each: a host environment
	// can define thousands of servers.
	vars := make([]EnvVar, 0, len(entries))
	out := make([]*EnvVar, 0, len(entries))
	var ds []diag.Diagnostic
	inFile := node.LocOf(diag.Pos{File: file})
	for i, e := range entries {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			ds = append(ds, rules.EnvFileSyntax.At(diag.Pos{File: file, Line: i + 1, Column: 1}, "expected NAME=value, but the entry has no = (its text is not shown: it may be a value)", "write it as NAME=value"))
			continue
		}
		vars = append(vars, EnvVar{Name: k, Value: v, Source: source, Loc: inFile.At(i+1, 1), ValueLoc: inFile.At(i+1, utf8.RuneCountInString(k)+2)})
		out = append(out, &vars[len(vars)-1])
	}
	return out, ds
}

// processEnvVars sorts the process environment so that its pseudo-file
// lines are stable for the same environment.
func processEnvVars(environ []string) []*EnvVar {
	sorted := append([]string(nil), environ...)
	sort.Strings(sorted)
	vars, _ := entryVars(ProcessEnvFile, "environment", sorted)
	return vars
}

// pseudoFile is a layer of variables as the lines of its pseudo-file, for
// excerpts under diagnostics: line n is the entry numbered n, "NAME=value"
// with the value of a secret variable redacted, or empty where an entry was
// not a variable. Lines are rendered when an excerpt asks, not kept: a host
// environment can define thousands of servers.
type pseudoFile struct {
	vars   []*EnvVar // in line order
	secret func(name string) bool
}

func envLines(vars []*EnvVar, secret func(string) bool) pseudoFile {
	return pseudoFile{vars: vars, secret: secret}
}

// has reports whether the pseudo-file has a line n.
func (f pseudoFile) has(n int) bool {
	return n >= 1 && len(f.vars) > 0 && n <= f.vars[len(f.vars)-1].Pos().Line
}

// line is line n (has(n) must hold).
func (f pseudoFile) line(n int) string {
	i := sort.Search(len(f.vars), func(i int) bool { return f.vars[i].Pos().Line >= n })
	if i == len(f.vars) || f.vars[i].Pos().Line != n {
		return ""
	}
	v := f.vars[i]
	val := v.Value
	if f.secret(v.Name) {
		val = redact.Redacted
	}
	return v.Name + "=" + val
}

// Map returns the variables as a name → value map.
func (h *HostEnv) Map() map[string]string {
	out := make(map[string]string, len(h.byName))
	for _, v := range h.byName {
		out[v.Name] = v.Value
	}
	return out
}
