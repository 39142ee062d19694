package craftbot

import (
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// Row is one entry of mcp_config.json as a server list shows it (mcpc
// config list, the Settings page): what the host does with it and why. It
// holds no env value.
type Row struct {
	Entry *Entry
	// Skip is the diagnostic that says why the host skips the entry (nil
	// when it loads).
	Skip *diag.Diagnostic
	// Shadowed is the diagnostic that says which entry the host starts for
	// this later entry of a name (nil when the entry is the first of its
	// name, or skipped).
	Shadowed *diag.Diagnostic
	// Env are the keys of the entry's env, in file order, and whether each
	// has a (non-blank) value.
	Env []EnvKey
	// Diagnostics are every diagnostic inside the entry.
	Diagnostics []diag.Diagnostic
}

// EnvKey is one key of an entry's env.
type EnvKey struct {
	Key string
	Set bool
}

// Rows returns a row per entry of cfg in file order, with the diagnostics
// of ds (as Check returned them for data) that stand inside it.
func Rows(data []byte, cfg *Config, ds []diag.Diagnostic) []Row {
	data = Text(data)
	ix := node.NewLineIndex(cfg.File, data)
	ds = inFile(ds, cfg.File)
	rows := make([]Row, 0, len(cfg.Entries))
	for _, e := range cfg.Entries {
		r := Row{Entry: e, Diagnostics: entryDiagnostics(ix, e.Node, ds)}
		for i, d := range r.Diagnostics {
			if e.Skip != "" && d.Rule == e.Skip && r.Skip == nil {
				r.Skip = &r.Diagnostics[i]
			}
			if e.Winner != nil && d.Rule == RuleDuplicateName && r.Shadowed == nil {
				r.Shadowed = &r.Diagnostics[i]
			}
		}
		for _, v := range e.Env {
			r.Env = append(r.Env, EnvKey{Key: v.Key, Set: strings.TrimSpace(v.Value) != ""})
		}
		rows = append(rows, r)
	}
	return rows
}

// inFile returns the diagnostics of ds about file (Check's are all about
// it; a caller may have merged others).
func inFile(ds []diag.Diagnostic, file string) []diag.Diagnostic {
	for _, d := range ds {
		if d.File != file {
			var out []diag.Diagnostic
			for _, d := range ds {
				if d.File == file {
					out = append(out, d)
				}
			}
			return out
		}
	}
	return ds
}
