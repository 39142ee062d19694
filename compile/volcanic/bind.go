package volcanic

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// binder turns the layered host configuration into typed value trees, the
// way .NET's ConfigurationBinder would: keys matched case-insensitively,
// strings converted to the field's type (a value that does not convert is an
// error: the host would refuse to start), a JSON null bound as "".
type binder struct {
	v      *schema.Validator
	layers []layerInfo
	ds     []diag.Diagnostic
	// quote shows a value in a message, redacted and cut short.
	quote func(string) string
	// fields caches fieldsOf.
	fields map[string][]schemaField
}

// layerInfo describes one configuration layer for messages.
type layerInfo struct {
	kind string // appsettings, environment, env-file, env
	path string
}

func (l layerInfo) describe() string {
	switch l.kind {
	case "environment":
		return "the process environment"
	case "env":
		return "--env"
	}
	return l.path
}

// report records a finding of rule, with its declared severity.
func (b *binder) report(pos diag.Pos, rule rules.Rule, sugg, format string, args ...any) {
	b.ds = append(b.ds, rule.At(pos, fmt.Sprintf(format, args...), sugg))
}

// keyName shows where a bound value was set: the variable name for the
// environment, the configuration path otherwise.
func keyName(e *cfgEntry, path []string) string {
	if e != nil && e.envName != "" {
		return e.envName
	}
	return strings.Join(path, ":")
}

// bindEntry binds one server (def schema.Server) or the Playwright section
// (def schema.Playwright) into a typed node. canon maps a key to the field
// name the schema uses.
func (b *binder) bindEntry(n *cfgNode, def string, path []string, subject string) *node.Node {
	out := &node.Node{Kind: node.Object, Loc: n.pos}
	if w := n.winner(); w != nil && len(n.order) == 0 {
		if w.null || w.value == "" {
			return out
		}
		b.report(w.pos.Pos(), rules.TypeMismatch, "", "%s must be an object with its fields, not the value %s", subject, b.quote(w.value))
		return out
	}
	fields := b.fieldsOf(def)
	out.Members = make([]node.Member, 0, len(n.order))
	// The path of each field, for messages only (nothing keeps it): one
	// slice per entry, not one per field.
	fpath := make([]string, len(path)+1)
	copy(fpath, path)
	for _, c := range n.order {
		name, kind, declared := c.key, cue.BottomKind, false
		for _, f := range fields {
			if strings.EqualFold(f.name, c.key) {
				name, kind, declared = f.name, f.kind, true
				break
			}
		}
		if !declared {
			kind = b.v.Kind(def, name) // a pattern's, or none
		}
		fpath[len(path)] = c.key
		var val *node.Node
		switch {
		case kind == cue.BottomKind:
			val = genericNode(c) // unknown field: the schema reports it
		case kind&cue.ListKind != 0:
			val = b.bindList(c, fpath, subject, name)
		case kind&cue.StructKind != 0:
			val = b.bindMap(c, fpath, subject, name)
		default:
			val = b.bindScalar(c, fpath, subject, name, kind)
		}
		if val == nil {
			continue
		}
		keyPos := c.keyPos
		if w := c.winner(); w != nil {
			keyPos = w.keyPos
		}
		out.Members = append(out.Members, node.Member{Key: name, KeyLoc: keyPos, Value: val})
	}
	return out
}

// schemaField is a field a definition declares and the kinds it allows.
type schemaField struct {
	name string
	kind cue.Kind
}

// fieldsOf returns the fields of def, asked of the schema once per binder,
// not once per server.
func (b *binder) fieldsOf(def string) []schemaField {
	if fs, ok := b.fields[def]; ok {
		return fs
	}
	var fs []schemaField
	for _, name := range b.v.Fields(def) {
		fs = append(fs, schemaField{name: name, kind: b.v.Kind(def, name)})
	}
	if b.fields == nil {
		b.fields = map[string][]schemaField{}
	}
	b.fields[def] = fs
	return fs
}

