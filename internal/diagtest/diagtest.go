// Package diagtest holds what tests of several packages check about
// diagnostics: that each one is complete and positioned inside its file.
package diagtest

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// CheckPositions fails t when a diagnostic names a file that is not in lines,
// points outside its file, or lacks a rule, a message or a known severity.
// lines maps each file to its lines.
func CheckPositions(t testing.TB, ds []diag.Diagnostic, lines map[string][]string) {
	t.Helper()
	for _, d := range ds {
		ls, ok := lines[d.File]
		if !ok {
			t.Fatalf("diagnostic in unknown file %q: %+v", d.File, d)
		}
		if d.Line < 1 || d.Line > len(ls) {
			t.Fatalf("line %d outside 1..%d: %+v", d.Line, len(ls), d)
		}
		if n := utf8.RuneCountInString(ls[d.Line-1]); d.Column < 1 || d.Column > n+1 {
			t.Fatalf("column %d outside 1..%d of %q: %+v", d.Column, n+1, ls[d.Line-1], d)
		}
		if d.Rule == "" || d.Message == "" || (d.Severity != diag.Error && d.Severity != diag.Warning && d.Severity != diag.Info) {
			t.Fatalf("incomplete diagnostic %+v", d)
		}
	}
}

// Lines splits a file's content into lines as diagnostics count them.
func Lines(b []byte) []string { return strings.Split(string(b), "\n") }
