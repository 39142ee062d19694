package policies

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
)

// The fast path of Evaluate. Converting the whole plan to CUE and unifying
// it with a pack cost most of a lint's time and memory, though a pack reads
// a few fields per server. So a pack's own CUE source (never a second copy
// of its rules written in Go) is read, once when the pack is loaded, as a
// program: its fields merged as CUE unifies struct literals, each rule's
// deny an expression. Evaluate runs that expression in Go over the plan, read
// with only the keys the pack names (planread.go), for the constructs the
// packs use: references, comprehensions (for, if, let), struct and list
// literals, interpolation, comparisons, =~, && || !, arithmetic on
// integers, a default (*a | b) and the builtins listed in callBuiltin.
//
// The fast path decides a rule only when every step is one whose result it
// knows to be CUE's: a missing field, a kind it does not compute with (a
// float, bytes), a repeated key, a conflict of an embedding, a violation
// without a path or message, anything else stops it, and CUE evaluates that
// rule as before, so every message of a rule that fails is CUE's. A pack with
// a construct outside this set (a definition, a pattern, an optional field,
// a disjunction other than *a | b) is evaluated by CUE alone: fastPathError
// says where, and the shipped packs must have none (TestShippedPacksHaveAFastPath).
// Tests hold both paths to the same violations on the packs' test cases,
// the fixtures, generated and fuzzed plans (SetCrossCheck).

// bail stops the fast path: CUE decides the rule.
type bail string

// mfield is a field of a struct literal of the pack after CUE's
// unification of its declarations: one value, or when every declaration is
// a struct literal, their fields merged.
type mfield struct {
	name  string
	expr  ast.Expr  // declared once: its value
	sub   *scope    // declared as struct literals: their fields
	order []string  // the fields of sub, in the order declared
	file  *ast.File // where expr is (its imports)
	scope *scope    // the struct it is a field of
}

// scope is a struct literal's fields, seen from the expressions inside it.
type scope struct {
	parent *scope
	fields map[string]*mfield
	order  []string // the fields, in the order first declared
}

// fastPack is a pack read as a program.
type fastPack struct {
	top   *scope
	input *mfield
	rules map[string]*mfield // rule id → its struct
	names map[string]string  // every name the pack's source mentions
	whole map[string]bool    // keys whose objects a for clause iterates
	// imports are each file's imports, by the name they are known by.
	imports map[*ast.File]map[string]string
	// calls are the functions the calls name, resolved when first
	// evaluated (the names in scope at a call are always the same).
	calls sync.Map // *ast.CallExpr → string
	// What the evaluation reads of the pack's syntax, computed once when
	// the pack is read (not per server), and only read after:
	shapes    map[*ast.StructLit]*structShape  // struct literals' declarations
	interps   map[*ast.Interpolation][]string  // literal parts, unquoted; nil: left to CUE
	lits      map[*ast.BasicLit]any            // a val; nil: left to CUE
	selectors map[*ast.SelectorExpr]*selection // the labels selected
}

// selection is a selector's label: ok when the fast path reads it.
type selection struct {
	name string
	ok   bool
}

// deriveFast reads a pack's files as a program; an error says which
// construct the fast path does not understand, and where.
func deriveFast(files []*ast.File) (*fastPack, error) {
	fp := &fastPack{top: &scope{fields: map[string]*mfield{}}, names: map[string]string{}, whole: map[string]bool{},
		imports: map[*ast.File]map[string]string{}, shapes: map[*ast.StructLit]*structShape{},
		interps: map[*ast.Interpolation][]string{}, lits: map[*ast.BasicLit]any{}, selectors: map[*ast.SelectorExpr]*selection{}}
	for _, f := range files {
		for _, d := range f.Decls {
			switch x := d.(type) {
			case *ast.Package, *ast.ImportDecl, *ast.CommentGroup, *ast.Attribute:
				continue
			case *ast.Field:
				if err := fp.addField(fp.top, x, f); err != nil {
					return nil, err
				}
				continue
			}
			return nil, notUnderstood(d)
		}
		fp.imports[f] = map[string]string{}
		for imp := range f.ImportSpecs() {
			path, err := literal.Unquote(imp.Path.Value)
			if err != nil || !builtinPackages[path] {
				return nil, fmt.Errorf("%s: the import %s is not understood by the fast path", imp.Pos(), imp.Path.Value)
			}
			local := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			fp.imports[f][local] = path
		}
		var err error
		ast.Walk(f, func(n ast.Node) bool {
			if err != nil {
				return false
			}
			switch x := n.(type) {
			case *ast.Ident:
				fp.name(x.Name)
			case *ast.BasicLit:
				if x.Kind == token.STRING {
					if s, e := literal.Unquote(x.Value); e == nil {
						fp.name(s)
					}
				}
				fp.lits[x] = literalOrNil(x)
			case *ast.StructLit:
				fp.shapes[x] = shapeOf(x)
			case *ast.Interpolation:
				if lits, ok := unquoteInterpolation(x); ok {
					fp.interps[x] = lits
				} else {
					fp.interps[x] = nil
				}
			case *ast.SelectorExpr:
				name, _, e := ast.LabelName(x.Sel)
				fp.selectors[x] = &selection{name, e == nil}
			case *ast.ForClause:
				if sel, ok := x.Source.(*ast.SelectorExpr); ok {
					if name, _, e := ast.LabelName(sel.Sel); e == nil {
						fp.whole[name] = true
					}
				}
			}
			if e := understood(n); e != nil {
				err = e
			}
			return true
		}, nil)
		if err != nil {
			return nil, err
		}
	}
	fp.input = fp.top.fields["input"]
	if fp.input == nil || fp.input.sub != nil {
		return nil, fmt.Errorf("the pack does not declare input: _")
	}
	if id, ok := fp.input.expr.(*ast.Ident); !ok || id.Name != "_" {
		return nil, fmt.Errorf("%s: input is not declared as _ (the plan is its value)", fp.input.expr.Pos())
	}
	rs := fp.top.fields["rules"]
	if rs == nil || rs.sub == nil {
		return nil, fmt.Errorf("rules is not a struct literal")
	}
	fp.rules = map[string]*mfield{}
	for id, r := range rs.sub.fields {
		if r.sub == nil {
			return nil, fmt.Errorf("rule %s is not a struct literal", id)
		}
		fp.rules[id] = r
	}
	return fp, nil
}

