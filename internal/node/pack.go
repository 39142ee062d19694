package node

import (
	"encoding/binary"
	"strings"
	"sync"
	"unique"
)

// Packed is a value tree in a compact encoding: every field of every Node
// and Member, positions as small deltas, in one string. A compilation keeps
// each server entry's tree packed once its checks have run (compile.Entry:
// its readers see one tree, built again at the first Node call and kept; a
// reader of every entry builds each in a Scratch and keeps none): without
// it a large compilation misses its memory target (docs/performance.md,
// "What the plan encoder and packed trees are for").
//
// Unpack gives a tree equal field for field to the one packed (nil and
// empty slices told apart), so that whatever reads it sees what it would
// have seen in the original.
//
// It is one string, with no pointer but its own: the names of the tree's
// files are written into it and interned again by Unpack.
type Packed struct {
	data string
}

// IsZero reports whether p holds no tree (Pack(nil), or the zero Packed).
func (p Packed) IsZero() bool { return p.data == "" }

// The flags of a node's header, after its kind (3 bits: Kind, or nilKind
// for a nil *Node).
const (
	kindBits    = 3
	nilKind     = 7
	flagBool    = 1 << kindBits
	flagText    = 2 << kindBits
	flagSpan    = 4 << kindBits
	flagOffset  = 8 << kindBits
	flagElems   = 16 << kindBits // Elems is not nil
	flagMembers = 32 << kindBits // Members is not nil
	flagLoc     = 64 << kindBits // Loc is not the zero Loc
)

// packer writes a tree; positions and offsets are written as the
// difference from the previous one, which is small in any file.
type packer struct {
	buf, head []byte
	files     []unique.Handle[string]
	nodes     int
	line, col int32
	start     int32
}

// packers keep their buffers from one Pack to the next: a compilation
// packs every server entry, and the string is then the one allocation.
var packers = sync.Pool{New: func() any { return &packer{buf: make([]byte, 0, 512), head: make([]byte, 0, 64)} }}

// Pack encodes the tree under n.
func Pack(n *Node) Packed {
	if n == nil {
		return Packed{}
	}
	p := packers.Get().(*packer)
	defer packers.Put(p)
	clear(p.files)
	p.buf, p.files, p.nodes, p.line, p.col, p.start = p.buf[:0], p.files[:0], 0, 0, 0, 0
	p.node(n)
	// The node count and the file names lead, so that Unpack allocates
	// the Nodes at once and interns each file name once.
	h := binary.AppendUvarint(p.head[:0], uint64(p.nodes))
	h = binary.AppendUvarint(h, uint64(len(p.files)))
	for _, f := range p.files {
		h = binary.AppendUvarint(h, uint64(len(f.Value())))
		h = append(h, f.Value()...)
	}
	p.head = h
	var out strings.Builder
	out.Grow(len(h) + len(p.buf))
	out.Write(h)
	out.Write(p.buf)
	return Packed{data: out.String()}
}

func (p *packer) uint(v uint64) { p.buf = binary.AppendUvarint(p.buf, v) }
func (p *packer) int(v int64)   { p.buf = binary.AppendVarint(p.buf, v) }

func (p *packer) str(s string) {
	p.uint(uint64(len(s)))
	p.buf = append(p.buf, s...)
}

// commonKeys are object keys that every server entry of the
// configurations mcpc reads repeats (settings.json's names and the host
// configuration's): a packed tree writes such a key as its index, which is
// much of what a packed server would take otherwise. A Packed lives in memory only,
// so the list may change freely.
var commonKeys = []string{
	"command", "args", "env", "cwd", "toolPrefix", "enabled", "parallel", "startupTimeoutSeconds",
	"callTimeoutSeconds", "idleTimeoutSeconds", "stderrLevel", "promptSection",
	"Command", "Args", "Env", "Cwd", "ToolPrefix", "Enabled", "Parallel", "StartupTimeoutSeconds",
	"CallTimeoutSeconds", "IdleTimeoutSeconds", "StderrLevel", "PromptSection",
}

// commonKey is the index of each of commonKeys.
var commonKey = func() map[string]int {
	m := make(map[string]int, len(commonKeys))
	for i, k := range commonKeys {
		m[k] = i
	}
	return m
}()

// key writes an object key: its index among commonKeys (odd) or its
// length (even) and bytes.
func (p *packer) key(k string) {
	if i, ok := commonKey[k]; ok {
		p.uint(uint64(i)<<1 | 1)
		return
	}
	p.uint(uint64(len(k)) << 1)
	p.buf = append(p.buf, k...)
}

// loc writes l: its file's index among the files of the tree, line and
// column as differences from the previous Loc written.
func (p *packer) loc(l Loc) {
	file := 0
	if l.file != (unique.Handle[string]{}) {
		for i, f := range p.files {
			if f == l.file {
				file = i + 1
				break
			}
		}
		if file == 0 {
			p.files = append(p.files, l.file)
			file = len(p.files)
		}
	}
	p.uint(uint64(file))
	p.int(int64(l.line) - int64(p.line))
	p.int(int64(l.col) - int64(p.col))
	p.line, p.col = l.line, l.col
}

