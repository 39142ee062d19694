// Package denylist decides which host environment variables are secrets that
// servers never inherit. The list is data: the embedded denylist.cue, or a
// file of the same shape given with --deny-list.
package denylist

import (
	_ "embed"
	"fmt"
	"path"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/mcpc-dev/mcpc/internal/inputfile"
)

//go:embed denylist.cue
var defaultSource string

// schema every deny-list file must satisfy.
const schema = `
names: [...string]
patterns: [...string]
`

// List is a compiled deny-list. It is immutable and safe for concurrent use.
type List struct {
	names    map[string]bool
	patterns []string
}

// Default returns the built-in deny-list.
func Default() *List {
	l, err := parse("denylist.cue", defaultSource)
	if err != nil {
		panic("denylist: embedded list does not compile: " + err.Error())
	}
	return l
}

// Load reads a deny-list file (CUE or JSON with "names" and "patterns").
func Load(file string) (*List, error) {
	data, err := inputfile.Read(file)
	if err != nil {
		return nil, err
	}
	return parse(file, string(data))
}

func parse(file, src string) (*List, error) {
	ctx := cuecontext.New()
	v := ctx.CompileString(src, cue.Filename(file))
	v = ctx.CompileString(schema).Unify(v)
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, fmt.Errorf("deny-list %s: %w", file, err)
	}
	var raw struct {
		Names    []string `json:"names"`
		Patterns []string `json:"patterns"`
	}
	if err := v.Decode(&raw); err != nil {
		return nil, fmt.Errorf("deny-list %s: %w", file, err)
	}
	l := &List{names: map[string]bool{}}
	for _, n := range raw.Names {
		l.names[strings.ToUpper(n)] = true
	}
	for _, p := range raw.Patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("deny-list %s: bad pattern %q: %w", file, p, err)
		}
		l.patterns = append(l.patterns, strings.ToUpper(p))
	}
	return l, nil
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