func (fp *fastPack) name(s string) {
	if _, ok := fp.names[s]; !ok {
		fp.names[s] = s
	}
}

// builtinPackages are the CUE packages whose functions the fast path
// computes (callBuiltin).
var builtinPackages = map[string]bool{"list": true, "strings": true, "regexp": true}

// addField merges a field declaration into s, as CUE unifies struct
// literals: a field declared twice must be a struct literal both times.
func (fp *fastPack) addField(s *scope, f *ast.Field, file *ast.File) error {
	if f.Constraint != token.ILLEGAL || f.Alias != nil {
		return notUnderstood(f)
	}
	name, isIdent, err := ast.LabelName(f.Label)
	if err != nil || strings.HasPrefix(name, "#") || strings.HasPrefix(name, "_") && isIdent {
		return notUnderstood(f)
	}
	m := s.fields[name]
	if m == nil {
		m = &mfield{name: name, scope: s}
		s.fields[name] = m
		s.order = append(s.order, name)
	} else if m.sub == nil {
		return fmt.Errorf("%s: %s is declared twice, not both times as a struct literal", f.Pos(), name)
	}
	lit, isStruct := f.Value.(*ast.StructLit)
	if isStruct && structOfFields(lit) {
		if m.sub == nil {
			m.sub = &scope{parent: s, fields: map[string]*mfield{}}
		}
		for _, d := range lit.Elts {
			switch x := d.(type) {
			case *ast.Field:
				if err := fp.addField(m.sub, x, file); err != nil {
					return err
				}
			case *ast.CommentGroup, *ast.Attribute:
			default:
				return notUnderstood(d)
			}
		}
		return nil
	}
	if m.sub != nil {
		return fmt.Errorf("%s: %s is declared twice, not both times as a struct literal", f.Pos(), name)
	}
	m.expr, m.file = f.Value, file
	return nil
}

// structOfFields: a struct literal of fields only (no embedding, let or
// comprehension), which merges with another as CUE unifies them.
func structOfFields(s *ast.StructLit) bool {
	for _, d := range s.Elts {
		switch d.(type) {
		case *ast.Field, *ast.CommentGroup, *ast.Attribute:
		default:
			return false
		}
	}
	return true
}

// understood accepts the syntax the evaluator below computes.
func understood(n ast.Node) error {
	switch x := n.(type) {
	case *ast.File, *ast.Package, *ast.ImportDecl, *ast.ImportSpec, *ast.CommentGroup, *ast.Comment, *ast.Attribute,
		*ast.Ident, *ast.Interpolation, *ast.ListLit, *ast.StructLit, *ast.EmbedDecl, *ast.LetClause,
		*ast.ForClause, *ast.IfClause, *ast.SelectorExpr, *ast.IndexExpr, *ast.CallExpr, *ast.ParenExpr:
		return nil
	case *ast.Field:
		if x.Constraint != token.ILLEGAL || x.Alias != nil {
			return notUnderstood(x)
		}
		return nil
	case *ast.BasicLit:
		switch x.Kind {
		case token.STRING:
			if strings.HasPrefix(x.Value, "'") || strings.HasPrefix(x.Value, "#") {
				return notUnderstood(x)
			}
			return nil
		case token.INT, token.TRUE, token.FALSE, token.NULL:
			return nil
		}
	case *ast.Comprehension:
		if x.Fallback == nil {
			return nil
		}
	case *ast.UnaryExpr:
		switch x.Op {
		case token.NOT, token.SUB, token.MUL:
			return nil
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.LAND, token.LOR, token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ,
			token.MAT, token.NMAT, token.ADD, token.SUB, token.MUL:
			return nil
		case token.OR:
			if def, ok := x.X.(*ast.UnaryExpr); ok && def.Op == token.MUL && !isDefault(x.Y) {
				return nil
			}
		}
	}
	return notUnderstood(n)
}

func isDefault(e ast.Expr) bool {
	u, ok := e.(*ast.UnaryExpr)
	return ok && u.Op == token.MUL
}

func notUnderstood(n ast.Node) error {
	return fmt.Errorf("%s: %T is not understood by the fast path", n.Pos(), n)
}

