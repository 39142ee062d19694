package compile

import (
	"sort"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// DiagnosticsByServer sorts the diagnostics among the servers they are
// about, for a view with one row per server (mcpc ui): a diagnostic
// belongs to the server of the definition written at its place — its
// name, one of its keys or values, on the same line at or before its
// column (a position inside a value, a minified file with every server on
// one line), else the first on its line. A diagnostic at no definition (a file that is not JSON, a
// host variable no server reads) is about the deployment: it is in rest.
// Every diagnostic lands in exactly one of the two.
func (r *Result) DiagnosticsByServer() (byServer map[string][]diag.Diagnostic, rest []diag.Diagnostic) {
	serverOf := r.ServerOf()
	byServer = map[string][]diag.Diagnostic{}
	for _, d := range r.Diagnostics {
		owner := serverOf(d)
		if owner == "" {
			rest = append(rest, d)
			continue
		}
		byServer[owner] = append(byServer[owner], d)
	}
	return byServer, rest
}

// ServerOf returns the function that names the server a diagnostic is
// about, as DiagnosticsByServer sorts them ("" for one about the
// deployment). It applies to any diagnostic positioned in the sources (a
// policy's finding too, which Locate places in its server's definition).
func (r *Result) ServerOf() func(diag.Diagnostic) string {
	ix := r.positions()
	return func(d diag.Diagnostic) string {
		if m, ok := ix.at(d.Pos()); ok {
			return m.name
		}
		return ""
	}
}

// InValue returns the function that reports whether p lies in the value
// (or key) of a server's definition that starts at start: p is start, or
// on its line after it with no other value or key of a definition between.
// A finding Locate puts at start and an error at p are about one value.
func (r *Result) InValue() func(start, p diag.Pos) bool {
	ix := r.positions()
	return func(start, p diag.Pos) bool {
		if p == start {
			return true
		}
		if p.File != start.File || p.Line != start.Line || p.Column < start.Column {
			return false
		}
		m, ok := ix.at(p)
		return ok && m.col == start.Column
	}
}

// mark is the start of a key or value of a server's definition.
type mark struct {
	col  int
	name string
}

type fileLine struct {
	file string
	line int
}

// positionIndex holds, per line of a source, the starts of the keys and
// values of the definitions written there, by column.
type positionIndex map[fileLine][]mark

func (r *Result) positions() positionIndex {
	marks := positionIndex{}
	add := func(p diag.Pos, name string) {
		if p.Line > 0 {
			k := fileLine{p.File, p.Line}
			marks[k] = append(marks[k], mark{p.Column, name})
		}
	}
	var scratch node.Scratch
	for _, e := range r.Entries {
		add(e.NamePos, e.Name)
		walkPositions(e.NodeIn(&scratch), func(p diag.Pos) { add(p, e.Name) })
	}
	for k := range marks {
		ms := marks[k]
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].col < ms[j].col })
	}
	return marks
}

// at is the last mark of p's line at or before p's column, else the
// line's first (p before every mark of its line: a line's start).
func (ix positionIndex) at(p diag.Pos) (mark, bool) {
	ms := ix[fileLine{p.File, p.Line}]
	if len(ms) == 0 {
		return mark{}, false
	}
	found := ms[0]
	for _, m := range ms {
		if m.col > p.Column {
			break
		}
		found = m
	}
	return found, true
}

// walkPositions calls f with the position of n, of each value under it and
// of each object key.
func walkPositions(n *node.Node, f func(diag.Pos)) {
	if n == nil {
		return
	}
	f(n.Pos())
	for _, el := range n.Elems {
		walkPositions(el, f)
	}
	for _, m := range n.Members {
		f(m.KeyPos())
		walkPositions(m.Value, f)
	}
}
