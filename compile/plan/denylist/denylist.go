// Package denylist decides which host environment variables are secrets that
// servers never inherit. The list is data: the embedded denylist.cue, to
// which a file of the same shape given with --deny-list adds (or which it
// replaces, when it says replace: true). The sealing keys are denied in
// every case.
package denylist

import (
	_ "embed"
	"fmt"
	"path"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"
	"github.com/agnivade/levenshtein"

	"github.com/mcpc-dev/mcpc/internal/inputfile"
)

//go:embed denylist.cue
var defaultSource string

// schema every deny-list file must satisfy.
const schema = `
names?: [...string]
patterns?: [...string]
replace?: bool
`

// fields are the fields a deny-list file may have.
var fields = []string{"names", "patterns", "replace"}

// alwaysDenied are the sealing keys (remote.SecretVar and
// remote.FallbackSecretVar): with either, a server could open every chat's
// sealed headers, so no deny-list can let a server inherit them.
var alwaysDenied = []string{"MCP_ENCRYPTION_SECRET", "TELEGRAM_BOT_TOKEN"}

// AlwaysDenied returns the names every list denies, whatever a custom list
// says. (The gateway's own tokens are withheld by mcpc run, by the name
// its flags give them.)
func AlwaysDenied() []string { return append([]string(nil), alwaysDenied...) }

// List is a compiled deny-list. It is immutable and safe for concurrent use.
type List struct {
	names    map[string]bool
	patterns []string
}

// source is what one deny-list file says.
type source struct {
	Names    []string `json:"names"`
	Patterns []string `json:"patterns"`
	Replace  bool     `json:"replace"`
}

// Default returns the built-in deny-list.
func Default() *List {
	src, err := defaultParsed()
	if err != nil {
		panic("denylist: embedded list does not compile: " + err.Error())
	}
	l := newList()
	if err := l.add("denylist.cue", src); err != nil {
		panic("denylist: embedded list does not compile: " + err.Error())
	}
	return l
}

// defaultParsed is the built-in list's source, parsed once: parsing is
// a CUE compilation, and every compilation of a deployment starts from the
// default list. Each List is built from it anew (Load adds to it); the
// slices of a source are only read.
var defaultParsed = sync.OnceValues(func() (source, error) {
	return parse("denylist.cue", []byte(defaultSource))
})

// Load reads a deny-list file (CUE or JSON with "names", "patterns" and
// "replace"). It adds to the built-in list unless it says replace: true;
// either way the sealing keys stay denied. A field it does not know, or a
// file that lists no name and no pattern (empty, only comments, or its
// fields misspelt), is an error: it would silently deny less than meant.
func Load(file string) (*List, error) {
	data, err := inputfile.ReadText(file)
	if err != nil {
		return nil, err
	}
	src, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	if len(src.Names) == 0 && len(src.Patterns) == 0 {
		return nil, fmt.Errorf("deny-list %s lists no names and no patterns; write at least one (names: [\"MY_TOKEN\"], patterns: [\"*_TOKEN\"]): a custom list adds to the built-in one, or replaces it with replace: true", file)
	}
	l := newList()
	if !src.Replace {
		l = Default()
	}
	if err := l.add(file, src); err != nil {
		return nil, err
	}
	return l, nil
}

func newList() *List {
	l := &List{names: map[string]bool{}}
	for _, n := range alwaysDenied {
		l.names[n] = true
	}
	return l
}

// parse reads one deny-list file: only known fields, of the right types.
func parse(file string, data []byte) (source, error) {
	var src source
	f, err := parser.ParseFile(file, data)
	if err != nil {
		return src, fmt.Errorf("deny-list %s: %w", file, err)
	}
	if err := checkFields(file, f); err != nil {
		return src, err
	}
	ctx := cuecontext.New()
	v := ctx.BuildFile(f)
	v = ctx.CompileString(schema).Unify(v)
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return src, fmt.Errorf("deny-list %s: %w", file, err)
	}
	if err := v.Decode(&src); err != nil {
		return src, fmt.Errorf("deny-list %s: %w", file, err)
	}
	return src, nil
}

// checkFields refuses a top-level field other than names, patterns and
// replace, at its position, with a did-you-mean.
func checkFields(file string, f *ast.File) error {
	for _, fd := range topFields(f.Decls) {
		name, _, err := ast.LabelName(fd.Label)
		if err != nil || known(name) {
			continue // a computed label: the schema check reports it
		}
		pos := fd.Label.Pos()
		sugg := "a deny-list has the fields " + strings.Join(fields, ", ")
		if m := closest(name); m != "" {
			sugg = fmt.Sprintf("did you mean %q? ", m) + sugg
		}
		return fmt.Errorf("deny-list %s:%d:%d: unknown field %q; %s", file, pos.Line(), pos.Column(), name, sugg)
	}
	return nil
}

// topFields are the fields at the top of a file, CUE (names: […]) or JSON
// ({"names": […]}).
func topFields(decls []ast.Decl) []*ast.Field {
	var out []*ast.Field
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.Field:
			out = append(out, d)
		case *ast.EmbedDecl:
			if s, ok := d.Expr.(*ast.StructLit); ok {
				out = append(out, topFields(s.Elts)...)
			}
		}
	}
	return out
}

func known(name string) bool {
	for _, f := range fields {
		if name == f {
			return true
		}
	}
	return false
}

// closest is the field name is most likely a misspelling of ("" if none).
func closest(name string) string {
	best, bestDist := "", 3
	for _, f := range fields {
		if strings.EqualFold(name, f) {
			return f
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(name), f); d < bestDist {
			best, bestDist = f, d
		}
	}
	return best
}

func (l *List) add(file string, src source) error {
	// A blank entry denies nothing: a list of blanks would silently
	// deny nothing at all.
	for _, f := range []struct {
		name    string
		entries []string
	}{{"names", src.Names}, {"patterns", src.Patterns}} {
		for i, e := range f.entries {
			if strings.TrimSpace(e) == "" {
				return fmt.Errorf("deny-list %s: %s[%d] is blank and would deny nothing; write a variable name (MY_TOKEN) or a pattern (*_TOKEN), or remove it", file, f.name, i)
			}
		}
	}
	for _, n := range src.Names {
		l.names[strings.ToUpper(n)] = true
	}
	for _, p := range src.Patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("deny-list %s: bad pattern %q: %w", file, p, err)
		}
		l.patterns = append(l.patterns, strings.ToUpper(p))
	}
	return nil
}

// Denied reports whether the variable name is a host secret.
func (l *List) Denied(name string) bool {
	up := strings.ToUpper(name)
	if l.names[up] {
		return true
	}
	for _, p := range l.patterns {
		// The usual "*_TOKEN" pattern is a suffix test.
		if suffix, ok := strings.CutPrefix(p, "*"); ok && !strings.ContainsAny(suffix, `*?[\`) {
			if strings.HasSuffix(up, suffix) {
				return true
			}
			continue
		}
		if ok, _ := path.Match(p, up); ok {
			return true
		}
	}
	return false
}
