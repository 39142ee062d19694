package schema

import (
	"strconv"
	"strings"
	"sync/atomic"

	"cuelang.org/go/cue"
	cueerrors "cuelang.org/go/cue/errors"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// What the fast path turns down is checked part by part. CUE's cost grows
// with the square of an object's width (it finds each field by a scan of
// the fields before it, and checks each new error against those it has),
// and of its depth: one CUE evaluation of a whole entry with 100 000 bad
// env values, or of a value nested 200 000 levels below an unknown key,
// did not end in useful time. So the rules guide the check down to the parts they turn
// down: the members of a struct and the elements of a list that fail their
// own rule, each on its own. A part whose kind the schema does not allow
// there (an object where a string belongs) is reported without CUE: CUE
// would report that conflict at that path and nothing below it, and the
// message is mcpc's (explain). CUE checks what is left, each part alone
// against the schema value of its place, so every other message is still
// CUE's. Below an unknown field (walk reports the field) CUE reports only
// the conflicts of a key an object repeats there: those values go to CUE
// together, and nothing else below is looked into.

// checkWork counts the work of Check that grew faster than its input,
// for the tests that hold it linear (TestCheckWorkIsLinear): CUE's
// evaluation of a value, counted as the square of its nodes (its cost
// grows so with an object's width), and the members that look-ups by
// path compare.
var checkWork struct {
	cue, scanned atomic.Int64
}

// countCUE counts CUE's evaluation of the values.
func countCUE(values ...*node.Node) {
	n := int64(0)
	for _, v := range values {
		n += int64(countNodes(v))
	}
	checkWork.cue.Add(n * n)
}

func countNodes(n *node.Node) int {
	c := 1
	for i := range n.Members {
		c += countNodes(n.Members[i].Value)
	}
	for _, e := range n.Elems {
		c += countNodes(e)
	}
	return c
}

// parts checks one value of Check, part by part.
type parts struct {
	v       *Validator
	def     string
	data    *node.Node
	subject string
	name    Naming
	seen    reported
	out     []diag.Diagnostic
}

// checkParts adds to out the diagnostics of data, which the rule r of def
// turns down, and returns them.
func (v *Validator) checkParts(def string, r rule, data *node.Node, subject string, name Naming, seen reported, out []diag.Diagnostic) []diag.Diagnostic {
	p := &parts{v: v, def: def, data: data, subject: subject, name: name, seen: seen, out: out}
	p.part(r, v.shapes[def], data, located{value: data}, nil)
	return p.out
}

// part checks the value at (its path is path), which rule r (derived for
// the schema value of shape sh) turns down.
func (p *parts) part(r rule, sh *shape, n *node.Node, at located, path []string) {
	switch r := r.(type) {
	case anyValue:
		// _ turns down only an object that repeats a key, somewhere in n.
		if n.Kind == node.Object || n.Kind == node.Array {
			stack := append([]string(nil), path...)
			p.repeatedKeys(n, at, &stack)
			return
		}
	case *structRule:
		if n.Kind == node.Object {
			p.members(r, sh, n, path)
			return
		}
	case listRule:
		if n.Kind == node.Array && sh.elem != nil {
			p.elems(r.elem, sh.elem, n, path)
			return
		}
	}
	if !kindAllows(sh.kind, n) {
		p.report(path, at, nil)
		return
	}
	p.viaCUE(sh, path, at, n)
}

// elems checks the elements of the array n that elem (the rule of its
// elements, for the shape sh) turns down.
func (p *parts) elems(elem rule, sh *shape, n *node.Node, path []string) {
	for i, e := range n.Elems {
		if !elem.accepts(e) {
			p.part(elem, sh, e, located{value: e, parent: n}, appendPath(path, strconv.Itoa(i)))
		}
	}
}

// members checks the members of the object n that the struct rule r turns
// down. Every value of a key that n repeats goes to CUE together, since
// CUE unifies them.
func (p *parts) members(r *structRule, sh *shape, n *node.Node, path []string) {
	var repeated map[string][]*node.Node
	if first := firstMembers(n); first != nil {
		repeated = map[string][]*node.Node{}
		for i := range n.Members {
			m := &n.Members[i]
			repeated[m.Key] = append(repeated[m.Key], m.Value)
		}
	}
	for i := range n.Members {
		m := &n.Members[i]
		f, declared := r.fields[m.Key]
		unknown := !declared && r.pattern == nil
		sub, ok := sh.child(m.Key)
		if !ok && !unknown {
			// The shape stops shallower than the rule (no schema of
			// mcpc nests so deep): CUE checks n whole.
			p.viaCUE(sh, path, located{value: n}, n)
			return
		}
		at := located{member: m, value: m.Value, parent: n}
		if vs := repeated[m.Key]; len(vs) > 1 {
			if vs[0] == m.Value { // once per key, at its first member
				if unknown || !sub.exists {
					sub = p.v.top // unknown, or {...}: a pattern without a value
				}
				p.viaCUE(sub, appendPath(path, m.Key), at, vs...)
			}
			continue
		}
		switch {
		case unknown:
			// An unknown field: walk reports it, and CUE reports nothing
			// below it but the conflicts of a key repeated there.
			if m.Value.Kind == node.Object || m.Value.Kind == node.Array {
				stack := appendPath(path, m.Key)
				p.repeatedKeys(m.Value, at, &stack)
			}
		case declared && !f.accepts(m.Value):
			p.part(f, sub, m.Value, at, appendPath(path, m.Key))
		case r.pattern != nil && !r.pattern.accepts(m.Value):
			p.part(r.pattern, sub, m.Value, at, appendPath(path, m.Key))
		}
	}
}

// repeatedKeys checks n, a value below _ (at stands there, *path is its
// path), for the only thing CUE finds wrong there: the values of a key an
// object repeats, which CUE unifies; they go to CUE together. It visits
// each value once, and path is one stack for the whole walk, copied only
// for a diagnostic: a copy per level made a value nested 900 levels cost
// 900² steps.
func (p *parts) repeatedKeys(n *node.Node, at located, path *[]string) {
	switch n.Kind {
	case node.Object:
		var repeated map[string][]*node.Node
		if firstMembers(n) != nil {
			repeated = map[string][]*node.Node{}
			for i := range n.Members {
				repeated[n.Members[i].Key] = append(repeated[n.Members[i].Key], n.Members[i].Value)
			}
		}
		for i := range n.Members {
			m := &n.Members[i]
			mat := located{member: m, value: m.Value, parent: n}
			*path = append(*path, m.Key)
			if vs := repeated[m.Key]; len(vs) > 1 {
				if vs[0] == m.Value { // once per key, at its first member
					p.viaCUE(p.v.top, *path, mat, vs...)
				}
			} else if m.Value.Kind == node.Object || m.Value.Kind == node.Array {
				p.repeatedKeys(m.Value, mat, path)
			}
			*path = (*path)[:len(*path)-1]
		}
	case node.Array:
		for i, e := range n.Elems {
			if e.Kind == node.Object || e.Kind == node.Array {
				*path = append(*path, strconv.Itoa(i))
				p.repeatedKeys(e, located{value: e, parent: n}, path)
				*path = (*path)[:len(*path)-1]
			}
		}
	}
}

// viaCUE validates the values (one, or every value of a repeated key) with
// CUE against the schema value of sh, and reports each error at its path
// below path; at is what stands at path.
func (p *parts) viaCUE(sh *shape, path []string, at located, values ...*node.Node) {
	countCUE(values...)
	schemaValue := p.v.value(sh)
	val := schemaValue
	for _, n := range values {
		val = val.Unify(p.v.cueSchema().ctx.BuildExpr(toExpr(n)))
	}
	err := val.Validate(cue.Concrete(true))
	if err == nil {
		return
	}
	// CUE's error paths start with the path of sh's value in the schema.
	prefix := len(schemaValue.Path().Selectors())
	for _, e := range cueerrors.Errors(err) {
		rel := dataPath(e.Path())
		rel = rel[min(prefix, len(rel)):]
		full := append(append([]string(nil), path...), rel...)
		where := at
		if len(rel) > 0 {
			where = locate(at.value, at.member, at.parent, rel)
		}
		p.report(full, where, e)
	}
}

// report adds the diagnostic of the problem at path, once per path.
func (p *parts) report(path []string, at located, e cueerrors.Error) {
	if p.seen.covers(path) {
		return
	}
	p.seen[strings.Join(path, "\x00")] = false
	p.out = append(p.out, p.v.explainAt(p.def, p.data, at, path, p.subject, p.name, e))
}

// appendPath returns path with key added, leaving path's array as it is.
func appendPath(path []string, key string) []string {
	return append(path[:len(path):len(path)], key)
}
