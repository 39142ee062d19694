package policies

import (
	"slices"
	"strconv"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Locator maps a path into the plan to the place that set the value:
// compile.Result.Locate for a deployment's sources, PlanFile for a plan read
// from a file.
type Locator func(path []any) diag.Pos

// PlanFile locates paths in a plan file itself (mcpc lint --plan): at the
// value the path names, or the nearest enclosing value the file has.
func PlanFile(root *node.Node) Locator {
	return func(path []any) diag.Pos {
		keys := make([]string, 0, len(path))
		for _, step := range path {
			switch v := step.(type) {
			case string:
				keys = append(keys, v)
			case int:
				keys = append(keys, strconv.Itoa(v))
			}
		}
		for n := len(keys); n > 0; n-- {
			if _, v := root.Lookup(keys[:n]); v != nil {
				return v.Pos()
			}
		}
		return root.Pos()
	}
}

// Diagnostics turns violations into diagnostics at the places loc finds.
func Diagnostics(vs []Violation, loc Locator) []diag.Diagnostic {
	return AppendDiagnostics(make([]diag.Diagnostic, 0, len(vs)), vs, loc)
}

// AppendDiagnostics appends Diagnostics(vs, loc) to ds (a lint's findings
// made where they are kept, not copied there).
func AppendDiagnostics(ds []diag.Diagnostic, vs []Violation, loc Locator) []diag.Diagnostic {
	ds = slices.Grow(ds, len(vs))
	n := len(ds)
	for _, v := range vs {
		// v's rule and severity are its declaration's: a pack's CUE, or the
		// rules value of a Go rule (RunGo).
		r := rules.Rule{ID: v.Rule, Severity: v.Severity}
		d := r.At(loc(v.Path), v.Message, v.Suggestion)
		if v.Info {
			d = r.InfoAt(loc(v.Path), v.Message, v.Suggestion)
		}
		ds = append(ds, d)
	}
	diag.Sort(ds[n:])
	return ds
}