// env is what an expression sees: comprehension and let variables, then the
// fields of the struct literals around it.
type env struct {
	parent *env
	name   string
	v      val
	local  *localStruct // a struct literal being evaluated
	scope  *scope       // the pack's struct around (set on the outermost env)
	file   *ast.File
}

// eval is one evaluation of a pack over one plan.
type eval struct {
	fp      *fastPack
	input   val
	names   map[string]string // the keys the plan was read with
	done    map[*mfield]val
	busy    map[*mfield]bool
	matched map[[2]string]bool
	// freeEnvs are the env pairs of for clauses that are done (forEnvs).
	freeEnvs []*[2]env
}

// violations evaluates a rule's deny list, or bails.
func (ev *eval) violations(id string) (out chunks[Violation], ok bool) {
	r := ev.fp.rules[id]
	defer func() {
		// A bail, or a failure of the evaluator itself: CUE decides (the
		// tests that hold the fast path to CUE see the rule left to it).
		if r := recover(); r != nil {
			out, ok = chunks[Violation]{}, false
		}
		// The rule's values (its deny list, a struct per violation) are
		// not kept once they are violations; a rule that reads another's
		// computes them again.
		ev.forget(r.sub)
	}()
	deny := r.sub.fields["deny"]
	if deny == nil {
		panic(bail("no deny"))
	}
	violation := func(e val) {
		if e.k != kObj {
			panic(bail("a violation is not a struct"))
		}
		p, _ := e.o.get("path")
		m, _ := e.o.get("message")
		s, hasSugg := e.o.get("suggestion")
		out.add(newViolation(p.elems(), p.k == kList, m, s, hasSugg))
	}
	if lit, isList := deny.expr.(*ast.ListLit); isList && !ev.computed(deny) {
		// A list literal (the common deny): each element becomes a
		// violation as it is computed, so the list is never held whole.
		// This is what field does, element by element.
		if ev.busy[deny] {
			panic(bail("a cycle"))
		}
		ev.busy[deny] = true
		e := &env{scope: deny.scope, file: deny.file}
		for _, el := range lit.Elts {
			c, ok := el.(*ast.Comprehension)
			if !ok {
				violation(ev.expr(e, el))
				continue
			}
			if x, ok := c.Value.(*ast.StructLit); ok {
				if sh := ev.fp.shape(x); sh.plain() {
					// The violation's struct literal is read, not built.
					ev.comprehension(e, c.Clauses, func(inner *env) { out.add(ev.violationOf(inner, sh)) }, nil)
					continue
				}
			}
			ev.comprehension(e, c.Clauses, func(inner *env) { violation(ev.expr(inner, c.Value)) }, nil)
		}
		delete(ev.busy, deny)
		return out, true
	}
	l := ev.field(deny)
	if l.k != kList {
		panic(bail("deny is not a list"))
	}
	for _, e := range l.elems() {
		violation(e)
	}
	return out, true
}

// chunks is a list built in pieces that are never copied as it grows (a
// rule may have a violation per server), read out once (appendTo).
type chunks[T any] struct {
	parts [][]T
	n     int
}

func (c *chunks[T]) add(v T) {
	if len(c.parts) == 0 || len(c.parts[len(c.parts)-1]) == cap(c.parts[len(c.parts)-1]) {
		c.parts = append(c.parts, make([]T, 0, 16<<min(len(c.parts), 6))) // 16 to 1024
	}
	last := &c.parts[len(c.parts)-1]
	*last = append(*last, v)
	c.n++
}

func (c *chunks[T]) appendTo(dst []T) []T {
	for _, p := range c.parts {
		dst = append(dst, p...)
	}
	return dst
}

// newViolation checks a violation's path, message and suggestion as the
// packs' CUE declares them, and makes the Violation.
func newViolation(steps []val, isList bool, m, s val, hasSugg bool) Violation {
	if !isList || len(steps) == 0 || m.k != kStr || m.s == "" || hasSugg && s.k != kStr {
		panic(bail("a violation without a path or a message"))
	}
	path := make([]any, len(steps))
	for i, step := range steps {
		switch step.k {
		case kStr:
			path[i] = step.s
		case kInt:
			if int64(int(step.n)) != step.n {
				panic(bail("an index out of range"))
			}
			path[i] = int(step.n)
		default:
			panic(bail("a path step of another kind"))
		}
	}
	return Violation{Path: path, Message: m.s, Suggestion: s.s}
}

func hasComprehension(l *ast.ListLit) bool {
	for _, el := range l.Elts {
		if _, ok := el.(*ast.Comprehension); ok {
			return true
		}
	}
	return false
}

// plain: a struct literal of fields only (no embedding, no let), none of
// whose expressions names one of them, which the fast path computes.
func (sh *structShape) plain() bool {
	return sh.bad == "" && !sh.self && len(sh.embeds) == 0 && len(sh.names) == sh.fields
}

// violationOf is the violation a plain struct literal makes where e is: its
// fields evaluated in order as structOf does, the path's list literal read
// element by element; the struct and the path's list are not built.
func (ev *eval) violationOf(e *env, sh *structShape) Violation {
	var p, m, s val
	var hasPath, hasSugg bool
	var stepsBuf [4]val
	var steps []val
	for i, name := range sh.names {
		x := sh.exprs[i]
		if name == "path" {
			hasPath = true
			if l, ok := x.(*ast.ListLit); ok && !hasComprehension(l) {
				steps = stepsBuf[:0]
				for _, el := range l.Elts {
					steps = append(steps, ev.expr(e, el))
				}
				p = val{k: kList}
				continue
			}
			p = ev.expr(e, x)
			steps = p.elems()
			continue
		}
		v := ev.expr(e, x)
		switch name {
		case "message":
			m = v
		case "suggestion":
			s, hasSugg = v, true
		}
	}
	return newViolation(steps, hasPath && p.k == kList, m, s, hasSugg)
}

