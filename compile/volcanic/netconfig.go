package volcanic

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// This file models .NET configuration: every provider (appsettings file,
// environment) contributes flat keys such as Mcp:Servers:github:Command;
// keys compare case-insensitively; a later provider overrides an earlier one
// key by key; arrays are index keys.

// cfgEntry is one key set by one layer.
type cfgEntry struct {
	value string
	// pos is where the value stands, keyPos where its key does.
	pos, keyPos node.Loc
	// envName is the variable name when the layer is an environment.
	envName string
	layer   int
	// null and textOffset share a word: one entry per key of the host
	// configuration is held until its server is bound.
	null       bool // a JSON null: it binds to the empty string
	textOffset uint8
}

// cfgNode is one key of the configuration tree, with every layer's value for
// exactly this key.
//
// The tree holds a node per key of the whole host configuration until its
// servers are bound: a node keeps only its key as written (its folded form
// is made on the stack when compared), and firstLayer says whether pos and
// keyPos are set.
type cfgNode struct {
	key string // as first written
	// order holds the children in the order they first appeared; children
	// indexes them by folded key once there are more than a few (a map
	// per server field cost more than the rest of the tree).
	order    []*cfgNode
	children map[string]*cfgNode
	entries  []*cfgEntry
	// pos and keyPos come from the first layer that mentions the key
	// (firstLayer, -1 until one does); a container (object or array) in a
	// JSON file gets its own position.
	pos, keyPos node.Loc
	firstLayer  int32
	// role says whether the node is Mcp, Mcp:Servers or a server under
	// it: what lies below a server is added when the server is bound
	// (see config.pending).
	role cfgRole
}

// cfgRole is what a configuration node stands for.
type cfgRole uint8

const (
	roleOther cfgRole = iota
	roleRoot
	roleMcp
	roleServers
	roleServer
)

// childRole is the role of a child of a node of role parent whose key
// folds to folded.
func childRole(parent cfgRole, folded []byte) cfgRole {
	switch {
	case parent == roleRoot && string(folded) == "MCP":
		return roleMcp
	case parent == roleMcp && string(folded) == "SERVERS":
		return roleServers
	case parent == roleServers:
		return roleServer
	}
	return roleOther
}

// maxScannedChildren is how many children a node looks through before it
// indexes them in a map.
const maxScannedChildren = 16

// maxKeyLevels bounds the levels of the configuration tree: what a key sets
// below that many levels is one key at the last level, its levels joined by
// ":" as .NET writes a key. .NET itself keeps each key whole (a provider's
// keys are flat strings, and the binder looks up only the sections of the
// fields it binds), so it has no depth to refuse; but a tree node per level
// makes a long variable Mcp__:a:a:… cost memory far beyond its bytes.
// Nothing mcpc knows lies deeper than five levels
// (Mcp:Servers:NAME:Env:VARIABLE), so every finding stays as it was: an
// unknown field is reported once at its first level, a value below a
// setting as a section with keys below it, a key set twice by one file by
// its whole name.
const maxKeyLevels = 16

func newCfgNode(key string) *cfgNode { return &cfgNode{key: key, firstLayer: -1} }

// hasPos reports whether a layer has mentioned the key (pos and keyPos are
// set).
func (n *cfgNode) hasPos() bool { return n.firstLayer >= 0 }

// setFirst records where the first layer to mention the key puts it.
func (n *cfgNode) setFirst(layer int, pos, keyPos node.Loc) {
	n.firstLayer, n.pos, n.keyPos = int32(layer), pos, keyPos
}

