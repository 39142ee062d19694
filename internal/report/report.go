// Package report prints diagnostics. Checks produce []diag.Diagnostic; the
// printers here turn them into one output format each: human-readable text,
// JSON, SARIF 2.1.0, GitHub Actions workflow commands, JUnit XML or GitLab
// Code Quality JSON. A printer prints one document for one run, however many
// deployments it checked. Every printer sorts a copy of its input with
// diag.Sort, so the same diagnostics always give byte-identical output, and
// builds the whole output before writing it once.
package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Printer writes a report of diagnostics to w. It does not modify its input.
type Printer interface {
	// Print reports a run that found ds.
	Print(w io.Writer, ds []diag.Diagnostic) error
	// PrintRun reports a run as a whole: what it found, what an ignore
	// suppressed, and whether it ended without a result.
	PrintRun(w io.Writer, r Run) error
}

// Run is what one run of a command found, printed as one document.
type Run struct {
	Diagnostics []diag.Diagnostic
	// Suppressed are findings an ignore dropped. SARIF lists them as
	// suppressed results; the other formats leave them out, as the text
	// summary counts them.
	Suppressed []Suppressed
	// Failure, when set, is why the run stopped without a complete result
	// (exit 2: a bad flag, an input it cannot read, nothing to check). A
	// machine format still prints a valid document, which says so: an
	// upload step fails on an empty file.
	Failure string
}

// Suppressed is a finding an ignore dropped, with the ignore's reason.
type Suppressed struct {
	Diagnostic diag.Diagnostic
	Reason     string
}

// runPrinter is one format's printer.
type runPrinter interface {
	printRun(w io.Writer, r Run) error
}

// Options configure a printer. The zero value is usable.
type Options struct {
	// Sources supplies input lines for the excerpt under a text diagnostic.
	// It may be nil; then no excerpts are printed.
	Sources diag.Sources
	// OneLine prints one line per diagnostic in the text format: no source
	// excerpt, caret or suggestion.
	OneLine bool
	// Rules looks up rule metadata for SARIF. Nil means rules.Lookup.
	Rules func(id string) (rules.Rule, bool)
	// ToolVersion is reported as the tool version in SARIF; empty omits it.
	ToolVersion string
	// Redact, when set, is applied to every message and suggestion as it is
	// printed: the one place where diagnostics leave mcpc (excerpts come
	// from Sources, which redact their own lines).
	Redact func(string) string
	// Root is the repository root, the base of the paths of SARIF (as
	// %SRCROOT%), GitLab Code Quality and JUnit: a file below it is named
	// relative to it. Empty leaves paths as the diagnostics give them.
	Root string
	// HelpURI is the address of a rule's documentation, "" for none (a
	// team's pack rule). Nil means RulesDocURI for the rules of package rules.
	HelpURI func(id string) string
	// Strict counts warnings as failures, as --strict does for the exit
	// code: in JUnit they are failed test cases too.
	Strict bool
	// Color marks up the text format with ANSI colors for a terminal: the
	// location bold, the severity in its color, the caret and the
	// suggestion's label. Off, the output is plain text; the other formats
	// ignore it. The caller decides (a terminal, NO_COLOR, --color).
	Color bool
}

// Formats lists the valid format names, in the order shown to users.
var Formats = []string{"text", "json", "sarif", "github", "junit", "gitlab"}

// Documents are the formats whose output is one document, which must be
// printed even for a run that failed (Run.Failure).
var Documents = []string{"json", "sarif", "junit", "gitlab"}

// RulesDoc is where docs/rules.md is published: a rule's entry is its id as
// the anchor (the heading "## id").
const RulesDoc = toolInfoURI + "/blob/main/docs/rules.md"

// RulesDocURI is the address of rule id's entry in docs/rules.md.
func RulesDocURI(id string) string { return RulesDoc + "#" + id }

