package node

import (
	"math"
	"unique"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// Loc is a diag.Pos in 16 bytes instead of 32: the file name is a handle
// shared by every value of the file, line and column are 32-bit. Every
// value and every key of every source keeps one until the end of a
// compilation (for diagnostics and explanations), so their size is much of
// what a compilation holds (docs/decisions/0013-positions-and-excerpts.md).
//
// The zero Loc is the zero diag.Pos.
type Loc struct {
	file      unique.Handle[string]
	line, col int32
}

// LocOf makes the Loc of p. A line or column beyond 32 bits (an input file
// is at most 16 MiB, so only a position made up elsewhere) is stored as the
// largest 32-bit value.
func LocOf(p diag.Pos) Loc {
	return Loc{file: fileHandle(p.File), line: clamp32(p.Line), col: clamp32(p.Column)}
}

// fileHandle interns name; the empty name is the zero handle.
func fileHandle(name string) unique.Handle[string] {
	if name == "" {
		return unique.Handle[string]{}
	}
	return unique.Make(name)
}

func clamp32(v int) int32 {
	switch {
	case v > math.MaxInt32:
		return math.MaxInt32
	case v < math.MinInt32:
		return math.MinInt32
	}
	return int32(v)
}

// Pos is the position l stands for.
func (l Loc) Pos() diag.Pos {
	p := diag.Pos{Line: int(l.line), Column: int(l.col)}
	if l.file != (unique.Handle[string]{}) {
		p.File = l.file.Value()
	}
	return p
}

// At is a Loc in the same file as l at line and col: a source that makes
// many positions in one file interns its name once.
func (l Loc) At(line, col int) Loc {
	return Loc{file: l.file, line: clamp32(line), col: clamp32(col)}
}

// StrAt builds a string node at l.
func StrAt(s string, l Loc) *Node { return &Node{Kind: String, Text: s, Loc: l} }

// Line is the line of l (what Pos().Line gives), without making a diag.Pos.
func (l Loc) Line() int { return int(l.line) }
