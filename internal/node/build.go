package node

import (
	"encoding/json"
	"strings"
)

// build turns data, which json.Valid accepts, into Nodes: the tree that
// hujson.Parse and convert would give, without hujson's syntax tree in
// between, which cost more than the Nodes themselves (most configuration
// files, JSONC ones too, are plain JSON). encoding/json has validated the
// text, so build only walks it; it decodes a string with an escape through
// encoding/json. FuzzBuildMatchesHujson holds the two paths equal.
func build(ix *LineIndex, data []byte) *Node {
	return (&Source{ix: ix, data: data, keys: map[string]string{}}).Build(0)
}

// buildShallow is build, but the object members of the object at path
// stub are built as skipObject leaves them; overflow says whether a number
// in them holds no float64.
func buildShallow(src *Source, stub []string, fold bool) (n *Node, overflow bool) {
	b := &builder{ix: src.ix, data: src.data, keys: src.keys, stub: stub, fold: fold}
	n = b.value()
	return n, b.overflow
}

type builder struct {
	ix   *LineIndex
	data []byte
	off  int
	// members and elems are stacks the containers being built share, so
	// that each container gets a slice of exactly its length.
	members []Member
	elems   []*Node
	// keys interns object keys: the same few field names repeat in every
	// entry of a configuration.
	keys map[string]string
	// stub is the path of keys to the object whose object members are not
	// built (ParseJSONShallow); at is how many of its keys lead to the
	// value being built, -1 when it is off that path.
	stub []string
	fold bool // the keys of stub compare case-insensitively
	at   int
	// overflow is set when a number of a value not built holds no
	// float64 (what overflowsFloat64 finds in the values built).
	overflow bool
	// line is the line of the last position looked up (LineIndex.locFrom).
	line int
}

// loc is the position of byte offset off, which is past the last one's.
func (b *builder) loc(off int) Loc { return b.ix.locFrom(off, &b.line) }

// maxInternedKeys bounds the interning map: server names are unique, field
// names few.
const maxInternedKeys = 512

func (b *builder) space() {
	for b.off < len(b.data) {
		switch b.data[b.off] {
		case ' ', '\t', '\n', '\r':
			b.off++
		default:
			return
		}
	}
}

func (b *builder) value() *Node {
	b.space()
	start := b.off
	n := b.valueAt(start)
	n.Start, n.End = int32(start), int32(b.off)
	return n
}