func (ev *eval) computed(m *mfield) bool {
	_, ok := ev.done[m]
	return ok
}

// forget drops what the evaluation computed of the fields of s.
func (ev *eval) forget(s *scope) {
	for _, m := range s.fields {
		delete(ev.done, m)
		if m.sub != nil {
			ev.forget(m.sub)
		}
	}
}

// field evaluates a field of the pack (once per evaluation).
func (ev *eval) field(m *mfield) val {
	if v, ok := ev.done[m]; ok {
		return v
	}
	if m == ev.fp.input {
		return ev.input
	}
	if ev.busy[m] {
		panic(bail("a cycle"))
	}
	ev.busy[m] = true
	var v val
	if m.sub != nil {
		o := &obj{}
		for _, name := range m.sub.order {
			o.members = append(o.members, member{name, ev.field(m.sub.fields[name])})
		}
		v = val{k: kObj, o: o}
	} else {
		v = ev.expr(&env{scope: m.scope, file: m.file}, m.expr)
	}
	delete(ev.busy, m)
	ev.done[m] = v
	return v
}

// lookup resolves an identifier.
func (ev *eval) lookup(e *env, name string) val {
	for x := e; x != nil; x = x.parent {
		if x.local != nil {
			if i := x.local.index(name); i >= 0 {
				switch x.local.state[i] {
				case 2:
					return x.local.done[i]
				case 1:
					panic(bail("a cycle"))
				}
				x.local.state[i] = 1
				v := ev.expr(x, x.local.shape.exprs[i])
				x.local.done[i], x.local.state[i] = v, 2
				return v
			}
			continue
		}
		if x.name == name && x.scope == nil {
			return x.v
		}
		if x.scope != nil {
			for s := x.scope; s != nil; s = s.parent {
				if m, ok := s.fields[name]; ok {
					return ev.field(m)
				}
			}
		}
	}
	panic(bail("unresolved " + name))
}

// fileOf is the file of the expression e is in (for its imports).
func fileOf(e *env) *ast.File {
	for x := e; x != nil; x = x.parent {
		if x.file != nil {
			return x.file
		}
	}
	return nil
}

// importOf returns the path of the package the identifier names in the
// file, when it names one and nothing nearer shadows it.
func (fp *fastPack) importOf(e *env, name string) (string, bool) {
	if declaredIn(e, name) {
		return "", false
	}
	path, ok := fp.imports[fileOf(e)][name]
	return path, ok
}

func (ev *eval) expr(e *env, x ast.Expr) val {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return ev.expr(e, x.X)
	case *ast.Ident:
		switch x.Name {
		case "_", "string", "int", "number", "bool", "bytes", "float", "null", "true", "false":
			panic(bail("a type"))
		}
		return ev.lookup(e, x.Name)
	case *ast.BasicLit:
		return ev.fp.literal(x)
	case *ast.Interpolation:
		return ev.interpolation(e, x)
	case *ast.ListLit:
		out := make([]val, 0, len(x.Elts))
		for _, el := range x.Elts {
			c, ok := el.(*ast.Comprehension)
			if !ok {
				out = append(out, ev.expr(e, el))
				continue
			}
			size := 0 // the length of what its first for clause iterates
			ev.comprehension(e, c.Clauses, func(inner *env) { out = appendSized(out, ev.expr(inner, c.Value), size) }, &size)
		}
		return listOf(out)
	case *ast.StructLit:
		return ev.structLit(e, x)
	case *ast.SelectorExpr:
		return ev.selectKey(ev.expr(e, x.X), ev.fp.label(x))
	case *ast.IndexExpr:
		v, i := ev.expr(e, x.X), ev.expr(e, x.Index)
		switch {
		case v.k == kList && i.k == kInt:
			if i.n < 0 || i.n >= int64(len(v.elems())) {
				panic(bail("an index out of range"))
			}
			return v.elems()[i.n]
		case v.k == kObj && i.k == kStr:
			return ev.selectKey(v, i.s)
		}
		panic(bail("an index"))
	case *ast.CallExpr:
		return ev.call(e, x)
	case *ast.UnaryExpr:
		v := ev.expr(e, x.X)
		switch {
		case x.Op == token.NOT && v.k == kBool:
			return val{k: kBool, b: !v.b}
		case x.Op == token.SUB && v.k == kInt && v.n != -v.n:
			return val{k: kInt, n: -v.n}
		}
		panic(bail("a unary operator"))
	case *ast.BinaryExpr:
		if x.Op == token.OR {
			// *a | b: a when a is a value, b when a is a field the
			// struct does not have (CUE drops that disjunct); any other
			// failure of a is left to CUE.
			a := x.X.(*ast.UnaryExpr).X
			for p, ok := a.(*ast.ParenExpr); ok; p, ok = a.(*ast.ParenExpr) {
				a = p.X
			}
			sel, ok := a.(*ast.SelectorExpr)
			if !ok {
				return ev.expr(e, a)
			}
			name := ev.fp.label(sel)
			base := ev.expr(e, sel.X)
			if base.k != kObj {
				panic(bail("a selector on a value that is not a struct"))
			}
			if v, ok := base.o.get(name); ok {
				return v
			}
			if base.o.maybeDropped(name, ev.names) {
				panic(bail("a field dropped when the plan was read"))
			}
			return ev.expr(e, x.Y)
		}
		return ev.binary(x.Op, ev.expr(e, x.X), ev.expr(e, x.Y))
	}
	panic(bail(fmt.Sprintf("%T", x)))
}