func (n *cfgNode) child(key string, create bool) *cfgNode {
	// A short ASCII key is folded on the stack: looking it up allocates
	// nothing, and a configuration is looked up once per key and level.
	var buf [64]byte
	folded, ok := foldASCII(buf[:0], key)
	if !ok {
		folded = []byte(foldKey(key))
	}
	if c := n.find(folded); c != nil {
		return c
	}
	if !create {
		return nil
	}
	c := newCfgNode(key)
	c.role = childRole(n.role, folded)
	n.order = append(n.order, c)
	switch {
	case n.children != nil:
		n.children[string(folded)] = c
	case len(n.order) > maxScannedChildren:
		n.children = make(map[string]*cfgNode, 2*len(n.order))
		for _, o := range n.order {
			n.children[foldKey(o.key)] = o
		}
	}
	return c
}

// find returns the child whose folded key is folded, or nil.
func (n *cfgNode) find(folded []byte) *cfgNode {
	if n.children != nil {
		return n.children[string(folded)]
	}
	for _, c := range n.order {
		if foldEqual(c.key, folded) {
			return c
		}
	}
	return nil
}

// foldEqual reports whether foldKey(key) is folded, without making it when
// key is a short ASCII key.
func foldEqual(key string, folded []byte) bool {
	var buf [64]byte
	if k, ok := foldASCII(buf[:0], key); ok {
		return string(k) == string(folded)
	}
	return foldKey(key) == string(folded)
}

// release drops what is below n once it is bound, so that the tree of a
// large configuration shrinks while its servers are bound instead of
// staying whole until the end.
func (n *cfgNode) release() {
	n.children, n.order, n.entries = nil, nil, nil
}

// winner is the entry of the last layer that set this key, or nil.
func (n *cfgNode) winner() *cfgEntry {
	if len(n.entries) == 0 {
		return nil
	}
	return n.entries[len(n.entries)-1]
}

// sortedChildren returns the children in ConfigurationKeyComparer order.
func (n *cfgNode) sortedChildren() []*cfgNode {
	out := append([]*cfgNode(nil), n.order...)
	sortKeys(out, func(c *cfgNode) string { return c.key })
	return out
}

// foldKey is the case-insensitive form of a configuration key.
func foldKey(k string) string {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= 'a' && c <= 'z' || c >= 0x80 {
			return strings.ToUpper(k)
		}
	}
	return k
}

