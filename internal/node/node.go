// Package node is mcpc's positioned value tree: what every source (a JSON
// file, a JSONC file, the bound host configuration) becomes before the schema
// checks it. Each value and each object key remembers where it stands in the
// user's input, so every later diagnostic can point there.
//
// It imports only diag and rules (json-syntax).
package node

import (
	"strconv"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// Kind is the JSON kind of a Node.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Array:
		return "a list"
	case Object:
		return "an object"
	}
	return "unknown"
}

// Node is one value. Only the fields of its Kind are meaningful.
//
// Every value of every source is a Node, kept while its diagnostics and
// explanations may point into it: Kind, Bool, TextOffset and Start share a
// word, and its position is a 16-byte Loc, so that a Node takes 96 bytes with its
// byte span, not 128.
type Node struct {
	Kind Kind
	Bool bool
	// TextOffset is how many columns after Pos the text of a string starts
	// (1 for a quoted JSON string), so that a position inside the text can
	// be computed.
	TextOffset uint8
	// Start and End are the value's byte span in the parsed file (End
	// exclusive), for tools that edit the file in place or hide a value's
	// text; both are 0 for values that do not come from ParseJSON. An input
	// file is at most 16 MiB (inputfile.MaxSize): 32 bits hold any offset.
	Start, End int32
	// Loc is where the value starts: Pos() gives it as a diag.Pos.
	Loc     Loc
	Text    string // String: the decoded string; Number: the literal as written
	Elems   []*Node
	Members []Member // in input order
}

// Member is one key of an object, with the key's own position.
type Member struct {
	Key string
	// KeyLoc is where the key starts: KeyPos() gives it as a diag.Pos.
	KeyLoc Loc
	Value  *Node
}

// Pos is the position of the value in its source.
func (n *Node) Pos() diag.Pos { return n.Loc.Pos() }

// SetPos sets the position of the value.
func (n *Node) SetPos(p diag.Pos) { n.Loc = LocOf(p) }

// KeyPos is the position of the member's key in its source.
func (m Member) KeyPos() diag.Pos { return m.KeyLoc.Pos() }

// Get returns the value of the first member named key (exact match).
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := range n.Members {
		if n.Members[i].Key == key {
			return n.Members[i].Value
		}
	}
	return nil
}

// Member returns the first member named key (exact match).
func (n *Node) Member(key string) *Member {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := range n.Members {
		if n.Members[i].Key == key {
			return &n.Members[i]
		}
	}
	return nil
}

// Lookup follows a path of object keys and list indices ("0", "1", …).
// It returns the member (nil for list elements and the root) and the value.
func (n *Node) Lookup(path []string) (*Member, *Node) {
	var m *Member
	cur := n
	for _, p := range path {
		if cur == nil {
			return nil, nil
		}
		switch cur.Kind {
		case Object:
			m = cur.Member(p)
			if m == nil {
				return nil, nil
			}
			cur = m.Value
		case Array:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(cur.Elems) {
				return nil, nil
			}
			m = nil
			cur = cur.Elems[i]
		default:
			return nil, nil
		}
	}
	return m, cur
}

// Str builds a string node.
func Str(s string, pos diag.Pos) *Node { return &Node{Kind: String, Text: s, Loc: LocOf(pos)} }

// Describe names the kind of value n holds, for messages ("a string", "null").
func Describe(n *Node) string {
	if n == nil {
		return "nothing"
	}
	return n.Kind.String()
}
