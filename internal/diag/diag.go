// Package diag holds the one Diagnostic type every mcpc check produces, and
// the ordering all printers rely on. Finding problems and printing them are
// separate: packages that check things return []Diagnostic, printers in
// package report turn them into text, JSON, SARIF or GitHub annotations.
package diag

import (
	"fmt"
	"sort"
)

// Severity of a diagnostic. Only errors make mcpc exit non-zero (warnings too
// with --strict).
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Diagnostic is one problem found in one place of one input.
//
// File is the path as the user gave it, or a pseudo-file such as
// "<environment>" whose lines are KEY=VALUE entries. Line and Column are
// 1-based; Column counts Unicode characters, not bytes. Line 0 means the
// problem concerns the whole file (an unreadable or empty one).
type Diagnostic struct {
	File       string   `json:"file"`
	Line       int      `json:"line"`
	Column     int      `json:"column"`
	Severity   Severity `json:"severity"`
	Rule       string   `json:"rule"`
	Message    string   `json:"message"`
	Suggestion string   `json:"suggestion,omitempty"`
}

// Pos is a position in an input file.
type Pos struct {
	File   string
	Line   int
	Column int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// IsZero reports whether p names no place at all.
func (p Pos) IsZero() bool { return p.File == "" && p.Line == 0 }

// Pos returns where d points.
func (d Diagnostic) Pos() Pos { return Pos{File: d.File, Line: d.Line, Column: d.Column} }

// Sort orders diagnostics by path, line, column, rule, then message, so that
// every output is byte-identical for the same input.
func Sort(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool { return less(&ds[i], &ds[j]) })
}

// IsSorted reports whether ds is in Sort's order.
func IsSorted(ds []Diagnostic) bool {
	return sort.SliceIsSorted(ds, func(i, j int) bool { return less(&ds[i], &ds[j]) })
}

func less(a, b *Diagnostic) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	if a.Column != b.Column {
		return a.Column < b.Column
	}
	if a.Rule != b.Rule {
		return a.Rule < b.Rule
	}
	if a.Message != b.Message {
		return a.Message < b.Message
	}
	return a.Severity < b.Severity
}

// Count returns how many diagnostics have each severity.
func Count(ds []Diagnostic) (errors, warnings, infos int) {
	for _, d := range ds {
		switch d.Severity {
		case Error:
			errors++
		case Warning:
			warnings++
		default:
			infos++
		}
	}
	return
}

// Sources gives printers the text of an input line, for the excerpt and
// caret under a diagnostic. Implementations must return lines with known
// secret values already redacted, and the column mapped into the returned
// text (redaction changes lengths, and the caret must still point at the
// same place).
type Sources interface {
	Line(file string, line, column int) (text string, col int, ok bool)
}

// Errors returns the diagnostics of ds that are errors, in their order.
func Errors(ds []Diagnostic) []Diagnostic {
	var out []Diagnostic
	for _, d := range ds {
		if d.Severity == Error {
			out = append(out, d)
		}
	}
	return out
}
