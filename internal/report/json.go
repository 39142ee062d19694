package report

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// jsonPrinter prints an indented JSON array with one object per diagnostic.
// A failed run ends the array with an error that has no file and no rule:
// the failure's message.
type jsonPrinter struct{}

// jsonDiagnostic fixes the keys and their order independently of diag.
type jsonDiagnostic struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	Severity   string `json:"severity"`
	Rule       string `json:"rule"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion,omitempty"`
}

func (jsonPrinter) printRun(w io.Writer, r Run) error {
	out := make([]jsonDiagnostic, 0, len(r.Diagnostics)+1)
	for _, d := range sorted(r.Diagnostics) {
		out = append(out, jsonDiagnostic{
			File: d.File, Line: d.Line, Column: d.Column, Severity: string(d.Severity),
			Rule: d.Rule, Message: d.Message, Suggestion: d.Suggestion,
		})
	}
	if r.Failure != "" {
		out = append(out, jsonDiagnostic{Severity: string(diag.Error), Message: r.Failure})
	}
	var buf bytes.Buffer
	if err := encodeJSON(&buf, out); err != nil {
		return err
	}
	return flush(w, &buf)
}

// encodeJSON writes v with two-space indentation, no HTML escaping and a
// final newline.
func encodeJSON(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
