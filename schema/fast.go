package schema

import (
	"cmp"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// The fast path of Check. Building and unifying a CUE value per entry cost
// most of a validation's time and memory, and nearly every entry is valid.
// So New derives, from the compiled schema (never from a second copy written
// in Go), a rule per definition that says in plain Go whether CUE would
// accept a value: kinds, literals, regular expressions, bounds, required and
// declared fields, patterns, list elements. Check asks the rule first; CUE
// runs only on what the rule does not accept, so every message is CUE's, as
// before. A rule may turn down more than CUE would (that only costs time);
// it must never accept what CUE turns down: schema constructs it does not
// understand make the derivation fail (TestFastPathUnderstandsTheSchemas),
// and a test compares both paths on every golden case and on fuzzed input.

// A rule accepts a value when CUE's validation of it against the schema
// part the rule was derived from would find nothing wrong.
type rule interface {
	accepts(n *node.Node) bool
}

// anyValue is _: every value CUE can build. An object that repeats a key
// unifies the key's values, which may conflict; such values go to CUE.
type anyValue struct{}

func (anyValue) accepts(n *node.Node) bool {
	switch n.Kind {
	case node.Object:
		if hasDuplicateKeys(n) {
			return false
		}
		for i := range n.Members {
			if !(anyValue{}).accepts(n.Members[i].Value) {
				return false
			}
		}
	case node.Array:
		for _, e := range n.Elems {
			if !(anyValue{}).accepts(e) {
				return false
			}
		}
	}
	return true
}

// kindRule is a basic type or a union of them (string, int, bool | null).
type kindRule cue.Kind

func (k kindRule) accepts(n *node.Node) bool {
	return n.Kind != node.Object && n.Kind != node.Array && !negative(n) && kindAllows(cue.Kind(k), n)
}

// negative: Check hands CUE a negative number as one literal ("-0"), which
// CUE does not read as the number JSON means (-0 fails >=0); the fast path
// leaves every negative number to CUE, so its message stays CUE's.
func negative(n *node.Node) bool {
	return n.Kind == node.Number && strings.HasPrefix(n.Text, "-")
}

// allOf is a conjunction (a & b).
type allOf []rule

func (a allOf) accepts(n *node.Node) bool {
	for _, r := range a {
		if !r.accepts(n) {
			return false
		}
	}
	return true
}

// oneOf is a disjunction without defaults (a | b).
type oneOf []rule

func (o oneOf) accepts(n *node.Node) bool {
	for _, r := range o {
		if r.accepts(n) {
			return true
		}
	}
	return false
}

// litRule is a concrete string, integer, boolean or null.
type litRule struct {
	kind node.Kind
	text string   // String
	num  *big.Int // Number: an integer
	b    bool     // Bool
}

func (l litRule) accepts(n *node.Node) bool {
	if n.Kind != l.kind {
		return false
	}
	switch l.kind {
	case node.String:
		return n.Text == l.text
	case node.Number:
		c, ok := compareInt(n, l.num)
		return ok && c == 0
	case node.Bool:
		return n.Bool == l.b
	}
	return true // null
}

// notEqual is != x, for a string or integer x. A value of another kind is
// turned down: whether CUE accepts it is not worth knowing here.
type notEqual litRule

func (l notEqual) accepts(n *node.Node) bool {
	if n.Kind != l.kind || (n.Kind == node.Number && !isPlainInt(n)) {
		return false
	}
	return !litRule(l).accepts(n)
}

// match is =~ re (or !~ re when !want).
type match struct {
	re   *lazyRegexp
	want bool
}

func (m match) accepts(n *node.Node) bool {
	return n.Kind == node.String && m.re.get().MatchString(n.Text) == m.want
}

// lazyRegexp is a regular expression compiled on its first use: a process
// that checks no value against it compiles nothing. The built-in rules'
// expressions compiled when they were derived.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func newLazyRegexp(src string) *lazyRegexp { return &lazyRegexp{src: src} }

// compiledRegexp is re as a lazyRegexp.
func compiledRegexp(re *regexp.Regexp) *lazyRegexp {
	l := &lazyRegexp{src: re.String()}
	l.once.Do(func() { l.re = re })
	return l
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

// bound is < <= > >= an integer. Only integers written plainly are compared;
// any other value (a float, an exponent, a sign, a hundred digits) is
// turned down.
type bound struct {
	op    cue.Op
	limit *big.Int
}

func (b bound) accepts(n *node.Node) bool {
	c, ok := compareInt(n, b.limit)
	if !ok {
		return false
	}
	switch b.op {
	case cue.LessThanOp:
		return c < 0
	case cue.LessThanEqualOp:
		return c <= 0
	case cue.GreaterThanOp:
		return c > 0
	case cue.GreaterThanEqualOp:
		return c >= 0
	}
	return false
}

// maxPlainDigits bounds the integers the fast path reads: longer ones go to
// CUE, so that a huge literal costs no big-number arithmetic here.
const maxPlainDigits = 40

func isPlainInt(n *node.Node) bool {
	t := n.Text
	if n.Kind != node.Number || t == "" || len(t) > maxPlainDigits {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// compareInt compares the integer n, written plainly, with x (-1, 0, +1),
// and reports whether n is one. An integer of up to 18 digits is compared
// without allocating a big.Int for it.
func compareInt(n *node.Node, x *big.Int) (int, bool) {
	if !isPlainInt(n) {
		return 0, false
	}
	if t := n.Text; len(t) <= 18 && x.IsInt64() {
		var v int64
		for i := 0; i < len(t); i++ {
			v = v*10 + int64(t[i]-'0')
		}
		return cmp.Compare(v, x.Int64()), true
	}
	v, ok := new(big.Int).SetString(n.Text, 10)
	if !ok {
		return 0, false
	}
	return v.Cmp(x), true
}

// structRule is a struct: its declared fields, those it requires, and its
// [string]: T pattern, which CUE applies to declared fields too. A key that
// is neither declared nor matched by a pattern is a closedness error, which
// Check reports itself (unknownFields) and CUE would report at the same
// path; when its value is a scalar, it does not make the rule turn the
// value down.
type structRule struct {
	fields   map[string]rule
	required []string
	pattern  rule // nil: the struct is closed to other keys
}

func (s *structRule) accepts(n *node.Node) bool {
	if n.Kind != node.Object || hasDuplicateKeys(n) {
		return false
	}
	for _, req := range s.required {
		if n.Member(req) == nil {
			return false
		}
	}
	for i := range n.Members {
		m := &n.Members[i]
		f, declared := s.fields[m.Key]
		if declared && !f.accepts(m.Value) {
			return false
		}
		if s.pattern != nil && !s.pattern.accepts(m.Value) {
			return false
		}
		if !declared && s.pattern == nil && (m.Value.Kind == node.Object || m.Value.Kind == node.Array) {
			// CUE reports the keys inside an unknown field's object as
			// unknown too: leave such a value to CUE.
			return false
		}
	}
	return true
}

// hasDuplicateKeys: CUE unifies a repeated key's values, which the rules
// above do not model.
func hasDuplicateKeys(n *node.Node) bool {
	if len(n.Members) < 2 {
		return false
	}
	if len(n.Members) <= 16 {
		for i := range n.Members {
			for j := i + 1; j < len(n.Members); j++ {
				if n.Members[i].Key == n.Members[j].Key {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(n.Members))
	for i := range n.Members {
		if _, dup := seen[n.Members[i].Key]; dup {
			return true
		}
		seen[n.Members[i].Key] = struct{}{}
	}
	return false
}

// listRule is an open list [...T].
type listRule struct{ elem rule }

func (l listRule) accepts(n *node.Node) bool {
	if n.Kind != node.Array {
		return false
	}
	for _, e := range n.Elems {
		if !l.elem.accepts(e) {
			return false
		}
	}
	return true
}

// maxRuleDepth bounds the derivation: a recursive definition would
// otherwise never end. No schema of mcpc nests this deep.
const maxRuleDepth = 12

// deriveRule derives the rule of a compiled schema value, or says which
// construct it does not understand.
func deriveRule(v cue.Value, depth int) (rule, error) {
	if depth > maxRuleDepth {
		return nil, fmt.Errorf("%s: nested deeper than %d levels", v.Pos(), maxRuleDepth)
	}
	op, args := v.Expr()
	if op == cue.OrOp {
		var alts oneOf
		for _, a := range args {
			r, err := deriveRule(a, depth+1)
			if err != nil {
				return nil, err
			}
			alts = append(alts, r)
		}
		return alts, nil
	}
	// A struct or a list is read from its evaluated value (a reference or
	// a conjunction of structs is already unified there).
	switch v.IncompleteKind() {
	case cue.StructKind:
		return deriveStruct(v, depth)
	case cue.ListKind:
		return deriveList(v, depth)
	case cue.TopKind:
		if op == cue.NoOp {
			return anyValue{}, nil
		}
	}
	switch op {
	case cue.NoOp:
		if v.IsConcrete() {
			return deriveLiteral(v)
		}
		k := v.IncompleteKind()
		if k&^(cue.StringKind|cue.IntKind|cue.FloatKind|cue.BoolKind|cue.NullKind|cue.BytesKind) != 0 {
			return nil, fmt.Errorf("%s: a value of kind %v", v.Pos(), k)
		}
		return kindRule(k), nil
	case cue.AndOp:
		var all allOf
		for _, a := range args {
			r, err := deriveRule(a, depth+1)
			if err != nil {
				return nil, err
			}
			all = append(all, r)
		}
		return all, nil
	case cue.RegexMatchOp, cue.NotRegexMatchOp:
		pattern, err := args[0].String()
		if err != nil {
			return nil, fmt.Errorf("%s: a regular expression that is not a concrete string", v.Pos())
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", v.Pos(), err)
		}
		return match{re: compiledRegexp(re), want: op == cue.RegexMatchOp}, nil
	case cue.LessThanOp, cue.LessThanEqualOp, cue.GreaterThanOp, cue.GreaterThanEqualOp:
		if args[0].Kind() != cue.IntKind {
			return nil, fmt.Errorf("%s: a bound that is not a concrete integer", v.Pos())
		}
		limit, err := args[0].Int(nil)
		if err != nil {
			return nil, err
		}
		return bound{op: op, limit: limit}, nil
	case cue.NotEqualOp:
		l, err := deriveLiteral(args[0])
		if err != nil {
			return nil, err
		}
		lit := l.(litRule)
		if lit.kind != node.String && lit.kind != node.Number {
			return nil, fmt.Errorf("%s: != a value other than a string or an integer", v.Pos())
		}
		return notEqual(lit), nil
	}
	return nil, fmt.Errorf("%s: the operator %v", v.Pos(), op)
}

func deriveLiteral(v cue.Value) (rule, error) {
	switch v.Kind() {
	case cue.StringKind:
		s, err := v.String()
		return litRule{kind: node.String, text: s}, err
	case cue.IntKind:
		x, err := v.Int(nil)
		return litRule{kind: node.Number, num: x}, err
	case cue.BoolKind:
		b, err := v.Bool()
		return litRule{kind: node.Bool, b: b}, err
	case cue.NullKind:
		return litRule{kind: node.Null}, nil
	}
	return nil, fmt.Errorf("%s: a concrete value of kind %v", v.Pos(), v.Kind())
}

// probeKey is a key no one would write: a struct that allows it is open to
// every key (by a [string]: T pattern or ...).
const probeKey = "\x00mcpc-probe"

func deriveStruct(v cue.Value, depth int) (rule, error) {
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", v.Pos(), err)
	}
	s := &structRule{fields: map[string]rule{}}
	for it.Next() {
		name := it.Selector().Unquoted()
		r, err := deriveRule(it.Value(), depth+1)
		if err != nil {
			return nil, err
		}
		s.fields[name] = r
		if !it.IsOptional() {
			s.required = append(s.required, name)
		}
	}
	p := v.LookupPath(cue.MakePath(cue.AnyString))
	switch open := v.Allows(cue.Str(probeKey)); {
	case open && p.Exists():
		if s.pattern, err = deriveRule(p, depth+1); err != nil {
			return nil, err
		}
	case open:
		s.pattern = anyValue{}
	case p.Exists():
		return nil, fmt.Errorf("%s: a pattern that does not match every key", v.Pos())
	}
	return s, nil
}

func deriveList(v cue.Value, depth int) (rule, error) {
	if it, err := v.List(); err != nil || it.Next() {
		return nil, fmt.Errorf("%s: a list with fixed elements", v.Pos())
	}
	e := v.LookupPath(cue.MakePath(cue.AnyIndex))
	if !e.Exists() {
		return nil, fmt.Errorf("%s: a closed list", v.Pos())
	}
	elem, err := deriveRule(e, depth+1)
	if err != nil {
		return nil, err
	}
	return listRule{elem: elem}, nil
}

// understood checks the schema's syntax for what deriveRule cannot see in a
// compiled value: a comprehension or a field that depends on another field
// would make a rule derived without data wrong. It accepts fields (plain,
// optional, required, [string] patterns), struct and open list literals,
// basic types, definitions, literals, & and |, regular expressions and
// bounds; anything else is an error naming the construct and its place.
func understood(src string) error {
	f, err := parser.ParseFile("mcpc-schema.cue", src)
	if err != nil {
		return err
	}
	for _, d := range f.Decls {
		if err := understoodDecl(d); err != nil {
			return err
		}
	}
	return nil
}

func understoodDecl(d ast.Decl) error {
	switch x := d.(type) {
	case *ast.Package, *ast.CommentGroup, *ast.Attribute:
		return nil
	case *ast.Field:
		if err := understoodLabel(x.Label); err != nil {
			return err
		}
		return understoodExpr(x.Value)
	}
	return notUnderstood(d)
}

func understoodLabel(l ast.Label) error {
	switch x := l.(type) {
	case *ast.Ident:
		return nil
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			return nil
		}
	case *ast.ListLit: // a pattern: only [string]
		if len(x.Elts) == 1 {
			if id, ok := x.Elts[0].(*ast.Ident); ok && id.Name == "string" {
				return nil
			}
		}
	}
	return notUnderstood(l)
}

func understoodExpr(e ast.Expr) error {
	switch x := e.(type) {
	case *ast.Ident:
		switch x.Name {
		case "string", "int", "float", "number", "bool", "bytes", "null", "_", "true", "false":
			return nil
		}
		if strings.HasPrefix(x.Name, "#") {
			return nil // a definition of the schema
		}
	case *ast.BasicLit:
		return nil
	case *ast.ParenExpr:
		return understoodExpr(x.X)
	case *ast.BinaryExpr:
		if x.Op == token.AND || x.Op == token.OR {
			if err := understoodExpr(x.X); err != nil {
				return err
			}
			return understoodExpr(x.Y)
		}
	case *ast.UnaryExpr:
		switch x.Op {
		case token.MAT, token.NMAT, token.LSS, token.LEQ, token.GTR, token.GEQ, token.NEQ, token.SUB:
			return understoodExpr(x.X)
		}
	case *ast.StructLit:
		for _, d := range x.Elts {
			if el, ok := d.(*ast.Ellipsis); ok && el.Type == nil {
				continue // ...: open to other keys
			}
			if err := understoodDecl(d); err != nil {
				return err
			}
		}
		return nil
	case *ast.ListLit:
		if len(x.Elts) == 1 {
			if el, ok := x.Elts[0].(*ast.Ellipsis); ok {
				if el.Type == nil {
					return nil
				}
				return understoodExpr(el.Type)
			}
		}
	}
	return notUnderstood(e)
}

func notUnderstood(n ast.Node) error {
	return fmt.Errorf("%s: %T is not understood by the fast path", n.Pos(), n)
}

// crossCheck, when set, is called by Check for every value it checks with
// the fast path (settled by it, or checked part by part); see
// SetCrossCheck.
var crossCheck atomic.Pointer[func(def string, data *node.Node, fast, viaCUE []diag.Diagnostic)]

// SetCrossCheck makes every Check that the fast path settles, or that is
// checked part by part, run CUE on the whole value as well, and call report
// with both diagnostics (report may be called from several goroutines at
// once). It is for tests that prove the fast path and the check by parts
// change nothing: the golden cases run with it. It returns a function that
// turns it off again.
func SetCrossCheck(report func(def string, data *node.Node, fast, viaCUE []diag.Diagnostic)) (restore func()) {
	crossCheck.Store(&report)
	return func() { crossCheck.Store(nil) }
}