// foldASCII appends foldKey(k) to buf when k is ASCII and fits in buf's
// capacity (then upper-casing is a byte per byte); ok is false otherwise.
func foldASCII(buf []byte, k string) ([]byte, bool) {
	if len(k) > cap(buf) {
		return nil, false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 0x80:
			return nil, false
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf, true
}

// config is the layered configuration.
//
// What a layer sets below a server (Mcp:Servers:NAME:…) is not added when
// the layer is read: the server's node keeps, in pending, what adds it
// (the part of the file's tree, the variables), in the order the layers
// give them, and expand adds it all when the server is bound, in that same
// order. So the nodes of one server at a time are made, never the whole
// configuration's, which took more memory than anything else in a
// compilation of a large deployment (docs/decisions/
// 0041-compiler-memory.md). What is added, and every message about it, is the same.
type config struct {
	root    *cfgNode
	ds      []diag.Diagnostic
	pending map[*cfgNode][]func()
	// expanding is set while expand adds a server's pending parts.
	expanding bool
}

func newConfig() *config {
	root := newCfgNode("")
	root.role = roleRoot
	return &config{root: root, pending: map[*cfgNode][]func(){}}
}

// later keeps add to run when n, a server, is expanded, and reports true;
// it reports false (the caller adds now) for any other node, and while n
// is being expanded.
func (c *config) later(n *cfgNode, add func()) bool {
	if n.role != roleServer || c.expanding {
		return false
	}
	c.pending[n] = append(c.pending[n], add)
	return true
}

// expand adds what the layers set below the server n, in the order they
// set it.
func (c *config) expand(n *cfgNode) {
	adds := c.pending[n]
	delete(c.pending, n)
	c.expanding = true
	for _, add := range adds {
		add()
	}
	c.expanding = false
}

// walk returns the node of path, made where missing: each level made by
// this layer stands at pos, its key at keyPoses[i] (keyPos beyond them).
// Below a server it keeps redo for when the server is expanded (redo
// walks again) and returns nil.
func (c *config) walk(path []string, layer int, pos, keyPos node.Loc, keyPoses []node.Loc, redo func()) *cfgNode {
	n := c.root
	for i, p := range path {
		n = n.child(p, true)
		if !n.hasPos() {
			kp := keyPos
			if i < len(keyPoses) {
				kp = keyPoses[i]
			}
			n.setFirst(layer, pos, kp)
		}
		if i < len(path)-1 && c.later(n, redo) {
			return nil
		}
	}
	return n
}

// addJSON flattens one appsettings file into keys. It consumes root: each
// part of the file's tree is dropped once added, so that the tree and the
// configuration are not both whole at once. Object keys that contain
// ":" split into several levels, as in .NET. A key that the same file sets
// twice (compared case-insensitively) is an error: the host refuses to start.
//
// src, when not nil, is what root was built from: the part of a server's
// tree that waits for the server to be bound is then built again from it
// rather than held.
func (c *config) addJSON(root *node.Node, src *node.Source, layer int) {
	if root.Kind != node.Object {
		c.ds = append(c.ds, rules.TypeMismatch.At(root.Pos(),
			"an appsettings file must hold a JSON object, not "+node.Describe(root), ""))
		return
	}
	w := &jsonLayer{c: c, layer: layer, src: src}
	w.object(root, c.root)
}

// jsonLayer adds one appsettings file to the configuration. It walks the
// file's tree with the configuration node of each container in hand, so a
// key costs one look-up, not one per level from the root.
type jsonLayer struct {
	c     *config
	layer int
	src   *node.Source
	// path holds the keys from the root to the value being added, for
	// messages.
	path []string
	// group, when set, is the object written twice (its key is an earlier
	// key of the same object, compared case-insensitively) that the value
	// being added lies in: the keys it sets twice make one finding.
	group *dupGroup
}

// dupGroup is an object that one appsettings file writes twice: .NET
// merges the two, and refuses to start if they set a key in common. Its
// parts may be added at different times (each server's when it is bound),
// so parts counts those not yet added; the finding is made, at the later
// key, when the last is.
type dupGroup struct {
	name            string // the object's whole key, as the later key writes it
	keyPos, firstAt node.Loc
	parts           int
	keys            []string // the keys set twice, below the object
	more            int      // those beyond maxListedKeys
}

// maxListedKeys is how many keys set twice a finding names.
const maxListedKeys = 8

// add records that the key full (the whole key, from the root) is set
// twice.
func (g *dupGroup) add(full string) {
	if len(g.keys) == maxListedKeys {
		g.more++
		return
	}
	g.keys = append(g.keys, strings.TrimPrefix(full, g.name+":"))
}

// done marks one part added, and makes the finding once all are; a nil
// group has nothing to do.
func (g *dupGroup) done(c *config) {
	if g == nil {
		return
	}
	if g.parts--; g.parts > 0 || len(g.keys) == 0 {
		return
	}
	what := "its key " + g.keys[0] + " is"
	if len(g.keys) > 1 {
		what = "its keys " + strings.Join(g.keys, ", ")
		if g.more > 0 {
			what += " and " + strconv.Itoa(g.more) + " more"
		}
		what += " are"
	}
	c.ds = append(c.ds, rules.DuplicateKey.At(g.keyPos.Pos(),
		"the object "+g.name+" is written twice in this file (keys are case-insensitive), so "+what+" set twice; the host refuses to start",
		"merge them into one or remove one; the other is at "+g.firstAt.Pos().String()))
}

// later keeps add, what this layer adds below at, for when at (a server)
// is expanded (config.later), and reports true; add gets a jsonLayer with
// the path of now, and v (the value it adds) built again from the file
// when the layer has its source, so that the tree of every server is not
// held until it is bound.
func (w *jsonLayer) later(at *cfgNode, v *node.Node, add func(w *jsonLayer, v *node.Node)) bool {
	if at.role != roleServer || w.c.expanding {
		return false
	}
	g := w.group
	again := &jsonLayer{c: w.c, layer: w.layer, src: w.src, path: append([]string(nil), w.path...), group: g}
	if g != nil {
		g.parts++
	}
	if w.src != nil {
		start := v.Start
		return w.c.later(at, func() { add(again, w.src.Build(start)); g.done(w.c) })
	}
	return w.c.later(at, func() { add(again, v); g.done(w.c) })
}

// object adds the members of n, the object at configuration node at. A key
// that contains ":" stands for several levels, as in .NET.
//
// A member whose first level is that of an earlier member (compared
// case-insensitively) writes that key again: when it holds an object or
// array, the keys it sets twice make one finding (a group), at its key.
func (w *jsonLayer) object(n *node.Node, at *cfgNode) {
	if w.later(at, n, func(w *jsonLayer, n *node.Node) { w.object(n, at) }) {
		return
	}
	outer := w.group
	seen := firstLevels{members: n.Members, whole: len(w.path) >= maxKeyLevels-1}
	for i := range n.Members {
		m := &n.Members[i]
		depth := len(w.path)
		var g *dupGroup
		w.group = outer
		if first, again := seen.add(i); again {
			w.group = nil // a value written twice: its own finding
			if m.Value.Kind == node.Object || m.Value.Kind == node.Array {
				name := m.Key
				if depth > 0 {
					name = strings.Join(w.path, ":") + ":" + m.Key
				}
				g = &dupGroup{name: name, keyPos: m.KeyLoc, firstAt: first, parts: 1}
				w.group = g
			}
		}
		w.member(at, m.Key, m.KeyLoc, m.Value)
		w.path = w.path[:depth]
		g.done(w.c)
		m.Value = nil // added: the file's tree is consumed as it is added (the key stays for firstLevels)
	}
	w.group = outer
}

// firstLevels finds, for each member of an object in turn, an earlier one
// whose first level is the same key (compared case-insensitively):
// scanning the earlier members in a small object, with a map in a large
// one, as cfgNode.child does.
type firstLevels struct {
	members []node.Member
	// whole is set when the object lies at the last level (maxKeyLevels):
	// a key is then one level, ":" and all, as member adds it.
	whole bool
	index map[string]node.Loc
}

// level is the first level that member key k adds.
func (f *firstLevels) level(k string) string {
	if f.whole {
		return k
	}
	level, _, _ := strings.Cut(k, ":")
	return level
}

// add looks up the first level of member i among those of the members
// before it, and returns where the first of them stands.
func (f *firstLevels) add(i int) (node.Loc, bool) {
	var buf [64]byte
	level := f.level(f.members[i].Key)
	folded, ok := foldASCII(buf[:0], level)
	if !ok {
		folded = []byte(foldKey(level))
	}
	if len(f.members) <= maxScannedChildren {
		for j := range i {
			m := &f.members[j]
			if foldEqual(f.level(m.Key), folded) {
				return m.KeyLoc, true
			}
		}
		return node.Loc{}, false
	}
	if f.index == nil {
		f.index = make(map[string]node.Loc, len(f.members))
	}
	if at, ok := f.index[string(folded)]; ok {
		return at, true
	}
	f.index[string(folded)] = f.members[i].KeyLoc
	return node.Loc{}, false
}

// member adds v, whose key (keyPos) is key below at: one level per part of
// the key between ":".
func (w *jsonLayer) member(at *cfgNode, key string, keyPos node.Loc, v *node.Node) {
	cn, rest := at, key
	for {
		seg, more, found := strings.Cut(rest, ":")
		if len(w.path) >= maxKeyLevels-1 {
			seg, more, found = rest, "", false // the rest is one level
		}
		w.path = append(w.path, seg)
		cn = w.level(cn, seg, keyPos, v, !found)
		if !found {
			break
		}
		rest = more
		if server := cn; w.later(server, v, func(w *jsonLayer, v *node.Node) { w.member(server, more, keyPos, v) }) {
			return
		}
	}
	w.value(v, cn, keyPos)
}

// level returns the child key of at, created where this layer is the first
// to mention it: its key stands at keyPos; its value's position is v's when
// it holds v itself (last) or v is a value, keyPos for the levels of a
// container's key before the last.
func (w *jsonLayer) level(at *cfgNode, key string, keyPos node.Loc, v *node.Node, last bool) *cfgNode {
	cn := at.child(key, true)
	if !cn.hasPos() {
		pos := v.Loc
		if !last && (v.Kind == node.Object || v.Kind == node.Array) {
			pos = keyPos
		}
		cn.setFirst(w.layer, pos, keyPos)
	}
	return cn
}

// value adds v, the value at configuration node at, whose key stands at
// keyPos (an array element's key is the element). A key that the same file
// sets twice (compared case-insensitively) is an error: the host refuses to
// start.
func (w *jsonLayer) value(v *node.Node, at *cfgNode, keyPos node.Loc) {
	switch v.Kind {
	case node.Object:
		w.object(v, at)
		return
	case node.Array:
		if w.later(at, v, func(w *jsonLayer, v *node.Node) { w.value(v, at, keyPos) }) {
			return
		}
		for i, el := range v.Elems {
			key := strconv.Itoa(i)
			w.path = append(w.path, key)
			w.value(el, w.level(at, key, el.Loc, el, true), el.Loc)
			w.path = w.path[:len(w.path)-1]
			v.Elems[i] = nil
		}
		return
	}
	if first := at.winner(); first != nil && first.layer == w.layer {
		if w.group != nil {
			w.group.add(strings.Join(w.path, ":"))
			return
		}
		w.c.ds = append(w.c.ds, rules.DuplicateKey.At(keyPos.Pos(),
			"the key "+strings.Join(w.path, ":")+" is set twice in this file (keys are case-insensitive); the host refuses to start",
			"remove one of them; the other is at "+first.keyPos.Pos().String()))
		return
	}
	e := &cfgEntry{pos: v.Loc, keyPos: keyPos, layer: w.layer, textOffset: v.TextOffset}
	switch v.Kind {
	case node.Null:
		e.null = true
	case node.String:
		e.value = v.Text
	case node.Bool:
		e.value = strconv.FormatBool(v.Bool)
	case node.Number:
		e.value = v.Text
	}
	at.entries = append(at.entries, e)
}

// addEnv adds the variables of one environment layer. Like .NET's
// environment provider, "__" in a name separates levels.
func (c *config) addEnv(vars []*compile.EnvVar, layer int) {
	for _, v := range vars {
		c.addVar(v, layer)
	}
}

// addVar adds one variable of an environment layer.
func (c *config) addVar(v *compile.EnvVar, layer int) {
	if c.laterVar(v, layer) {
		return
	}
	path := keyLevels(v.Name)
	if len(path) < 2 || foldKey(path[0]) != "MCP" {
		return // only the Mcp section is mcpc's business
	}
	// Each level's key points at its own part of the variable name.
	var buf [8]node.Loc
	keyPoses := buf[:0]
	at := v.Pos()
	col := at.Column
	for _, p := range path {
		keyPoses = append(keyPoses, v.Loc.At(at.Line, col))
		col += utf8.RuneCountInString(p) + 2
	}
	keyPos := keyPoses[len(keyPoses)-1]
	n := c.walk(path, layer, v.ValueLoc, keyPos, keyPoses, func() { c.addVar(v, layer) })
	if n != nil {
		n.entries = append(n.entries, &cfgEntry{value: v.Value, pos: v.ValueLoc, keyPos: keyPos, textOffset: v.TextOffset, layer: layer, envName: v.Name})
	}
}

// laterVar adds the levels down to the server of a variable that sets a
// key below one (Mcp__Servers__NAME__…) as addVar would, keeps the
// variable for the server's expansion and reports true, without splitting
// the rest of its name (addVar does, once, when the server is expanded).
// It reports false for any other variable, and while expanding.
func (c *config) laterVar(v *compile.EnvVar, layer int) bool {
	if c.expanding {
		return false
	}
	var segs [3]string
	rest := v.Name
	for i := range segs {
		seg, more, found := cutLevel(rest)
		if !found {
			return false // three levels or fewer: added now
		}
		segs[i], rest = seg, more
	}
	if foldKey(segs[0]) != "MCP" {
		return false
	}
	at := v.Pos()
	col := at.Column
	n := c.root
	for _, seg := range segs {
		n = n.child(seg, true)
		if !n.hasPos() {
			n.setFirst(layer, v.ValueLoc, v.Loc.At(at.Line, col))
		}
		col += utf8.RuneCountInString(seg) + 2
	}
	return c.later(n, func() { c.addVar(v, layer) })
}

// keyLevels splits the variable name into its configuration levels (as
// strings.Split(strings.ReplaceAll(name, "__", ":"), ":") does), at most
// maxKeyLevels of them: the last holds the rest of the name, in
// configuration form ("__" written ":").
func keyLevels(name string) []string {
	var levels []string
	rest := name
	for len(levels) < maxKeyLevels-1 {
		level, more, found := cutLevel(rest)
		levels = append(levels, level)
		if !found {
			return levels
		}
		rest = more
	}
	return append(levels, strings.ReplaceAll(rest, "__", ":"))
}

// cutLevel cuts name at its first level separator ("__" or ":", the
// levels strings.Split(strings.ReplaceAll(name, "__", ":"), ":") gives).
func cutLevel(name string) (level, rest string, found bool) {
	for i := 0; i < len(name); i++ {
		switch {
		case name[i] == ':':
			return name[:i], name[i+1:], true
		case name[i] == '_' && i+1 < len(name) && name[i+1] == '_':
			return name[:i], name[i+2:], true
		}
	}
	return name, "", false
}

// lookup follows a path of keys, case-insensitively.
func (c *config) lookup(path ...string) *cfgNode {
	n := c.root
	for _, p := range path {
		if n = n.child(p, false); n == nil {
			return nil
		}
	}
	return n
}

// sortKeys orders items by .NET's ConfigurationKeyComparer: names that parse
// as integers first, numerically; then the others as OrdinalIgnoreCase does,
// UTF-16 code unit by code unit after upper-casing. Ties (such as "1" and
// "01") keep a stable ordinal order so that output is deterministic.
func sortKeys[T any](items []T, key func(T) string) {
	type keyed struct {
		item  T
		isInt bool
		n     int64
		up    []uint16
		raw   string
	}
	ks := make([]keyed, len(items))
	for i, it := range items {
		k := key(it)
		ks[i].item, ks[i].raw = it, k
		if n, ok := parseDotnetInt(k); ok {
			ks[i].isInt, ks[i].n = true, n
		} else {
			ks[i].up = upperUTF16(k)
		}
	}
	less := func(a, b *keyed) bool {
		if a.isInt != b.isInt {
			return a.isInt
		}
		if a.isInt {
			if a.n != b.n {
				return a.n < b.n
			}
			return a.raw < b.raw
		}
		for i := 0; i < len(a.up) && i < len(b.up); i++ {
			if a.up[i] != b.up[i] {
				return a.up[i] < b.up[i]
			}
		}
		if len(a.up) != len(b.up) {
			return len(a.up) < len(b.up)
		}
		return a.raw < b.raw
	}
	idx := make([]*keyed, len(ks))
	for i := range ks {
		idx[i] = &ks[i]
	}
	sort.SliceStable(idx, func(i, j int) bool { return less(idx[i], idx[j]) })
	for i, k := range idx {
		items[i] = k.item
	}
}

func upperUTF16(s string) []uint16 {
	rs := []rune(s)
	for i, r := range rs {
		rs[i] = unicode.ToUpper(r)
	}
	return utf16.Encode(rs)
}

// parseDotnetInt parses like int.TryParse with NumberStyles.Integer and the
// invariant culture: white space, an optional sign, ASCII digits, white
// space, then only NUL characters (which .NET's number parser ignores at
// the end, for compatibility), within the Int32 range.
func parseDotnetInt(s string) (int64, bool) {
	i := 0
	for i < len(s) && isDotnetSpace(rune(s[i])) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var n int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if n > 1<<31 {
			return 0, false
		}
	}
	if i == start {
		return 0, false
	}
	for i < len(s) && isDotnetSpace(rune(s[i])) {
		i++
	}
	if strings.Trim(s[i:], "\x00") != "" {
		return 0, false
	}
	if neg {
		n = -n
	}
	if n > 1<<31-1 || n < -(1<<31) {
		return 0, false
	}
	return n, true
}