func (p *packer) node(n *Node) {
	if n == nil {
		p.uint(nilKind)
		return
	}
	p.nodes++
	h := uint64(n.Kind)
	if n.Bool {
		h |= flagBool
	}
	if n.Text != "" {
		h |= flagText
	}
	if n.Start != 0 || n.End != 0 {
		h |= flagSpan
	}
	if n.TextOffset != 0 {
		h |= flagOffset
	}
	if n.Elems != nil {
		h |= flagElems
	}
	if n.Members != nil {
		h |= flagMembers
	}
	if n.Loc != (Loc{}) {
		h |= flagLoc
	}
	p.uint(h)
	if h&flagOffset != 0 {
		p.uint(uint64(n.TextOffset))
	}
	if h&flagSpan != 0 {
		p.int(int64(n.Start) - int64(p.start))
		p.int(int64(n.End) - int64(n.Start))
		p.start = n.Start
	}
	if h&flagLoc != 0 {
		p.loc(n.Loc)
	}
	if h&flagText != 0 {
		p.str(n.Text)
	}
	if h&flagElems != 0 {
		p.uint(uint64(len(n.Elems)))
		for _, el := range n.Elems {
			p.node(el)
		}
	}
	if h&flagMembers != 0 {
		p.uint(uint64(len(n.Members)))
		for _, m := range n.Members {
			p.key(m.Key)
			p.loc(m.KeyLoc)
			p.node(m.Value)
		}
	}
}

// unpacker reads what packer wrote.
type unpacker struct {
	data      string
	off       int
	files     []unique.Handle[string]
	nodes     []Node
	line, col int32
	start     int32
	// scratch, when set, gives the slices of the tree (Unpack with a
	// Scratch).
	scratch *Scratch
}

// Unpack builds the tree p holds again: a tree of new Nodes, equal to the
// one packed. The zero Packed gives nil.
func (p Packed) Unpack() *Node {
	return p.unpack(nil)
}

// Scratch is memory that Packed.UnpackInto builds trees in, again and
// again: reading the trees of many entries one after the other allocates
// nothing once it has grown to the largest.
type Scratch struct {
	nodes   []Node
	members []Member
	elems   []*Node
	files   []unique.Handle[string]
}

// UnpackInto is Unpack, building the tree in s: the tree is valid until
// the next call with s (its strings stay valid: they are p's).
func (p Packed) UnpackInto(s *Scratch) *Node {
	return p.unpack(s)
}

func (p Packed) unpack(s *Scratch) *Node {
	if p.data == "" {
		return nil
	}
	u := &unpacker{data: p.data, scratch: s}
	nodes, files := int(u.uint()), int(u.uint())
	if s == nil {
		u.nodes = make([]Node, nodes)
		u.files = make([]unique.Handle[string], files)
	} else {
		s.nodes = grow(s.nodes, nodes)
		clear(s.nodes)
		s.files = grow(s.files, files)
		s.members, s.elems = s.members[:0], s.elems[:0]
		u.nodes, u.files = s.nodes, s.files
	}
	for i := range u.files {
		u.files[i] = unique.Make(u.str())
	}
	return u.node()
}

// grow returns a slice of n elements, s's array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// take returns n elements of the scratch slice *s from its end, growing it
// (a new array: the elements taken before stay where they are) when full.
func take[T any](s *[]T, n int) []T {
	if *s == nil || len(*s)+n > cap(*s) {
		*s = make([]T, 0, max(2*cap(*s), n, 64))
	}
	start := len(*s)
	*s = (*s)[:start+n]
	out := (*s)[start : start+n : start+n]
	clear(out)
	return out
}

// uint reads what binary.AppendUvarint wrote (from the string, without a
// copy).
func (u *unpacker) uint() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := u.data[u.off]
		u.off++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
}

// int reads what binary.AppendVarint wrote.
func (u *unpacker) int() int64 {
	v := u.uint()
	x := int64(v >> 1)
	if v&1 != 0 {
		x = ^x
	}
	return x
}

func (u *unpacker) str() string {
	n := int(u.uint())
	s := u.data[u.off : u.off+n]
	u.off += n
	return s
}

// key reads what packer.key wrote.
func (u *unpacker) key() string {
	v := u.uint()
	if v&1 != 0 {
		return commonKeys[v>>1]
	}
	n := int(v >> 1)
	k := u.data[u.off : u.off+n]
	u.off += n
	return k
}

func (u *unpacker) loc() Loc {
	var l Loc
	if file := u.uint(); file > 0 {
		l.file = u.files[file-1]
	}
	u.line += int32(u.int())
	u.col += int32(u.int())
	l.line, l.col = u.line, u.col
	return l
}

func (u *unpacker) node() *Node {
	h := u.uint()
	if h&(1<<kindBits-1) == nilKind {
		return nil
	}
	n := &u.nodes[0]
	u.nodes = u.nodes[1:]
	n.Kind = Kind(h & (1<<kindBits - 1))
	n.Bool = h&flagBool != 0
	if h&flagOffset != 0 {
		n.TextOffset = uint8(u.uint())
	}
	if h&flagSpan != 0 {
		n.Start = u.start + int32(u.int())
		n.End = n.Start + int32(u.int())
		u.start = n.Start
	}
	if h&flagLoc != 0 {
		n.Loc = u.loc()
	}
	if h&flagText != 0 {
		n.Text = u.str()
	}
	if h&flagElems != 0 {
		if u.scratch != nil {
			n.Elems = take(&u.scratch.elems, int(u.uint()))
		} else {
			n.Elems = make([]*Node, u.uint())
		}
		for i := range n.Elems {
			n.Elems[i] = u.node()
		}
	}
	if h&flagMembers != 0 {
		if u.scratch != nil {
			n.Members = take(&u.scratch.members, int(u.uint()))
		} else {
			n.Members = make([]Member, u.uint())
		}
		for i := range n.Members {
			m := &n.Members[i]
			m.Key = u.key()
			m.KeyLoc = u.loc()
			m.Value = u.node()
		}
	}
	return n
}