// appendSized is append that grows a long full slice to size (the length
// of the list a comprehension iterates, which it reaches when it keeps
// every element), or else doubles it: append grows a long slice by a
// quarter, which allocates about five times the final size of a list of a
// value per server.
func appendSized[T any](s []T, v T, size int) []T {
	if len(s) == cap(s) && len(s) >= 256 {
		n := 2 * len(s)
		if size > len(s) {
			n = size
		}
		s = append(make([]T, 0, n), s...)
	}
	return append(s, v)
}

// label is the label x selects.
func (fp *fastPack) label(x *ast.SelectorExpr) string {
	sel := fp.selectors[x]
	if sel == nil {
		name, _, err := ast.LabelName(x.Sel)
		sel = &selection{name, err == nil}
	}
	if !sel.ok {
		panic(bail("a selector"))
	}
	return sel.name
}

func (ev *eval) selectKey(v val, key string) val {
	if v.k != kObj {
		panic(bail("a selector on a value that is not a struct"))
	}
	f, ok := v.o.get(key)
	if !ok {
		panic(bail("a missing field " + key))
	}
	return f
}

// structShape is what a struct literal declares: its fields in order, its
// lets, its embeddings. Computed once per literal.
type structShape struct {
	names  []string // fields, then lets
	exprs  []ast.Expr
	fields int // names[:fields] are the fields
	embeds []ast.Expr
	bad    string // why the fast path does not build it
	// self: an expression of the literal may name one of its fields or
	// lets; when none does, they are evaluated where the literal is, with
	// no env of its own.
	self bool
}

func (fp *fastPack) shape(x *ast.StructLit) *structShape {
	if s, ok := fp.shapes[x]; ok {
		return s
	}
	return shapeOf(x)
}

func shapeOf(x *ast.StructLit) *structShape {
	s := &structShape{}
	var lets []*ast.LetClause
	for _, d := range x.Elts {
		switch d := d.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(d.Label)
			if err != nil || d.Constraint != token.ILLEGAL || strings.HasPrefix(name, "#") || strings.HasPrefix(name, "_") {
				s.bad = "a field label"
			}
			s.names, s.exprs = append(s.names, name), append(s.exprs, d.Value)
		case *ast.LetClause:
			lets = append(lets, d)
		case *ast.EmbedDecl:
			s.embeds = append(s.embeds, d.Expr)
		case *ast.CommentGroup, *ast.Attribute:
		default:
			s.bad = "a struct element"
		}
	}
	s.fields = len(s.names)
	for _, l := range lets {
		s.names, s.exprs = append(s.names, l.Ident.Name), append(s.exprs, l.Expr)
	}
	for i, n := range s.names {
		if slices.Contains(s.names[:i], n) {
			s.bad = "a name declared twice"
		}
	}
	if len(s.embeds) > 1 {
		s.bad = "more than one embedding"
	}
	// Does an identifier inside name one of the literal's fields or lets?
	// (Conservatively: any identifier of that name, anywhere inside.)
	for _, n := range append(slices.Clone(s.exprs), s.embeds...) {
		ast.Walk(n, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && slices.Contains(s.names, id.Name) {
				s.self = true
			}
			return !s.self
		}, nil)
	}
	return s
}

// structFrame is the env and the local struct of a small struct literal
// being built, allocated together.
type structFrame struct {
	env   env
	local localStruct
	done  [3]val
	state [3]uint8
}

// newObj is an obj with room for n members, the two allocated together when
// n is small (the struct literals of a pack).
func newObj(n int) *obj {
	switch n {
	case 1:
		x := &struct {
			o obj
			m [1]member
		}{}
		x.o.members = x.m[:0]
		return &x.o
	case 2:
		x := &struct {
			o obj
			m [2]member
		}{}
		x.o.members = x.m[:0]
		return &x.o
	}
	return &obj{members: make([]member, 0, n)}
}

// localStruct is a struct literal being built: its fields and lets,
// evaluated when first read.
type localStruct struct {
	shape *structShape
	done  []val
	state []uint8 // 0 not yet, 1 being evaluated, 2 done
}

func (l *localStruct) index(name string) int {
	for i, n := range l.shape.names {
		if n == name {
			return i
		}
	}
	return -1
}

