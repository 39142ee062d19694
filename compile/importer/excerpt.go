package importer

import (
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
)

// Redact hides the source's literal credentials in a report's text. The
// converter never quotes a value into a message; this is the second lock.
func (r *Result) Redact(s string) string { return redact.New(r.Secrets).Redact(s) }

// Excerpts gives a report's printer the lines of the source (data, the
// content of file) with credentials hidden: a line where a credential
// starts is cut there and shows "[REDACTED]" instead (the redactor alone
// would leave a short or plain one, which it cannot tell from text).
func (r *Result) Excerpts(file string, data []byte) diag.Sources {
	cut := map[int]int{} // line → column where the first credential starts
	for _, p := range r.SecretLines {
		if c, ok := cut[p.Line]; !ok || p.Column < c {
			cut[p.Line] = p.Column
		}
	}
	return &excerpts{file: file, ix: node.NewLineIndex(file, data), cut: cut, red: redact.New(r.Secrets)}
}

type excerpts struct {
	file string
	ix   *node.LineIndex
	cut  map[int]int
	red  *redact.Redactor
}

func (e *excerpts) Line(file string, n, col int) (string, int, bool) {
	if file != e.file {
		return "", 0, false
	}
	s, ok := e.ix.Line(n)
	if !ok {
		return "", 0, false
	}
	if at, ok := e.cut[n]; ok {
		rs := []rune(s)
		if at-1 <= len(rs) {
			s = string(rs[:at-1]) + redact.Redacted
		}
		col = min(col, at)
	}
	return e.red.RedactAt(s, col)
}