// genericNode stands for an unknown key's value, for the schema to report
// the key: a section is an object without its keys, since the schema looks
// no further below an unknown key than for a key repeated there, which the
// configuration cannot hold (it folds keys that differ in case). A copy of
// the keys below would cost memory in the size of what lies below
// (docs/performance.md, "Figures behind code comments").
func genericNode(c *cfgNode) *node.Node {
	if len(c.order) > 0 {
		return &node.Node{Kind: node.Object, Loc: c.pos}
	}
	w := c.winner()
	if w == nil {
		return &node.Node{Kind: node.Object, Loc: c.pos}
	}
	n := node.StrAt(w.value, w.pos)
	n.TextOffset = w.textOffset
	return n
}

func (b *binder) bindScalar(c *cfgNode, path []string, subject, field string, kind cue.Kind) *node.Node {
	w := c.winner()
	if w == nil || len(c.order) > 0 {
		b.report(c.keyPos.Pos(), rules.TypeMismatch, "", "%s: %s must be %s, not a section with keys below it", subject, pascal(field), kindWords(kind))
		return nil
	}
	// The value as a message shows it: made only for a message, as most
	// values convert.
	what := func() string {
		if w.null {
			return "null (which binds to an empty string)"
		}
		return b.quote(w.value)
	}
	switch {
	case kind&cue.NullKind != 0 && (w.null || w.value == ""):
		// A nullable setting: empty means unset.
		return &node.Node{Kind: node.Null, Loc: w.pos}
	case kind&cue.IntKind != 0:
		n, ok := convertDotnetInt32(w.value)
		if !ok {
			b.report(w.pos.Pos(), rules.TypeMismatch, "write a whole number such as 60",
				"%s: %s must be an integer, and %s (from %s) does not convert; the host would refuse to start", subject, pascal(field), what(), keyName(w, path))
			return nil
		}
		return &node.Node{Kind: node.Number, Loc: w.pos, Text: strconv.FormatInt(n, 10)}
	case kind&cue.BoolKind != 0:
		v, ok := parseDotnetBool(w.value)
		if !ok {
			b.report(w.pos.Pos(), rules.TypeMismatch, "write true or false",
				"%s: %s must be true or false, and %s (from %s) does not convert; the host would refuse to start", subject, pascal(field), what(), keyName(w, path))
			return nil
		}
		return &node.Node{Kind: node.Bool, Loc: w.pos, Bool: v}
	}
	n := node.StrAt(w.value, w.pos)
	n.TextOffset = w.textOffset
	return n
}

func kindWords(k cue.Kind) string {
	switch {
	case k&cue.IntKind != 0:
		return "an integer"
	case k&cue.BoolKind != 0:
		return "true or false"
	case k&cue.ListKind != 0:
		return "a list"
	case k&cue.StructKind != 0:
		return "an object"
	}
	return "a string"
}

// bindList binds an array: its index keys in configuration key order. It
// warns when a later layer sets only some indices of an array an earlier
// layer defined, since .NET then keeps the earlier elements it did not set.
func (b *binder) bindList(c *cfgNode, path []string, subject, field string) *node.Node {
	out := &node.Node{Kind: node.Array, Loc: c.pos}
	if len(c.order) == 0 {
		if w := c.winner(); w != nil && !w.null && w.value != "" {
			sugg := `write a JSON list, one element per argument: ["-y", "package"]`
			if w.envName != "" {
				sugg = fmt.Sprintf("set one variable per element: %s__0, %s__1, …", w.envName, w.envName)
			}
			b.report(w.pos.Pos(), rules.TypeMismatch, sugg,
				"%s: %s must be a list, not the single value %s", subject, pascal(field), b.quote(w.value))
		}
		return out
	}
	out.Elems = make([]*node.Node, 0, len(c.order))
	for _, el := range c.sortedChildren() {
		w := el.winner()
		if w == nil || len(el.order) > 0 {
			b.report(el.keyPos.Pos(), rules.TypeMismatch, "", "%s: %s[%s] must be a string, not a section with keys below it", subject, pascal(field), el.key)
			continue
		}
		n := node.StrAt(w.value, w.pos)
		n.TextOffset = w.textOffset
		out.Elems = append(out.Elems, n)
	}
	b.checkPartialOverride(c, path, field)
	return out
}

