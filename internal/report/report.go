// Package report prints diagnostics. Checks produce []diag.Diagnostic; the
// printers here turn them into one output format each: human-readable text,
// JSON, SARIF 2.1.0 or GitHub Actions workflow commands. Every printer sorts a
// copy of its input with diag.Sort, so the same diagnostics always give
// byte-identical output, and builds the whole output before writing it once.
package report

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Printer writes a report of diagnostics to w. It does not modify ds.
type Printer interface {
	Print(w io.Writer, ds []diag.Diagnostic) error
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
	// Color marks up the text format with ANSI colors for a terminal: the
	// location bold, the severity in its color, the caret and the
	// suggestion's label. Off, the output is plain text; the other formats
	// ignore it. The caller decides (a terminal, NO_COLOR, --color).
	Color bool
}

// Formats lists the valid format names, in the order shown to users.
var Formats = []string{"text", "json", "sarif", "github"}

// New returns the printer for format, one of Formats.
func New(format string, opts Options) (Printer, error) {
	if opts.Rules == nil {
		opts.Rules = rules.Lookup
	}
	var p Printer
	switch format {
	case "text":
		p = textPrinter{opts}
	case "json":
		p = jsonPrinter{}
	case "sarif":
		p = sarifPrinter{opts}
	case "github":
		p = githubPrinter{}
	default:
		return nil, fmt.Errorf("unknown format %q (valid: %s)", format, strings.Join(Formats, ", "))
	}
	if opts.Redact != nil {
		p = redacting{p, opts.Redact}
	}
	return p, nil
}

// redacting prints a copy of the diagnostics with known secrets redacted.
type redacting struct {
	p      Printer
	redact func(string) string
}

func (r redacting) Print(w io.Writer, ds []diag.Diagnostic) error {
	out := make([]diag.Diagnostic, len(ds))
	for i, d := range ds {
		d.Message, d.Suggestion = r.redact(d.Message), r.redact(d.Suggestion)
		out[i] = d
	}
	return r.p.Print(w, out)
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
	out := make([]diag.Diagnostic, len(ds))
	copy(out, ds)
	diag.Sort(out)
	return out
}

// flush writes the buffered report in one call.
func flush(w io.Writer, buf *bytes.Buffer) error {
	_, err := w.Write(buf.Bytes())
	return err
}
