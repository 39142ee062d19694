package lint

import (
	"fmt"
	"path/filepath"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Applied is the outcome of applying a deployment's rule configuration.
type Applied struct {
	Diagnostics []diag.Diagnostic
	// Ignored counts the findings dropped by an ignore, per rule id;
	// Off counts those of rules set to off.
	Ignored map[string]int
	Off     map[string]int
	// Suppressed are the findings an ignore dropped, with its reason: SARIF
	// reports them as suppressed results.
	Suppressed []Suppressed
}

// Suppressed is a finding an ignore dropped.
type Suppressed struct {
	Diagnostic diag.Diagnostic
	Reason     string
}

// Apply is the one pass that applies the deployment's rule severities and
// ignores (those of mcpc.cue and the inline ones of the sources) to what
// the checks found, by rule id (the checks themselves know nothing of
// configuration). An ignore's path is a glob (with **) matched against the
// finding's file relative to the deployment's directory; its server is
// matched against serverOf's name for the finding (nil: none). A nil
// deployment configures nothing but the inline ignores. The findings of
// mcpc.cue itself are never ignored.
//
// An ignore that matched no finding is reported (ignore-unused) where it
// is written: a stale ignore would hide the next real finding. A finding of
// a rule set off still counts as matched: the ignore is not stale, its rule
// is switched off.
func (d *Deployment) Apply(ds []diag.Diagnostic, inline []Ignore, serverOf func(diag.Diagnostic) string) Applied {
	var kept []diag.Diagnostic
	if len(ds) > 0 {
		kept = make([]diag.Diagnostic, 0, len(ds)) // most are kept
	}
	return d.applyInto(kept, ds, inline, serverOf)
}

// applyInto is Apply appending the findings kept to kept, which may be
// ds[:0] (each is written where one was read, or before): a lint's
// findings are not copied once more.
func (d *Deployment) applyInto(kept, ds []diag.Diagnostic, inline []Ignore, serverOf func(diag.Diagnostic) string) Applied {
	out := Applied{Diagnostics: kept, Ignored: map[string]int{}, Off: map[string]int{}}
	var ignores []Ignore
	if d != nil {
		ignores = append(ignores, d.Ignores...)
	}
	ignores = append(ignores, inline...)
	used := make([]bool, len(ignores))
	severity := func(x *diag.Diagnostic) bool {
		if d == nil {
			return true
		}
		switch sev := d.Rules[x.Rule]; sev {
		case "off":
			out.Off[x.Rule]++
			return false
		case "error", "warning", "info":
			x.Severity = diag.Severity(sev)
		}
		return true
	}
	for _, x := range ds {
		if x.Rule == rules.DeploymentInvalid.ID {
			out.Diagnostics = append(out.Diagnostics, x)
			continue
		}
		var ignoredBy *Ignore
		for i := range ignores {
			if d.matches(&ignores[i], x, serverOf) {
				used[i] = true
				if ignoredBy == nil {
					ignoredBy = &ignores[i]
				}
			}
		}
		if !severity(&x) {
			continue
		}
		if ignoredBy != nil {
			out.Ignored[x.Rule]++
			out.Suppressed = append(out.Suppressed, Suppressed{Diagnostic: x, Reason: ignoredBy.Reason})
			continue
		}
		out.Diagnostics = append(out.Diagnostics, x)
	}
	if len(out.Diagnostics) == 0 {
		out.Diagnostics = nil // as when none was appended
	}
	for i, ig := range ignores {
		if used[i] {
			continue
		}
		where := "in " + ig.Path
		switch {
		case ig.File != "":
			where = fmt.Sprintf("on line %d", ig.From)
			if ig.To > ig.From {
				where = fmt.Sprintf("on lines %d to %d", ig.From, ig.To)
			}
		case ig.Path == "":
			where = fmt.Sprintf("of server %q", ig.Server)
		case ig.Server != "":
			where += fmt.Sprintf(" of server %q", ig.Server)
		}
		x := rules.IgnoreUnused.At(ig.Pos, fmt.Sprintf("this ignore of %s matched no finding: no %s finding %s", ig.Rule, ig.Rule, where),
			"remove the ignore: it would hide the next real finding")
		if severity(&x) {
			out.Diagnostics = append(out.Diagnostics, x)
		}
	}
	diag.Sort(out.Diagnostics)
	return out
}

// matches reports whether ig drops x.
func (d *Deployment) matches(ig *Ignore, x diag.Diagnostic, serverOf func(diag.Diagnostic) string) bool {
	if ig.Rule != x.Rule {
		return false
	}
	if ig.File != "" {
		return x.File == ig.File && x.Line >= ig.From && x.Line <= ig.To
	}
	if ig.Path != "" {
		rel := x.File
		if r, err := filepath.Rel(d.Dir, x.File); err == nil {
			rel = r
		}
		if ok, _ := doublestar.Match(ig.Path, filepath.ToSlash(rel)); !ok {
			return false
		}
	}
	if ig.Server != "" && (serverOf == nil || serverOf(x) != ig.Server) {
		return false
	}
	return true
}
