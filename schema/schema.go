// Package schema holds mcpc's CUE schemas (embedded) and turns a value tree
// that fails them into diagnostics positioned in the user's file, one per
// problem, in words an operator understands.
//
// A Validator compiles the schemas once, when it first needs CUE (a value
// the built-in fast path accepts needs none). CUE values are not safe to
// share between goroutines, so each goroutine that validates needs its own
// Validator.
package schema

import (
	"embed"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
	"github.com/agnivade/levenshtein"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

//go:embed *.cue
var files embed.FS

// Definitions that Check accepts.
const (
	Server     = "#Server"
	Settings   = "#Settings"
	Mcp        = "#Mcp"
	Playwright = "#Playwright"
	PlanFile   = "#Plan"
	LockFile   = "#Lock"
	Deployment = "#Deployment"
	// CraftbotConfig is mcp_config.json; CraftbotServer one of its entries.
	CraftbotConfig = "#CraftbotConfig"
	CraftbotServer = "#CraftbotServer"
	CraftbotPlan   = "#CraftbotPlan"
)

// Sources returns the embedded CUE schema files by name, for `mcpc schema`.
func Sources() map[string]string {
	out := map[string]string{}
	entries, _ := files.ReadDir(".")
	for _, e := range entries {
		b, _ := files.ReadFile(e.Name())
		out[e.Name()] = string(b)
	}
	return out
}

// Validator checks value trees against the schemas.
//
// What Check needs for a valid value (the fast path's rules, and the shapes
// that walk a value for unknown and missing fields) is derived from the
// compiled schemas when mcpc is built (builtin_gen.go); CUE compiles the
// schemas only when a Validator first needs it: for a value the fast path
// turns down, for an export, for a definition's CUE value. Compiling them
// and deriving the rules in every process was most of the time a small
// deployment took to validate.
type Validator struct {
	// src and defNames are what CUE compiles on first need (cueSchema).
	src      map[string]string
	defNames []string
	c        *compiledSchema
	shapes   map[string]*shape
	// nshapes is how many shapes there are (each has an id below it).
	nshapes int
	// fast holds the fast path's rule per definition (fast.go); a
	// definition without one is always checked by CUE. fastErr says why a
	// rule could not be derived.
	fast    map[string]rule
	fastErr error
	// top is the shape of _, what lies below an unknown field.
	top *shape
}

// compiledSchema is the schemas compiled by CUE, for one Validator.
type compiledSchema struct {
	ctx  *cue.Context
	root cue.Value
	defs map[string]cue.Value
	// values holds the schema value of each shape, by its id.
	values []cue.Value
}

// definitions are those New compiles and Check accepts.
var definitions = []string{Server, Settings, Mcp, Playwright, PlanFile, LockFile, Deployment, "#Remote", "#RemoteServer",
	CraftbotConfig, CraftbotServer, CraftbotPlan}

// New returns a Validator of the embedded schemas. When the schemas are
// those the built-in rules were derived from (always, but for a build
// whose schemas changed without `go generate ./schema`), it compiles
// nothing; otherwise it compiles them and derives the rules now.
func New() (*Validator, error) {
	if b := builtin(); b != nil {
		return &Validator{src: Sources(), defNames: definitions, shapes: b.shapes, nshapes: b.nshapes, fast: b.rules, fastErr: b.fastErr, top: b.top}, nil
	}
	return newValidator(Sources(), definitions)
}

// schemaText is the one CUE package of the schema files src (name →
// text) that CUE compiles.
func schemaText(src map[string]string) string {
	names := make([]string, 0, len(src))
	for name := range src {
		names = append(names, name)
	}
	sort.Strings(names)
	var all strings.Builder
	for _, name := range names {
		// One package across files: drop repeated package clauses.
		text := src[name]
		text = strings.Replace(text, "package schema\n", "", 1)
		all.WriteString(text)
		all.WriteString("\n")
	}
	return "package schema\n" + all.String()
}

// compileSchema compiles the schema files src and looks up defs in them.
func compileSchema(src map[string]string, defs []string) (*compiledSchema, error) {
	ctx := cuecontext.New()
	root := ctx.CompileString(schemaText(src), cue.Filename("mcpc-schema.cue"))
	if err := root.Err(); err != nil {
		return nil, fmt.Errorf("compiling the embedded schemas: %w", err)
	}
	c := &compiledSchema{ctx: ctx, root: root, defs: map[string]cue.Value{}}
	for _, d := range defs {
		def := root.LookupPath(cue.ParsePath(d))
		if err := def.Err(); err != nil {
			return nil, fmt.Errorf("schema definition %s: %w", d, err)
		}
		c.defs[d] = def
	}
	return c, nil
}

// newValidator compiles the schema files src (name → text), looks up defs
// in them and derives their shapes and fast-path rules: what the generator
// of builtin_gen.go runs, and New when the schemas are not those.
func newValidator(src map[string]string, defs []string) (*Validator, error) {
	c, err := compileSchema(src, defs)
	if err != nil {
		return nil, err
	}
	v := &Validator{src: src, defNames: defs, c: c, shapes: map[string]*shape{}, fast: map[string]rule{}}
	v.top = &shape{kind: cue.TopKind, exists: true}
	v.top.any, v.top.elem = v.top, v.top
	c.values = append(c.values, c.ctx.CompileString("_"))
	v.fastErr = understood(schemaText(src))
	for _, d := range defs {
		def := c.defs[d]
		v.shapes[d] = staticShape(newCueShape(def, 0), &c.values)
		if v.fastErr != nil {
			continue // CUE checks everything: see FastPathError
		}
		r, err := deriveRule(def, 0)
		if err != nil {
			v.fastErr = fmt.Errorf("%s: %w", d, err)
			continue
		}
		v.fast[d] = r
	}
	v.nshapes = len(c.values)
	if v.fastErr != nil {
		v.fast = map[string]rule{}
	}
	return v, nil
}

// cueSchema returns the schemas compiled by CUE, compiling them on first
// use, with the schema value of every shape.
func (v *Validator) cueSchema() *compiledSchema {
	if v.c != nil {
		return v.c
	}
	c, err := compileSchema(v.src, v.defNames)
	if err != nil {
		// The built-in rules were derived from these very sources
		// (builtinSum), which compiled then.
		panic("schema: " + err.Error())
	}
	c.values = make([]cue.Value, v.nshapes)
	c.values[v.top.id] = c.ctx.CompileString("_")
	for _, d := range v.defNames {
		bindShape(v.shapes[d], newCueShape(c.defs[d], 0), c.values)
	}
	v.c = c
	return c
}

// value is the schema value of the shape sh.
func (v *Validator) value(sh *shape) cue.Value { return v.cueSchema().values[sh.id] }

// FastPathError says why the fast path of Check is off (nil when it is on):
// the schema uses a construct it does not understand. Check is then as
// correct as before, only slower; a test requires nil.
func (v *Validator) FastPathError() error { return v.fastErr }

// Definition returns a compiled definition, for exporting and for asking
// which fields an entry has.
func (v *Validator) Definition(name string) (cue.Value, bool) {
	d, ok := v.cueSchema().defs[name]
	return d, ok
}

// Fields returns the field names a definition declares, in schema order.
func (v *Validator) Fields(def string) []string {
	if sh, ok := v.shapes[def]; ok {
		return append([]string(nil), sh.order...)
	}
	return nil
}

// Kind returns the kinds the schema allows for a field of def
// (cue.BottomKind when the field does not exist).
func (v *Validator) Kind(def string, path ...string) cue.Kind {
	f, ok := v.lookup(def, path)
	if !ok {
		return cue.BottomKind
	}
	return f.kind
}

// Naming tells Check how to show a path to the operator: host keys are
// PascalCase, settings.json keys camelCase.
type Naming func(path []string) string

// DefaultNaming writes a path as servers[0].tools[1].name.
func DefaultNaming(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if isIndex(p) && i > 0 {
			b.WriteString("[" + p + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// Check validates data against the definition def and returns one
// diagnostic per problem, positioned in data's file. subject introduces the
// messages, e.g. `server "github"`.
//
// The fast path (fast.go) settles a value it accepts without CUE; the rest
// is checked part by part (parts.go), CUE checking each part the fast
// path cannot explain, so every message is what CUE's check of the whole
// value gives.
func (v *Validator) Check(def string, data *node.Node, subject string, name Naming) []diag.Diagnostic {
	if _, ok := v.shapes[def]; !ok {
		panic("schema: unknown definition " + def)
	}
	if name == nil {
		name = DefaultNaming
	}
	seen, out := v.walk(def, data, subject, name)
	r := v.fast[def]
	if r == nil {
		return v.checkCUE(def, data, subject, name, seen, out)
	}
	if !r.accepts(data) {
		out = v.checkParts(def, r, data, subject, name, seen, out)
	}
	if report := crossCheck.Load(); report != nil {
		(*report)(def, data, out, v.checkWithoutFastPath(def, data, subject, name))
	}
	return out
}

// walk reports the unknown fields and the missing required fields of data,
// which CUE reports only when nothing else is wrong, and returns their
// paths.
func (v *Validator) walk(def string, data *node.Node, subject string, name Naming) (seen reported, out []diag.Diagnostic) {
	seen = reported{}
	report := func(path []string, at located) {
		seen[strings.Join(path, "\x00")] = at.value == nil
		out = append(out, v.explainAt(def, data, at, path, subject, name, nil))
	}
	v.unknownFields(v.shapes[def], data, nil, report)
	return seen, out
}

// reported holds the paths (keys joined by "\x00") that have a diagnostic;
// a missing field's path is true.
type reported map[string]bool

// covers reports whether path has a diagnostic, or lies below a missing
// field: CUE reports the required fields of a missing struct too, but only
// when nothing else in the value is wrong; mcpc reports the missing field
// alone, whatever else is wrong.
func (r reported) covers(path []string) bool {
	if _, ok := r[strings.Join(path, "\x00")]; ok {
		return true
	}
	var prefix strings.Builder
	for i, p := range path[:max(len(path)-1, 0)] {
		if i > 0 {
			prefix.WriteByte(0)
		}
		prefix.WriteString(p)
		if r[prefix.String()] {
			return true
		}
	}
	return false
}

// checkWithoutFastPath is Check as it is without the fast path.
func (v *Validator) checkWithoutFastPath(def string, data *node.Node, subject string, name Naming) []diag.Diagnostic {
	seen, out := v.walk(def, data, subject, name)
	return v.checkCUE(def, data, subject, name, seen, out)
}

// checkCUE validates data with CUE and adds to out a diagnostic for each
// error at a path seen does not cover.
func (v *Validator) checkCUE(def string, data *node.Node, subject string, name Naming, seen reported, out []diag.Diagnostic) []diag.Diagnostic {
	// "#Def & data" built in the schema's scope costs less than unifying
	// two separately built values.
	countCUE(data)
	c := v.cueSchema()
	val := c.ctx.BuildExpr(ast.NewBinExpr(token.AND, ast.NewIdent(def), toExpr(data)), cue.Scope(c.root), cue.InferBuiltins(false))
	err := val.Validate(cue.Concrete(true))
	if err == nil {
		return out
	}
	for _, e := range cueerrors.Errors(err) {
		path := dataPath(e.Path())
		if len(path) > 0 && path[0] == def {
			path = path[1:]
		}
		if seen.covers(path) {
			continue
		}
		seen[strings.Join(path, "\x00")] = false
		out = append(out, v.explain(def, data, path, subject, name, e))
	}
	return out
}

// readerOf names who reads a file of the definition def, and so ignores a
// field it does not know.
func readerOf(def string) string {
	if def == Deployment {
		return "mcpc"
	}
	return "the host"
}

// dataPath turns the path of a CUE error into the keys of the data: CUE
// quotes a label that is not an identifier ("s-1", "A-B", "0"), the data
// holds it as written. A key that starts with a quote is quoted too, so a
// quoted element is always CUE's doing.
func dataPath(path []string) []string {
	out := make([]string, len(path))
	for i, p := range path {
		if strings.HasPrefix(p, `"`) {
			if u, err := literal.Unquote(p); err == nil {
				p = u
			}
		}
		out[i] = p
	}
	return out
}

// located is the value at a path of the data, the member that holds it (nil
// for an array element or the root) and its parent (for a missing field,
// the object it is missing from). Check's parts pass what they hold; a
// look-up from the root costs the width of every object on the way, which
// made one diagnostic per key of a wide object quadratic.
type located struct {
	member        *node.Member
	value, parent *node.Node
}

// locate looks path up from base, the value at its start (held by member,
// inside parent).
func locate(base *node.Node, member *node.Member, parent *node.Node, path []string) located {
	at := located{member: member, value: base, parent: parent}
	for _, key := range path {
		at.parent, at.member, at.value = at.value, nil, nil
		switch p := at.parent; {
		case p == nil:
		case p.Kind == node.Object:
			checkWork.scanned.Add(int64(len(p.Members)))
			if at.member = p.Member(key); at.member != nil {
				at.value = at.member.Value
			}
		case p.Kind == node.Array:
			if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(p.Elems) {
				at.value = p.Elems[i]
			}
		}
	}
	return at
}

func (v *Validator) explain(def string, data *node.Node, path []string, subject string, name Naming, e cueerrors.Error) diag.Diagnostic {
	return v.explainAt(def, data, locate(data, nil, nil, path), path, subject, name, e)
}

// explainAt is explain with the value at path (at) found already.
func (v *Validator) explainAt(def string, data *node.Node, at located, path []string, subject string, name Naming, e cueerrors.Error) diag.Diagnostic {
	member, value := at.member, at.value
	pos := data.Pos()
	if value != nil {
		pos = value.Pos()
	}
	prefix := subject
	if prefix != "" {
		prefix += ": "
	}
	field, known := v.lookup(def, path)
	if !known && len(path) > 0 {
		// A field the schema does not declare.
		if member != nil {
			pos = member.KeyPos()
		}
		parentPath := path[:len(path)-1]
		last := path[len(path)-1]
		sugg := ""
		if best := closest(last, v.fieldsAt(def, parentPath)); best != "" {
			sugg = fmt.Sprintf("did you mean %q?", lastName(name, append(append([]string(nil), parentPath...), best)))
		}
		return rules.UnknownField.At(pos,
			fmt.Sprintf("%sunknown field %q is ignored by %s", prefix, last, readerOf(def)), sugg)
	}
	shown := name(path)
	want := field.kind
	if value == nil && len(path) > 0 {
		if _, ok := v.lookup(def, path[:len(path)-1]); ok {
			if pv := at.parent; pv != nil {
				pos = pv.Pos()
			}
		}
		return rules.TypeMismatch.At(pos, fmt.Sprintf("%s%s is missing (%s)", prefix, shown, describeKind(want)), "")
	}
	if value != nil && !kindAllows(want, value) {
		return rules.TypeMismatch.At(pos,
			fmt.Sprintf("%s%s must be %s, not %s", prefix, shown, describeKind(want), node.Describe(value)), "")
	}
	rule, wantText := field.checkRule, field.checkWant
	if rule == "" {
		// A constraint without its own rule: report the schema's words.
		return rules.TypeMismatch.At(pos,
			fmt.Sprintf("%s%s: %s", prefix, shown, cleanCUEMessage(e)), "")
	}
	got := ""
	if value != nil {
		switch value.Kind {
		case node.String:
			got = fmt.Sprintf(", not %q", value.Text)
		case node.Number:
			got = ", not " + value.Text
		}
	}
	d := rules.Of(rule).At(pos, fmt.Sprintf("%s%s must be %s%s", prefix, shown, wantText, got), "")
	if value != nil && value.Kind == node.String {
		if alts := enumAlternatives(wantText); len(alts) > 0 {
			if best := closest(value.Text, alts); best != "" {
				d.Suggestion = fmt.Sprintf("did you mean %q?", best)
			}
		}
	}
	return d
}

func lastName(name Naming, path []string) string {
	full := name(path)
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[i+1:]
	}
	return full
}

// shape mirrors the structure of a schema definition (its declared fields,
// its pattern constraint, its list element) and what Check reads of its
// schema values, so that walking data against it costs map look-ups, not
// CUE evaluations. The shapes of the embedded schemas are built in
// (builtin_gen.go); a shape's CUE value is looked up by its id
// (Validator.value) when CUE has to check a value there.
type shape struct {
	// id indexes the shape's schema value (compiledSchema.values).
	id     int
	fields map[string]*shape
	order  []string
	// required are the fields a value must have (declared without "?").
	required []string
	any      *shape // [string]: T
	elem     *shape // [...T]
	// kind is the schema value's IncompleteKind, exists its Exists.
	kind   cue.Kind
	exists bool
	// checkRule and checkWant are its @check(rule=..., want=...).
	checkRule, checkWant string
}

// noShape stands for a path the schema does not have.
var noShape = &shape{kind: cue.BottomKind}

// cueShape is a shape with the schema values themselves, which the shapes
// are derived from (staticShape) and bound to (bindShape).
type cueShape struct {
	v      cue.Value
	fields map[string]*cueShape
	order  []string
	// required are the fields a value must have (declared without "?").
	required []string
	any      *cueShape // [string]: T
	elem     *cueShape // [...T]
}

func newCueShape(v cue.Value, depth int) *cueShape {
	sh := &cueShape{v: v}
	if depth > 8 {
		return sh
	}
	k := v.IncompleteKind()
	if k&cue.StructKind != 0 {
		if it, err := v.Fields(cue.Optional(true)); err == nil {
			sh.fields = map[string]*cueShape{}
			for it.Next() {
				name := it.Selector().Unquoted()
				sh.fields[name] = newCueShape(it.Value(), depth+1)
				sh.order = append(sh.order, name)
				if !it.IsOptional() {
					sh.required = append(sh.required, name)
				}
			}
		}
		// A key no one would write: allowed only by a pattern or an open struct.
		if v.Allows(cue.Str("\x00mcpc-probe")) {
			if p := v.LookupPath(cue.MakePath(cue.AnyString)); p.Exists() {
				sh.any = newCueShape(p, depth+1)
			} else {
				sh.any = &cueShape{v: p}
			}
		}
	}
	if k&cue.ListKind != 0 {
		if e := v.LookupPath(cue.MakePath(cue.AnyIndex)); e.Exists() {
			sh.elem = newCueShape(e, depth+1)
		}
	}
	return sh
}

// staticShape derives the shape of cs, appending the schema value of each
// of its shapes to values (its id is its index there).
func staticShape(cs *cueShape, values *[]cue.Value) *shape {
	attr := cs.v.Attribute("check")
	rule, _, _ := attr.Lookup(0, "rule")
	want, _, _ := attr.Lookup(0, "want")
	sh := &shape{id: len(*values), order: cs.order, required: cs.required,
		kind: cs.v.IncompleteKind(), exists: cs.v.Exists(), checkRule: rule, checkWant: want}
	*values = append(*values, cs.v)
	if cs.fields != nil {
		sh.fields = make(map[string]*shape, len(cs.fields))
		for _, name := range cs.order {
			sh.fields[name] = staticShape(cs.fields[name], values)
		}
	}
	if cs.any != nil {
		sh.any = staticShape(cs.any, values)
	}
	if cs.elem != nil {
		sh.elem = staticShape(cs.elem, values)
	}
	return sh
}

// bindShape records in values the schema value of sh and of the shapes
// below it, from cs (the same schema, compiled now).
func bindShape(sh *shape, cs *cueShape, values []cue.Value) {
	values[sh.id] = cs.v
	for name, f := range sh.fields {
		bindShape(f, cs.fields[name], values)
	}
	if sh.any != nil {
		bindShape(sh.any, cs.any, values)
	}
	if sh.elem != nil {
		bindShape(sh.elem, cs.elem, values)
	}
}

func (sh *shape) child(key string) (*shape, bool) {
	if f, ok := sh.fields[key]; ok {
		return f, true
	}
	if sh.elem != nil && isIndex(key) {
		return sh.elem, true
	}
	if sh.any != nil {
		return sh.any, true
	}
	return nil, false
}

// lookup finds the shape of the schema field at path, following pattern
// constraints ([string]: T) and list element types, and reports whether
// the field exists.
func (v *Validator) lookup(def string, path []string) (*shape, bool) {
	sh := v.shapes[def]
	for _, p := range path {
		next, ok := sh.child(p)
		if !ok {
			return noShape, false
		}
		sh = next
	}
	return sh, sh.exists
}

func (v *Validator) fieldsAt(def string, path []string) []string {
	sh := v.shapes[def]
	for _, p := range path {
		next, ok := sh.child(p)
		if !ok {
			return nil
		}
		sh = next
	}
	return sh.order
}

// unknownFields calls report with the path of every object key in data that
// the schema at that place does not allow, and of every required field that
// is missing, with what stands there (at).
func (v *Validator) unknownFields(sh *shape, data *node.Node, path []string, report func(path []string, at located)) {
	switch data.Kind {
	case node.Object:
		if sh.fields == nil && sh.any == nil {
			return
		}
		for _, req := range sh.required {
			if data.Member(req) == nil {
				reqPath := append(append([]string(nil), path...), req)
				report(reqPath, located{parent: data})
			}
		}
		// A repeated key is shown at its first place, as a look-up by
		// path finds it.
		first := firstMembers(data)
		for i := range data.Members {
			m := &data.Members[i]
			sub, ok := sh.child(m.Key)
			if !ok {
				if first != nil {
					m = first[m.Key]
				}
				report(append(append([]string(nil), path...), m.Key), located{member: m, value: m.Value, parent: data})
				continue
			}
			if m.Value.Kind == node.Object || m.Value.Kind == node.Array {
				v.unknownFields(sub, m.Value, append(append([]string(nil), path...), m.Key), report)
			}
		}
	case node.Array:
		if sh.elem == nil {
			return
		}
		for i, e := range data.Elems {
			if e.Kind == node.Object || e.Kind == node.Array {
				v.unknownFields(sh.elem, e, append(append([]string(nil), path...), strconv.Itoa(i)), report)
			}
		}
	}
}

// firstMembers maps each key of the object n to its first member when n
// repeats a key, and is nil when it does not.
func firstMembers(n *node.Node) map[string]*node.Member {
	if !hasDuplicateKeys(n) {
		return nil
	}
	first := make(map[string]*node.Member, len(n.Members))
	for i := range n.Members {
		if _, ok := first[n.Members[i].Key]; !ok {
			first[n.Members[i].Key] = &n.Members[i]
		}
	}
	return first
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func kindAllows(k cue.Kind, n *node.Node) bool {
	switch n.Kind {
	case node.Null:
		return k&cue.NullKind != 0
	case node.Bool:
		return k&cue.BoolKind != 0
	case node.String:
		return k&cue.StringKind != 0
	case node.Number:
		if strings.ContainsAny(n.Text, ".eE") {
			return k&cue.FloatKind != 0
		}
		return k&cue.IntKind != 0
	case node.Array:
		return k&cue.ListKind != 0
	case node.Object:
		return k&cue.StructKind != 0
	}
	return false
}

func describeKind(k cue.Kind) string {
	var parts []string
	add := func(bit cue.Kind, s string) {
		if k&bit != 0 {
			parts = append(parts, s)
		}
	}
	add(cue.StringKind, "a string")
	add(cue.IntKind, "an integer")
	if k&cue.IntKind == 0 {
		add(cue.FloatKind, "a number")
	}
	add(cue.BoolKind, "true or false")
	add(cue.ListKind, "a list")
	add(cue.StructKind, "an object")
	add(cue.NullKind, "null")
	switch len(parts) {
	case 0:
		return "absent"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// enumAlternatives reads "one of A, B, C" back into its choices.
func enumAlternatives(want string) []string {
	rest, ok := strings.CutPrefix(want, "one of ")
	if !ok {
		return nil
	}
	return strings.Split(rest, ", ")
}

// closest returns the candidate nearest to s (case-insensitively), if it is
// near enough to be a plausible typo.
//
// A candidate whose length differs from s's by more than the limit is not
// compared: the distance is at least that difference, and comparing a key
// of megabytes with every field name cost its length times theirs.
func closest(s string, candidates []string) string {
	best, bestDist := "", 1<<30
	ls := strings.ToLower(s)
	limit := max(2, len(s)/3)
	runes := utf8.RuneCountInString(ls)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		var d int
		switch prefix := strings.HasPrefix(lc, ls) && len(ls) >= 3; {
		case prefix && lc == ls:
			d = 0
		case prefix:
			d = 1 // at least 1: ls is shorter
		case abs(runes-utf8.RuneCountInString(lc)) > limit:
			continue
		default:
			d = levenshtein.ComputeDistance(ls, lc)
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist <= limit {
		return best
	}
	return ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func cleanCUEMessage(e cueerrors.Error) string {
	if e == nil {
		return "invalid value"
	}
	format, args := e.Msg()
	return fmt.Sprintf(format, args...)
}

// toExpr turns a value tree into a CUE expression.
func toExpr(n *node.Node) ast.Expr {
	switch n.Kind {
	case node.Object:
		s := &ast.StructLit{Elts: make([]ast.Decl, 0, len(n.Members))}
		for _, m := range n.Members {
			s.Elts = append(s.Elts, &ast.Field{Label: ast.NewString(m.Key), Value: toExpr(m.Value)})
		}
		return s
	case node.Array:
		l := &ast.ListLit{Elts: make([]ast.Expr, 0, len(n.Elems))}
		for _, e := range n.Elems {
			l.Elts = append(l.Elts, toExpr(e))
		}
		return l
	case node.String:
		return ast.NewString(n.Text)
	case node.Number:
		kind := token.INT
		if strings.ContainsAny(n.Text, ".eE") {
			kind = token.FLOAT
		}
		return &ast.BasicLit{Kind: kind, Value: n.Text}
	case node.Bool:
		return ast.NewBool(n.Bool)
	}
	return ast.NewNull()
}

// idle keeps compiled Validators for reuse: compiling the schemas costs
// much next to checking a small deployment, and a Validator must serve
// one goroutine at a time. Not a sync.Pool: a pool is emptied by every
// garbage collection, and a process that compiles more than once (a test
// binary, `mcpc run --watch`, `mcpc ui`) then compiled the schemas again
// for most compilations. At most GOMAXPROCS are kept, as many as can be
// busy at once.
var idle struct {
	sync.Mutex
	validators []*Validator
}

// Acquire returns a Validator for the calling goroutine's exclusive use;
// give it back with Release.
func Acquire() (*Validator, error) {
	idle.Lock()
	if n := len(idle.validators); n > 0 {
		v := idle.validators[n-1]
		idle.validators = idle.validators[:n-1]
		idle.Unlock()
		return v, nil
	}
	idle.Unlock()
	return New()
}

// Release gives a Validator from Acquire back for reuse.
func Release(v *Validator) {
	if v == nil {
		return
	}
	idle.Lock()
	defer idle.Unlock()
	if len(idle.validators) < runtime.GOMAXPROCS(0) {
		idle.validators = append(idle.validators, v)
	}
}
