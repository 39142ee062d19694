package schema

import (
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// ParseCUE evaluates a CUE file written by an operator (JSON is CUE too) and
// returns its value as a positioned value tree, so that it is checked like
// every JSON input: each value keeps the position CUE gives it, each key
// the position of its label where the file writes it. The file must
// evaluate to concrete data: references, comprehensions and defaults are
// resolved; an incomplete or conflicting value is a positioned error.
func ParseCUE(file string, data []byte) (*node.Node, []diag.Diagnostic) {
	f, err := parser.ParseFile(file, data, parser.ParseComments)
	if err != nil {
		return nil, cueErrors(err, file, "the file is not valid CUE")
	}
	labels, values := map[string]diag.Pos{}, map[string]diag.Pos{}
	collectPositions(f.Decls, "", labels, values)
	v := cuecontext.New().BuildFile(f)
	if err := v.Err(); err != nil {
		return nil, cueErrors(err, file, "the file does not evaluate")
	}
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, cueErrors(err, file, "the file does not evaluate to data")
	}
	n, err := nodeOf(v, "", file, positions{labels, values})
	if err != nil {
		return nil, cueErrors(err, file, "the file does not evaluate to data")
	}
	return n, nil
}

// positions are where the file writes each label and each value, by path
// (keys and list indices joined with NUL). CUE's own position of a field's
// value is the field's, so the file's syntax is what places a value.
type positions struct{ labels, values map[string]diag.Pos }

// collectPositions records the positions of the plain fields of decls and,
// inside them, of list elements and nested structs.
func collectPositions(decls []ast.Decl, prefix string, labels, values map[string]diag.Pos) {
	for _, d := range decls {
		field, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		name, _, err := ast.LabelName(field.Label)
		if err != nil {
			continue
		}
		path := prefix + "\x00" + name
		if _, seen := labels[path]; !seen {
			labels[path] = posOf(field.Label.Pos())
		}
		collectValue(field.Value, path, labels, values)
	}
}

func collectValue(x ast.Expr, path string, labels, values map[string]diag.Pos) {
	if _, seen := values[path]; !seen {
		values[path] = posOf(x.Pos())
	}
	switch x := x.(type) {
	case *ast.StructLit:
		collectPositions(x.Elts, path, labels, values)
	case *ast.ListLit:
		for i, e := range x.Elts {
			collectValue(e, path+"\x00"+strconv.Itoa(i), labels, values)
		}
	}
}

func posOf(p token.Pos) diag.Pos {
	return diag.Pos{File: p.Filename(), Line: p.Line(), Column: p.Column()}
}

// nodeOf converts an evaluated, concrete value.
func nodeOf(v cue.Value, path, file string, at positions) (*node.Node, error) {
	pos, ok := at.values[path]
	if !ok || pos.Line == 0 {
		pos = posOf(v.Pos())
	}
	if pos.Line == 0 {
		pos = diag.Pos{File: file, Line: 1, Column: 1}
	}
	n := &node.Node{Loc: node.LocOf(pos)}
	switch v.Kind() {
	case cue.StructKind:
		n.Kind = node.Object
		iter, err := v.Fields()
		if err != nil {
			return nil, err
		}
		for iter.Next() {
			key := iter.Selector().Unquoted()
			child, err := nodeOf(iter.Value(), path+"\x00"+key, file, at)
			if err != nil {
				return nil, err
			}
			keyPos, ok := at.labels[path+"\x00"+key]
			if !ok {
				keyPos = child.Pos()
			}
			n.Members = append(n.Members, node.Member{Key: key, KeyLoc: node.LocOf(keyPos), Value: child})
		}
	case cue.ListKind:
		n.Kind = node.Array
		iter, err := v.List()
		if err != nil {
			return nil, err
		}
		for i := 0; iter.Next(); i++ {
			child, err := nodeOf(iter.Value(), path+"\x00"+strconv.Itoa(i), file, at)
			if err != nil {
				return nil, err
			}
			n.Elems = append(n.Elems, child)
		}
	case cue.StringKind:
		s, err := v.String()
		if err != nil {
			return nil, err
		}
		n.Kind, n.Text, n.TextOffset = node.String, s, 1
	case cue.IntKind, cue.FloatKind, cue.NumberKind:
		b, err := v.MarshalJSON()
		if err != nil {
			return nil, err
		}
		n.Kind, n.Text = node.Number, string(b)
	case cue.BoolKind:
		b, err := v.Bool()
		if err != nil {
			return nil, err
		}
		n.Kind, n.Bool = node.Bool, b
	case cue.NullKind:
		n.Kind = node.Null
	default:
		return nil, fmt.Errorf("%s: a value of kind %s is not data", strings.ReplaceAll(strings.TrimPrefix(path, "\x00"), "\x00", "."), v.Kind())
	}
	return n, nil
}

// cueErrors turns CUE errors into diagnostics in file.
func cueErrors(err error, file, what string) []diag.Diagnostic {
	var ds []diag.Diagnostic
	for _, e := range cueerrors.Errors(err) {
		pos := diag.Pos{File: file, Line: 1, Column: 1}
		for _, p := range append([]token.Pos{e.Position()}, cueerrors.Positions(e)...) {
			if p.IsValid() && p.Filename() == file {
				pos = posOf(p)
				break
			}
		}
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if path := e.Path(); len(path) > 0 {
			msg = strings.Join(path, ".") + ": " + msg
		}
		ds = append(ds, rules.CUESyntax.At(pos, what+": "+msg, ""))
	}
	if len(ds) == 0 {
		ds = append(ds, rules.CUESyntax.At(diag.Pos{File: file, Line: 1, Column: 1}, what+": "+err.Error(), ""))
	}
	diag.Sort(ds)
	return ds
}
