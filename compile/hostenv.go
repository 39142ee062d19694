package compile

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/node"
	"github.com/mcpc-dev/mcpc/redact"
	"github.com/mcpc-dev/mcpc/rules"
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
	// Pos is the position of the entry (column 1); ValuePos of its value.
	Pos      diag.Pos
	ValuePos diag.Pos
	// Quoted values in env files start one column after ValuePos.
	TextOffset uint8
}

// HostEnv is the host environment: the process environment (unless
// --clean-env), overlaid by --env-file files, then by --env flags. Later
// layers replace earlier values of the same name.
type HostEnv struct {
	vars   map[string]*EnvVar
	layers [][]*EnvVar // each layer's entries in input order
}

func newHostEnv() *HostEnv { return &HostEnv{vars: map[string]*EnvVar{}} }

func (h *HostEnv) addLayer(vars []*EnvVar) {
	h.layers = append(h.layers, vars)
	for _, v := range vars {
		h.vars[v.Name] = v
	}
}

// Lookup returns the variable name (exact, as on Linux).
func (h *HostEnv) Lookup(name string) (*EnvVar, bool) {
	v, ok := h.vars[name]
	return v, ok
}

// Value returns the value of name, or "" when unset.
func (h *HostEnv) Value(name string) string {
	if v, ok := h.vars[name]; ok {
		return v.Value
	}
	return ""
}

// Names returns every variable name, sorted.
func (h *HostEnv) Names() []string {
	out := make([]string, 0, len(h.vars))
	for n := range h.vars {
		out = append(out, n)
	}
	sort.Strings(out)
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
	for i, e := range entries {
		pos := diag.Pos{File: file, Line: i + 1, Column: 1}
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			ds = append(ds, rules.EnvFileSyntax.At(pos, "expected KEY=VALUE, got "+quoteShort(e), "write it as NAME=value"))
			continue
		}
		vp := pos
		vp.Column = utf8.RuneCountInString(k) + 2
		vars = append(vars, EnvVar{Name: k, Value: v, Source: source, Pos: pos, ValuePos: vp})
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

// envLines renders a layer as the lines of its pseudo-file, with the values
// of secret variables redacted, for excerpts under diagnostics.
func envLines(vars []*EnvVar, secret func(string) bool) []string {
	lines := make([]string, 0, len(vars))
	for _, v := range vars {
		for len(lines) < v.Pos.Line-1 {
			lines = append(lines, "")
		}
		val := v.Value
		if secret(v.Name) {
			val = redact.Redacted
		}
		lines = append(lines, v.Name+"="+val)
	}
	return lines
}

// valueNode is the string node of a variable's value, positioned on it.
func (v *EnvVar) valueNode() *node.Node {
	n := node.Str(v.Value, v.ValuePos)
	n.TextOffset = v.TextOffset
	return n
}

func quoteShort(s string) string {
	r := []rune(s)
	if len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return `"` + s + `"`
}

// Map returns the variables as a name → value map.
func (h *HostEnv) Map() map[string]string {
	out := make(map[string]string, len(h.vars))
	for k, v := range h.vars {
		out[k] = v.Value
	}
	return out
}