// structLit builds a struct literal's value: its fields, evaluated in its
// scope, and what it embeds. An embedding alone is that value.
func (ev *eval) structLit(e *env, x *ast.StructLit) val {
	sh := ev.fp.shape(x)
	if sh.bad != "" {
		panic(bail(sh.bad))
	}
	n := len(sh.names)
	if n > 0 && !sh.self && n == sh.fields && len(sh.embeds) <= 1 {
		return ev.structOf(e, sh)
	}
	inner := e
	switch {
	case n > len(structFrame{}.done):
		inner = &env{parent: e, local: &localStruct{shape: sh, done: make([]val, n), state: make([]uint8, n)}}
	case n > 0:
		// One allocation for what the literal's evaluation needs (a small
		// literal, the common case) and drops once it is built.
		f := &structFrame{}
		f.local = localStruct{shape: sh, done: f.done[:n], state: f.state[:n]}
		f.env = env{parent: e, local: &f.local}
		inner = &f.env
	}
	if len(sh.embeds) == 1 && sh.fields == 0 {
		return ev.expr(inner, sh.embeds[0])
	}
	o := newObj(sh.fields)
	if len(sh.embeds) == 1 {
		b := ev.expr(inner, sh.embeds[0])
		if b.k != kObj {
			panic(bail("an embedding that is not a struct"))
		}
		for _, name := range sh.names[:sh.fields] {
			if _, there := b.o.get(name); there || b.o.maybeDropped(name, ev.names) {
				panic(bail("an embedding with a field of the struct"))
			}
		}
		o.base = b.o
	}
	for _, name := range sh.names[:sh.fields] {
		o.members = append(o.members, member{name, ev.lookup(inner, name)})
	}
	return val{k: kObj, o: o}
}

// structOf is structLit for a literal of fields (and an embedding) none of
// whose expressions names one of them: each is evaluated where the literal
// is, in the order structLit evaluates them.
func (ev *eval) structOf(e *env, sh *structShape) val {
	o := newObj(sh.fields)
	if len(sh.embeds) == 1 {
		b := ev.expr(e, sh.embeds[0])
		if b.k != kObj {
			panic(bail("an embedding that is not a struct"))
		}
		for _, name := range sh.names {
			if _, there := b.o.get(name); there || b.o.maybeDropped(name, ev.names) {
				panic(bail("an embedding with a field of the struct"))
			}
		}
		o.base = b.o
	}
	for i, name := range sh.names {
		o.members = append(o.members, member{name, ev.expr(e, sh.exprs[i])})
	}
	return val{k: kObj, o: o}
}

// comprehension runs the clauses, calling yield in the env of each result.
// size, when set, is given the number of elements the first clause
// iterates when it is a for (a capacity for the result).
func (ev *eval) comprehension(e *env, clauses []ast.Clause, yield func(*env), size *int) {
	if len(clauses) == 0 {
		yield(e)
		return
	}
	switch c := clauses[0].(type) {
	case *ast.IfClause:
		v := ev.expr(e, c.Condition)
		if v.k != kBool {
			panic(bail("a condition that is not a bool"))
		}
		if v.b {
			ev.comprehension(e, clauses[1:], yield, nil)
		}
	case *ast.LetClause:
		ev.comprehension(&env{parent: e, name: c.Ident.Name, v: ev.expr(e, c.Expr)}, clauses[1:], yield, nil)
	case *ast.ForClause:
		src := ev.expr(e, c.Source)
		switch src.k {
		case kList:
			if size != nil {
				*size = len(src.elems())
			}
			pair := ev.forEnvs(e, c)
			key, value := &pair[0], &pair[1]
			for i, v := range src.elems() {
				key.v, value.v = val{k: kInt, n: int64(i)}, v
				ev.comprehension(value, clauses[1:], yield, nil)
			}
			ev.release(pair)
		case kObj:
			if src.o.base != nil || src.o.partial {
				panic(bail("a for over a struct read in part"))
			}
			members := src.o.members
			if src.o.sv != nil {
				members = src.o.viewMembers()
			}
			if size != nil {
				*size = len(members)
			}
			pair := ev.forEnvs(e, c)
			key, value := &pair[0], &pair[1]
			for _, m := range members {
				key.v, value.v = val{k: kStr, s: m.key}, m.v
				ev.comprehension(value, clauses[1:], yield, nil)
			}
			ev.release(pair)
		default:
			panic(bail("a for over a value that is neither a list nor a struct"))
		}
	default:
		panic(bail("a clause"))
	}
}

// forEnvs are the variables of a for clause, key and value, set anew for
// each element: nothing keeps an env once its expression is evaluated
// (values never refer to one), so the pair is used again once the clause is
// done (release).
func (ev *eval) forEnvs(e *env, c *ast.ForClause) *[2]env {
	var pair *[2]env
	if n := len(ev.freeEnvs); n > 0 {
		pair, ev.freeEnvs = ev.freeEnvs[n-1], ev.freeEnvs[:n-1]
	} else {
		pair = new([2]env)
	}
	pair[0] = env{parent: e, name: "\x00"} // a name no identifier has
	if c.Key != nil {
		pair[0].name = c.Key.Name
	}
	pair[1] = env{parent: &pair[0], name: c.Value.Name}
	return pair
}

// release makes a pair of forEnvs free for another for clause.
func (ev *eval) release(pair *[2]env) {
	*pair = [2]env{}
	ev.freeEnvs = append(ev.freeEnvs, pair)
}

// literal is basicLit, remembered (a literal is read once per pack, not
// once per server).
func (fp *fastPack) literal(x *ast.BasicLit) val {
	v, ok := fp.lits[x]
	if !ok {
		v = literalOrNil(x)
	}
	if v == nil {
		panic(bail("a literal"))
	}
	return v.(val)
}