// convertDotnetInt32 converts a configuration value to an int as the
// binder does: with Int32Converter (TypeDescriptor.GetConverter(typeof(int))
// .ConvertFromInvariantString), which trims every Unicode white space, then
// reads hexadecimal after "#", "0x" or "&h" (any case), else calls int.Parse
// with NumberStyles.Integer. docs/decisions/0005-volcanic-checks.md has the table of cases.
func convertDotnetInt32(s string) (int64, bool) {
	t := strings.TrimFunc(s, unicode.IsSpace) // String.Trim: char.IsWhiteSpace
	switch {
	case t == "":
		return 0, false // text[0] throws: the converter refuses it
	case t[0] == '#':
		return parseDotnetHex32(t[1:])
	case len(t) >= 2 && (t[0] == '0' && (t[1] == 'x' || t[1] == 'X') || t[0] == '&' && (t[1] == 'h' || t[1] == 'H')):
		return parseDotnetHex32(t[2:])
	}
	return parseDotnetInt(t)
}

// parseDotnetHex32 parses like Convert.ToInt32(s, 16): an optional "+" (a
// "-" is refused), an optional further "0x"/"0X", then at least one ASCII
// hex digit and nothing after them, no white space. The value is the 32
// bits read, so 0xFFFFFFFF is -1; more than 32 significant bits overflow.
func parseDotnetHex32(s string) (int64, bool) {
	i := 0
	if i < len(s) && s[i] == '+' {
		i++
	}
	if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		i += 2
	}
	if i == len(s) {
		return 0, false
	}
	var n uint64
	for ; i < len(s); i++ {
		d, ok := hexDigit(s[i])
		if !ok {
			return 0, false
		}
		n = n<<4 | uint64(d)
		if n > 0xFFFFFFFF {
			return 0, false
		}
	}
	return int64(int32(uint32(n))), true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// isDotnetSpace is the white space NumberStyles.AllowLeadingWhite and
// AllowTrailingWhite accept: U+0009–U+000D and U+0020.
func isDotnetSpace(r rune) bool { return r == ' ' || (r >= '\t' && r <= '\r') }

// parseDotnetBool parses like bool.TryParse (and the binder's
// BooleanConverter, which trims and calls bool.Parse): "true" or "false",
// ASCII letters in any case, surrounded by any white space and NUL
// characters. Only ASCII case folds: .NET compares with "| 0x20", so
// "falſe" (long s) is not false, though Unicode folds ſ to s.
func parseDotnetBool(s string) (bool, bool) {
	t := strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == 0 })
	switch {
	case asciiEqualFold(t, "true"):
		return true, true
	case asciiEqualFold(t, "false"):
		return false, true
	}
	return false, false
}

// asciiEqualFold compares s with lower, a lower-case ASCII word, folding
// only ASCII letters.
func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