func (b *binder) checkPartialOverride(c *cfgNode, path []string, field string) {
	byLayer := map[int]map[string]*cfgEntry{}
	for _, el := range c.order {
		for _, e := range el.entries {
			if byLayer[e.layer] == nil {
				byLayer[e.layer] = map[string]*cfgEntry{}
			}
			byLayer[e.layer][foldKey(el.key)] = e
		}
	}
	layers := make([]int, 0, len(byLayer))
	for l := range byLayer {
		layers = append(layers, l)
	}
	sort.Ints(layers)
	for li, later := range layers {
		for _, earlier := range layers[:li] {
			set, defined := byLayer[later], byLayer[earlier]
			overlap, missing := false, []string{}
			for k := range defined {
				if _, ok := set[k]; ok {
					overlap = true
				} else {
					missing = append(missing, k)
				}
			}
			if !overlap || len(missing) == 0 {
				continue
			}
			sortKeys(missing, func(s string) string { return s })
			var first *cfgEntry
			var setKeys []string
			for k, e := range set {
				setKeys = append(setKeys, k)
				if first == nil || e.keyPos.Pos().Line < first.keyPos.Pos().Line || (e.keyPos.Pos().Line == first.keyPos.Pos().Line && e.keyPos.Pos().Column < first.keyPos.Pos().Column) {
					first = e
				}
			}
			sortKeys(setKeys, func(s string) string { return s })
			var keys []string
			for _, k := range missing {
				if first.envName != "" {
					keys = append(keys, strings.Join(append(envPrefix(first.envName, len(path)), k), "__"))
				} else {
					keys = append(keys, strings.Join(append(append([]string(nil), path...), k), ":"))
				}
			}
			b.report(first.keyPos.Pos(), rules.ArrayPartialOverride,
				fmt.Sprintf("also set %s there, or define the whole list in one place", joinWords(keys)),
				"%s sets only %s of %s, which %s defines with %d elements; %s keep%s the value%s from %s",
				b.layers[later].describe(), indexWords(setKeys), strings.Join(path, ":"), b.layers[earlier].describe(),
				len(defined), indexWords(missing), map[bool]string{true: "s", false: ""}[len(missing) == 1],
				map[bool]string{true: "", false: "s"}[len(missing) == 1], b.layers[earlier].describe())
			break // one warning per later layer
		}
	}
}

// bindMap binds env: every child key is a variable. A JSON null binds to ""
// in the host, so it does not remove the variable.
func (b *binder) bindMap(c *cfgNode, path []string, subject, field string) *node.Node {
	out := &node.Node{Kind: node.Object, Loc: c.pos}
	if len(c.order) == 0 {
		if w := c.winner(); w != nil && !w.null && w.value != "" {
			b.report(w.pos.Pos(), rules.TypeMismatch, "", "%s: %s must be an object of NAME: value pairs, not the single value %s", subject, pascal(field), b.quote(w.value))
		}
		return out
	}
	out.Members = make([]node.Member, 0, len(c.order))
	for _, el := range c.order {
		w := el.winner()
		if w == nil || len(el.order) > 0 {
			b.report(el.keyPos.Pos(), rules.TypeMismatch, "", "%s: %s.%s must be a string, not a section with keys below it", subject, pascal(field), el.key)
			continue
		}
		if w.null {
			b.report(w.pos.Pos(), rules.HostNullEnv, "remove the variable in settings.json (where null removes it), or drop the key here",
				"%s: %s.%s is null, which the host binds to an empty string; the variable is set to \"\", not removed", subject, pascal(field), el.key)
		}
		n := node.StrAt(w.value, w.pos)
		n.TextOffset = w.textOffset
		out.Members = append(out.Members, node.Member{Key: el.key, KeyLoc: w.keyPos, Value: n})
	}
	return out
}

// envPrefix returns the first n "__"-separated parts of an environment
// variable name (keeping the operator's spelling).
func envPrefix(name string, n int) []string {
	parts := strings.Split(name, "__")
	if len(parts) > n {
		parts = parts[:n]
	}
	return parts
}

// indexWords writes "index 1" or "indices 0, 2 and 3".
func indexWords(keys []string) string {
	if len(keys) == 1 {
		return "index " + keys[0]
	}
	return "indices " + joinWords(keys)
}

// joinWords writes "a", "a and b", "a, b and c".
func joinWords(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