// New returns the printer for format, one of Formats.
func New(format string, opts Options) (Printer, error) {
	if opts.Rules == nil {
		opts.Rules = rules.Lookup
	}
	if opts.HelpURI == nil {
		opts.HelpURI = func(id string) string {
			if _, ok := rules.Lookup(id); ok {
				return RulesDocURI(id)
			}
			return ""
		}
	}
	var p runPrinter
	switch format {
	case "text":
		p = textPrinter{opts}
	case "json":
		p = jsonPrinter{}
	case "sarif":
		p = sarifPrinter{opts}
	case "github":
		p = githubPrinter{}
	case "junit":
		p = junitPrinter{opts}
	case "gitlab":
		p = gitlabPrinter{opts}
	default:
		return nil, fmt.Errorf("unknown format %q (valid: %s)", format, strings.Join(Formats, ", "))
	}
	return printer{p, opts.Redact}, nil
}

// printer prints through one format's printer, with known secrets redacted
// from a copy of the run when redact is set.
type printer struct {
	p      runPrinter
	redact func(string) string
}

func (p printer) Print(w io.Writer, ds []diag.Diagnostic) error {
	return p.PrintRun(w, Run{Diagnostics: ds})
}

func (p printer) PrintRun(w io.Writer, r Run) error {
	if p.redact == nil {
		return p.p.printRun(w, r)
	}
	one := func(d diag.Diagnostic) diag.Diagnostic {
		d.Message, d.Suggestion = p.redact(d.Message), p.redact(d.Suggestion)
		return d
	}
	// The run's diagnostics are copied only from the first that redaction
	// changes: most runs have none to redact.
	out := Run{Diagnostics: r.Diagnostics, Failure: p.redact(r.Failure)}
	copied := false
	for i, d := range r.Diagnostics {
		x := one(d)
		if x == d {
			continue
		}
		if !copied {
			out.Diagnostics, copied = slices.Clone(r.Diagnostics), true
		}
		out.Diagnostics[i] = x
	}
	for _, s := range r.Suppressed {
		out.Suppressed = append(out.Suppressed, Suppressed{Diagnostic: one(s.Diagnostic), Reason: p.redact(s.Reason)})
	}
	return p.p.printRun(w, out)
}

// Summary describes how many diagnostics of each severity there are, as in
// "2 errors, 1 warning" or "no problems". Severities with no diagnostics are
// left out; diagnostics of an unknown severity count as info, as in diag.Count.
func Summary(ds []diag.Diagnostic) string {
	e, w, i := diag.Count(ds)
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, strconv.Itoa(n)+" "+many)
		}
	}
	add(e, "error", "errors")
	add(w, "warning", "warnings")
	add(i, "info", "info")
	if len(parts) == 0 {
		return "no problems"
	}
	return strings.Join(parts, ", ")
}

// sorted returns a sorted copy of ds; the caller's slice is left alone.
func sorted(ds []diag.Diagnostic) []diag.Diagnostic {
	if diag.IsSorted(ds) { // the printers only read it
		return ds
	}
	out := make([]diag.Diagnostic, len(ds))
	copy(out, ds)
	diag.Sort(out)
	return out
}

// sortedSuppressed returns a copy of ss in the order of diag.Sort, their
// reasons breaking ties.
func sortedSuppressed(ss []Suppressed) []Suppressed {
	out := make([]Suppressed, len(ss))
	copy(out, ss)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Diagnostic, out[j].Diagnostic
		if a == b {
			return out[i].Reason < out[j].Reason
		}
		// diag.Sort is stable: it puts a before b only when a sorts first.
		pair := []diag.Diagnostic{b, a}
		diag.Sort(pair)
		return pair[0] == a
	})
	return out
}

// relPath is file as the document formats name it: relative to root, with
// forward slashes, when root is set and file is below it (ok); else file
// unchanged.
func relPath(root, file string) (string, bool) {
	if root == "" || file == "" {
		return file, false
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return file, false
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return file, false
	}
	return filepath.ToSlash(rel), true
}

// flush writes what is buffered of a report in one call.
func flush(w io.Writer, buf *bytes.Buffer) error {
	_, err := w.Write(buf.Bytes())
	return err
}