// valueAt builds the value that starts at start.
func (b *builder) valueAt(start int) *Node {
	pos := b.loc(start)
	if start >= len(b.data) {
		return &Node{Kind: Null, Loc: pos} // cannot happen: data is valid
	}
	switch b.data[start] {
	case '{':
		return b.object(pos)
	case '[':
		return b.array(pos)
	case '"':
		return &Node{Kind: String, Loc: pos, Text: b.str(), TextOffset: 1}
	case 't':
		b.off += len("true")
		return &Node{Kind: Bool, Loc: pos, Bool: true}
	case 'f':
		b.off += len("false")
		return &Node{Kind: Bool, Loc: pos}
	case 'n':
		b.off += len("null")
		return &Node{Kind: Null, Loc: pos}
	}
	for b.off < len(b.data) && isNumberByte(b.data[b.off]) {
		b.off++
	}
	return &Node{Kind: Number, Loc: pos, Text: string(b.data[start:b.off])}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func (b *builder) object(pos Loc) *Node {
	b.off++ // {
	base := len(b.members)
	for {
		b.space()
		if b.off >= len(b.data) || b.data[b.off] == '}' {
			b.off++
			break
		}
		if b.data[b.off] == ',' {
			b.off++
			b.space()
		}
		keyPos := b.loc(b.off)
		key := b.key()
		b.space()
		b.off++ // :
		var v *Node
		at := b.at
		if b.space(); b.stub != nil && at == len(b.stub) && b.off < len(b.data) && b.data[b.off] == '{' {
			v = b.skipObject()
		} else {
			b.at = -1
			if at >= 0 && at < len(b.stub) && (key == b.stub[at] || b.fold && strings.EqualFold(key, b.stub[at])) {
				b.at = at + 1
			}
			v = b.value()
			b.at = at
		}
		b.members = append(b.members, Member{Key: key, KeyLoc: keyPos, Value: v})
	}
	n := &Node{Kind: Object, Loc: pos, Members: make([]Member, len(b.members)-base)}
	copy(n.Members, b.members[base:])
	clear(b.members[base:])
	b.members = b.members[:base]
	return n
}

func (b *builder) array(pos Loc) *Node {
	b.off++ // [
	base := len(b.elems)
	for {
		b.space()
		if b.off >= len(b.data) || b.data[b.off] == ']' {
			b.off++
			break
		}
		if b.data[b.off] == ',' {
			b.off++
		}
		at := b.at
		b.at = -1
		b.elems = append(b.elems, b.value())
		b.at = at
	}
	n := &Node{Kind: Array, Loc: pos, Elems: make([]*Node, len(b.elems)-base)}
	copy(n.Elems, b.elems[base:])
	clear(b.elems[base:])
	b.elems = b.elems[:base]
	return n
}

// skipObject moves past the object at b.off without building what is in
// it: a Node with its kind, position and byte span only, to be built with
// Source.Build when wanted. A number in it that no float64 holds sets
// overflow.
func (b *builder) skipObject() *Node {
	start := b.off
	n := &Node{Kind: Object, Loc: b.loc(start), Start: int32(start)}
	depth := 0
	for b.off < len(b.data) {
		// Only quotes, brackets and numbers matter here.
		for b.off < len(b.data) && !skipStop[b.data[b.off]] {
			b.off++
		}
		if b.off >= len(b.data) {
			break
		}
		c := b.data[b.off]
		switch {
		case c == '"':
			b.literal()
			continue
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				b.off++
				n.End = int32(b.off)
				return n
			}
		case c == '-' || c >= '0' && c <= '9':
			num := b.off
			for b.off < len(b.data) && isNumberByte(b.data[b.off]) {
				b.off++
			}
			if overflows(string(b.data[num:b.off])) {
				b.overflow = true
			}
			continue
		}
		b.off++
	}
	n.End = int32(b.off)
	return n
}

// skipStop marks the bytes skipObject looks at.
var skipStop = func() (t [256]bool) {
	for _, c := range []byte("\"{}[]-0123456789") {
		t[c] = true
	}
	return t
}()

// key reads an object key, interned.
func (b *builder) key() string {
	start := b.off
	raw, escaped := b.literal()
	if escaped {
		return decodeString(b.data[start:b.off])
	}
	if k, ok := b.keys[string(raw)]; ok {
		return k
	}
	k := string(raw)
	if len(b.keys) < maxInternedKeys {
		b.keys[k] = k
	}
	return k
}

// str reads a string value.
func (b *builder) str() string {
	start := b.off
	raw, escaped := b.literal()
	if escaped {
		return decodeString(b.data[start:b.off])
	}
	return string(raw)
}

// literal moves past the string literal at b.off and returns the bytes
// between its quotes and whether they hold an escape.
func (b *builder) literal() ([]byte, bool) {
	b.off++ // "
	start, escaped := b.off, false
	// A byte at a time: bytes.IndexAny made a set of the two bytes at
	// each call, for strings that are mostly a few bytes long.
	for b.off < len(b.data) {
		switch b.data[b.off] {
		case '"':
			b.off++
			return b.data[start : b.off-1], escaped
		case '\\':
			escaped = true
			b.off += 2 // \ and the escaped character (\uXXXX: its u)
		default:
			b.off++
		}
	}
	b.off = len(b.data)
	return b.data[start:], escaped
}

// decodeString decodes a string literal with escapes as encoding/json does.
func decodeString(lit []byte) string {
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return string(lit) // cannot happen: data is valid
	}
	return s
}