// literalOrNil is basicLit, nil where basicLit bails.
func literalOrNil(x *ast.BasicLit) (v any) {
	defer func() {
		if recover() != nil {
			v = nil
		}
	}()
	return basicLit(x)
}

func basicLit(x *ast.BasicLit) val {
	switch x.Kind {
	case token.STRING:
		s, err := literal.Unquote(x.Value)
		if err != nil || strings.HasPrefix(x.Value, "'") || strings.HasPrefix(x.Value, "#") {
			panic(bail("a string literal"))
		}
		return val{k: kStr, s: s}
	case token.INT:
		n, err := strconv.ParseInt(x.Value, 10, 64)
		if err != nil {
			panic(bail("an integer literal"))
		}
		return val{k: kInt, n: n}
	case token.TRUE:
		return val{k: kBool, b: true}
	case token.FALSE:
		return val{k: kBool}
	case token.NULL:
		return val{k: kNull}
	}
	panic(bail("a literal"))
}

func (ev *eval) interpolation(e *env, x *ast.Interpolation) val {
	if len(x.Elts) == 1 {
		return ev.expr(e, x.Elts[0])
	}
	lits := ev.fp.interpolationLits(x)
	// The interpolated values first, then the string in one allocation.
	var buf [8]string
	parts := buf[:0]
	size := 0
	for i, l := range lits {
		parts = append(parts, l)
		size += len(l)
		if i+1 < len(lits) {
			var p string
			switch v := ev.expr(e, x.Elts[2*i+1]); v.k {
			case kStr:
				p = v.s
			case kInt:
				p = strconv.FormatInt(v.n, 10)
			case kBool:
				p = strconv.FormatBool(v.b)
			default:
				panic(bail("an interpolated value of another kind"))
			}
			parts = append(parts, p)
			size += len(p)
		}
	}
	var b strings.Builder
	b.Grow(size)
	for _, p := range parts {
		b.WriteString(p)
	}
	return val{k: kStr, s: b.String()}
}

// interpolationLits are the literal parts of an interpolation, unquoted
// (once per pack: they are the same at every evaluation).
func (fp *fastPack) interpolationLits(x *ast.Interpolation) []string {
	lits, known := fp.interps[x]
	if !known {
		var ok bool
		if lits, ok = unquoteInterpolation(x); !ok {
			lits = nil
		}
	}
	if lits == nil {
		panic(bail("an interpolation"))
	}
	return lits
}

func unquoteInterpolation(x *ast.Interpolation) ([]string, bool) {
	if len(x.Elts)%2 == 0 { // literals around each value: the parser's
		return nil, false
	}
	first, last := x.Quotes()
	info, prefixLen, _, err := literal.ParseQuotes(first.Value, last.Value)
	if err != nil || !info.IsDouble() {
		return nil, false
	}
	var lits []string
	for i := 0; i < len(x.Elts); i += 2 {
		l, ok := x.Elts[i].(*ast.BasicLit)
		if !ok {
			return nil, false
		}
		s, err := info.Unquote(l.Value[prefixLen:])
		if err != nil {
			return nil, false
		}
		lits = append(lits, s)
		prefixLen = 1
	}
	return lits, true
}

func (ev *eval) binary(op token.Token, a, b val) val {
	switch op {
	case token.LAND, token.LOR:
		if a.k != kBool || b.k != kBool {
			break
		}
		if op == token.LAND {
			return val{k: kBool, b: a.b && b.b}
		}
		return val{k: kBool, b: a.b || b.b}
	case token.EQL, token.NEQ:
		eq, ok := equal(a, b)
		if !ok {
			break
		}
		return val{k: kBool, b: eq == (op == token.EQL)}
	case token.LSS, token.LEQ, token.GTR, token.GEQ:
		if a.k != kInt || b.k != kInt {
			break
		}
		r := map[token.Token]bool{token.LSS: a.n < b.n, token.LEQ: a.n <= b.n, token.GTR: a.n > b.n, token.GEQ: a.n >= b.n}[op]
		return val{k: kBool, b: r}
	case token.MAT, token.NMAT:
		if a.k != kStr || b.k != kStr {
			break
		}
		return val{k: kBool, b: ev.matches(b.s, a.s) == (op == token.MAT)}
	case token.ADD:
		if a.k == kStr && b.k == kStr {
			return val{k: kStr, s: a.s + b.s}
		}
		if a.k == kInt && b.k == kInt {
			if s := a.n + b.n; (s > a.n) == (b.n > 0) {
				return val{k: kInt, n: s}
			}
		}
	case token.SUB:
		if a.k == kInt && b.k == kInt {
			if s := a.n - b.n; (s < a.n) == (b.n > 0) {
				return val{k: kInt, n: s}
			}
		}
	case token.MUL:
		if a.k == kInt && b.k == kInt && a.n > -1<<31 && a.n < 1<<31 && b.n > -1<<31 && b.n < 1<<31 {
			return val{k: kInt, n: a.n * b.n}
		}
	}
	panic(bail("an operator on values it does not compute"))
}

// equal compares two scalars as CUE's == does: values of one kind, or null
// against any value.
func equal(a, b val) (eq, ok bool) {
	if a.k == kNull || b.k == kNull {
		if a.k == kFloat || b.k == kFloat || a.k == kList || b.k == kList || a.k == kObj || b.k == kObj {
			return false, false
		}
		return a.k == b.k, true
	}
	if a.k != b.k {
		return false, false
	}
	switch a.k {
	case kStr:
		return a.s == b.s, true
	case kInt:
		return a.n == b.n, true
	case kBool:
		return a.b == b.b, true
	}
	return false, false
}

