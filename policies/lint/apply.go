package lint

import (
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
// ignores to what the checks found, by rule id (the checks themselves know
// nothing of configuration). An ignore's path is a glob (with **) matched
// against the finding's file relative to the deployment's directory. A nil
// deployment changes nothing. The findings of mcpc.cue itself are never
// ignored.
func (d *Deployment) Apply(ds []diag.Diagnostic) Applied {
	out := Applied{Ignored: map[string]int{}, Off: map[string]int{}}
	for _, x := range ds {
		if d == nil || x.Rule == rules.DeploymentInvalid.ID {
			out.Diagnostics = append(out.Diagnostics, x)
			continue
		}
		switch sev := d.Rules[x.Rule]; sev {
		case "off":
			out.Off[x.Rule]++
			continue
		case "error", "warning", "info":
			x.Severity = diag.Severity(sev)
		}
		if ig := d.ignored(x); ig != nil {
			out.Ignored[x.Rule]++
			out.Suppressed = append(out.Suppressed, Suppressed{Diagnostic: x, Reason: ig.Reason})
			continue
		}
		out.Diagnostics = append(out.Diagnostics, x)
	}
	diag.Sort(out.Diagnostics)
	return out
}

// ignored is the first ignore that drops x, nil if none does.
func (d *Deployment) ignored(x diag.Diagnostic) *Ignore {
	rel := x.File
	if r, err := filepath.Rel(d.Dir, x.File); err == nil {
		rel = r
	}
	rel = filepath.ToSlash(rel)
	for i, ig := range d.Ignores {
		if ig.Rule != x.Rule {
			continue
		}
		if ok, _ := doublestar.Match(ig.Path, rel); ok {
			return &d.Ignores[i]
		}
	}
	return nil
}