// matches is pattern =~ s, remembered for the evaluation: the servers of a
// plan have few distinct commands. Only the first pairs are remembered: the
// strings matched against one pattern may be as many as the servers (a
// package argument each), and a map of them all costs more than matching.
func (ev *eval) matches(pattern, s string) bool {
	k := [2]string{pattern, s}
	if m, ok := ev.matched[k]; ok {
		return m
	}
	m := compiled(pattern).MatchString(s)
	if len(ev.matched) < maxMatched {
		ev.matched[k] = m
	}
	return m
}

const maxMatched = 256

// regexps are the compiled patterns of =~ and regexp.ReplaceAll; a pattern
// that does not compile leaves the rule to CUE.
var regexps sync.Map

func compiled(pattern string) *regexp.Regexp {
	if re, ok := regexps.Load(pattern); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		panic(bail("a pattern that does not compile"))
	}
	regexps.Store(pattern, re)
	return re
}

// call computes len and the functions of the packages list, strings and
// regexp that the fast path knows, each as CUE's builtin does.
func (ev *eval) call(e *env, x *ast.CallExpr) val {
	fn, known := ev.fp.calls.Load(x)
	if !known {
		fn = ev.fp.function(e, x.Fun)
		ev.fp.calls.Store(x, fn)
	}
	var buf [4]val
	args := buf[:0]
	for _, a := range x.Args {
		args = append(args, ev.expr(e, a))
	}
	if v, ok := callBuiltin(fn.(string), args); ok {
		return v
	}
	panic(bail("a call of " + fn.(string)))
}

// function names the builtin a call's function is ("strings.HasPrefix",
// "len"), or "" when it is something else.
func (fp *fastPack) function(e *env, fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		if f.Name == "len" && !declaredIn(e, "len") {
			if _, imported := fp.imports[fileOf(e)]["len"]; !imported {
				return "len"
			}
		}
	case *ast.SelectorExpr:
		pkg, ok := f.X.(*ast.Ident)
		name, _, err := ast.LabelName(f.Sel)
		if !ok || err != nil {
			break
		}
		if path, ok := fp.importOf(e, pkg.Name); ok {
			return path + "." + name
		}
	}
	return ""
}

// declaredIn reports whether name is a variable or a field where e is.
func declaredIn(e *env, name string) bool {
	for x := e; x != nil; x = x.parent {
		if x.local != nil {
			if x.local.index(name) >= 0 {
				return true
			}
		} else if x.scope == nil && x.name == name {
			return true
		}
		for s := x.scope; s != nil; s = s.parent {
			if _, ok := s.fields[name]; ok {
				return true
			}
		}
	}
	return false
}

func callBuiltin(fn string, a []val) (val, bool) {
	str := func(i int) bool { return a[i].k == kStr }
	boolean := func(b bool) (val, bool) { return val{k: kBool, b: b}, true }
	text := func(s string) (val, bool) { return val{k: kStr, s: s}, true }
	switch {
	case fn == "len" && len(a) == 1 && a[0].k == kList:
		return val{k: kInt, n: int64(len(a[0].elems()))}, true
	case fn == "list.Contains" && len(a) == 2 && a[0].k == kList:
		for _, x := range a[0].elems() {
			eq, ok := equal(x, a[1])
			if !ok {
				return val{}, false
			}
			if eq {
				return boolean(true)
			}
		}
		return boolean(false)
	case (fn == "list.Take" || fn == "list.Drop") && len(a) == 2 && a[0].k == kList && a[1].k == kInt && a[1].n >= 0:
		n := min(a[1].n, int64(len(a[0].elems())))
		if fn == "list.Take" {
			return listOf(a[0].elems()[:n]), true
		}
		return listOf(a[0].elems()[n:]), true
	case fn == "list.Concat" && len(a) == 1 && a[0].k == kList:
		var out []val
		for _, x := range a[0].elems() {
			if x.k != kList {
				return val{}, false
			}
			out = append(out, x.elems()...)
		}
		if out == nil {
			out = []val{}
		}
		return listOf(out), true
	case len(a) == 2 && str(0) && str(1):
		switch fn {
		case "strings.HasPrefix":
			return boolean(strings.HasPrefix(a[0].s, a[1].s))
		case "strings.HasSuffix":
			return boolean(strings.HasSuffix(a[0].s, a[1].s))
		case "strings.Contains":
			return boolean(strings.Contains(a[0].s, a[1].s))
		case "strings.TrimPrefix":
			return text(strings.TrimPrefix(a[0].s, a[1].s))
		case "strings.TrimSuffix":
			return text(strings.TrimSuffix(a[0].s, a[1].s))
		}
	case len(a) == 1 && str(0):
		switch fn {
		case "strings.ToLower":
			return text(strings.ToLower(a[0].s))
		case "strings.ToUpper":
			return text(strings.ToUpper(a[0].s))
		}
	case fn == "regexp.ReplaceAll" && len(a) == 3 && str(0) && str(1) && str(2):
		return text(compiled(a[0].s).ReplaceAllString(a[1].s, a[2].s))
	}
	return val{}, false
}
