package policies

import (
	"encoding/json"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The plan as the fast path reads it (fastpath.go): the canonical JSON,
// decoded into values, keeping of each object only the keys whose names the
// pack mentions (its identifiers, labels and strings). A key the pack never
// names cannot be read by name; an object that lost keys is partial, and
// whatever needs all of its keys (iterating it, a key computed at run time
// that was dropped) leaves the rule to CUE. The objects under a key the pack
// iterates (for k, v in s.env) keep every key.

// kind is the kind of a value of the fast path.
type kind uint8

const (
	kNull kind = iota
	kBool
	kInt
	kFloat // kept as written; the fast path computes nothing with it
	kStr
	kList
	kObj
)

// val is one value: of the plan, of the pack, or computed.
type val struct {
	k kind
	b bool
	n int64
	s string // kStr; kFloat: the literal
	l *[]val // kList (a pointer: a plan holds many values, few of them lists)
	o *obj
}

func listOf(l []val) val { return val{k: kList, l: &l} }

// elems are a list's elements.
func (v val) elems() []val {
	if v.l == nil {
		return nil
	}
	return *v.l
}

// obj is a struct: the plan's objects, and those the pack's struct
// literals build (which may embed another: base).
type obj struct {
	members []member
	base    *obj // an embedded struct; nil for the plan's objects
	partial bool // keys were dropped when the plan was read
	// sv is the Go struct this is a view of (planview.go), whose fields
	// are read when asked for; members is then empty.
	sv *structView
}

type member struct {
	key string
	v   val
}

// get looks key up in o and what o embeds.
func (o *obj) get(key string) (val, bool) {
	for x := o; x != nil; x = x.base {
		if x.sv != nil {
			if v, ok := x.viewGet(key); ok {
				return v, true
			}
			continue
		}
		for i := range x.members {
			if x.members[i].key == key {
				return x.members[i].v, true
			}
		}
	}
	return val{}, false
}

// maybeDropped reports whether key may be missing from o only because the
// plan was read without it.
func (o *obj) maybeDropped(key string, names map[string]string) bool {
	if _, named := names[key]; named {
		return false
	}
	for x := o; x != nil; x = x.base {
		if x.partial {
			return true
		}
	}
	return false
}

// planReader decodes JSON into vals, dropping the keys the pack does not
// name. It reads from src through a window of data: the plan is never whole
// in memory (lint streams it from the plan's writer). It reports bad on
// anything it does not read exactly as CUE's JSON extraction does (a
// repeated key, invalid JSON, invalid UTF-8): CUE then decides.
type planReader struct {
	src   io.Reader
	data  []byte // the window: data[i] is the next byte
	i     int
	mark  int // the start of the token being read (kept across a refill); -1: none
	eof   bool
	names map[string]string // the names the pack mentions (each its own value)
	whole map[string]bool   // keys whose object keeps every key
	all   bool              // keep every key of every object
	bad   bool
	// members and elems are stacks the values being read are collected
	// on, each copied into a slice of its exact size when complete.
	members []member
	elems   []val
}

var keySeed = maphash.MakeSeed()

func readPlan(src io.Reader, names map[string]string, whole map[string]bool) (val, bool) {
	r := &planReader{src: src, data: make([]byte, 0, 64<<10), mark: -1, names: names, whole: whole}
	v := r.value(false)
	r.space()
	if _, more := r.peek(); r.bad || more {
		return val{}, false
	}
	return v, true
}

// fill reads more of src into the window, keeping the token being read.
func (r *planReader) fill() bool {
	if r.eof {
		return false
	}
	keep := r.i
	if r.mark >= 0 && r.mark < keep {
		keep = r.mark
	}
	n := copy(r.data, r.data[keep:])
	r.data = r.data[:n]
	r.i -= keep
	if r.mark >= 0 {
		r.mark -= keep
	}
	if len(r.data) == cap(r.data) {
		r.data = slices.Grow(r.data, cap(r.data))
	}
	m, err := r.src.Read(r.data[len(r.data):cap(r.data)])
	r.data = r.data[:len(r.data)+m]
	if err != nil {
		r.eof = true
		if err != io.EOF {
			r.bad = true
		}
	}
	return m > 0 || !r.eof
}

// peek is the next byte; false at the end of the input.
func (r *planReader) peek() (byte, bool) {
	for r.i >= len(r.data) {
		if !r.fill() {
			return 0, false
		}
	}
	return r.data[r.i], true
}

// at reports whether the next byte is c.
func (r *planReader) at(c byte) bool {
	b, ok := r.peek()
	return ok && b == c
}

func (r *planReader) space() {
	for {
		c, ok := r.peek()
		if !ok || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return
		}
		r.i++
	}
}

// value reads one value; keepAll keeps every key of an object.
func (r *planReader) value(keepAll bool) val {
	r.space()
	c, ok := r.peek()
	if !ok {
		r.bad = true
		return val{}
	}
	switch {
	case c == '{':
		return r.object(keepAll)
	case c == '[':
		r.i++
		r.space()
		if r.at(']') {
			r.i++
			return listOf([]val{})
		}
		start := len(r.elems)
		defer func() { r.elems = r.elems[:start] }()
		for !r.bad {
			v := r.value(false)
			r.elems = append(r.elems, v)
			r.space()
			switch {
			case r.at(','):
				r.i++
				continue
			case r.at(']'):
				r.i++
			default:
				r.bad = true
			}
			break
		}
		return listOf(slices.Clone(r.elems[start:]))
	case c == '"':
		b, _ := r.str()
		return val{k: kStr, s: string(b)}
	case r.lit("true"):
		return val{k: kBool, b: true}
	case r.lit("false"):
		return val{k: kBool}
	case r.lit("null"):
		return val{k: kNull}
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	}
	r.bad = true
	return val{}
}

func (r *planReader) object(keepAll bool) val {
	r.i++
	o := &obj{}
	r.space()
	if r.at('}') {
		r.i++
		return val{k: kObj, o: o}
	}
	// The hashes of every key, kept or not, for the check of repeated
	// keys (a collision leaves the plan to CUE, as a repeated key does).
	var all []uint64
	var seen map[uint64]bool
	start := len(r.members)
	defer func() { r.members = r.members[:start] }()
	for !r.bad {
		r.space()
		if !r.at('"') {
			r.bad = true
			break
		}
		raw, ok := r.str()
		if !ok {
			break
		}
		name, named := r.names[string(raw)]
		h := maphash.Bytes(keySeed, raw)
		if len(all) < 16 {
			if slices.Contains(all, h) {
				r.bad = true // CUE unifies a repeated key's values
			}
			all = append(all, h)
		} else {
			if seen == nil {
				seen = map[uint64]bool{}
				for _, k := range all {
					seen[k] = true
				}
			}
			if seen[h] {
				r.bad = true
			}
			seen[h] = true
		}
		key := name
		if !named && (keepAll || r.all) {
			key = string(raw)
		}
		r.space()
		if !r.at(':') {
			r.bad = true
			break
		}
		r.i++
		switch {
		case named:
			v := r.value(r.whole[name])
			r.members = append(r.members, member{name, v})
		case keepAll || r.all:
			v := r.value(false)
			r.members = append(r.members, member{key, v})
		default:
			o.partial = true
			r.skip()
		}
		r.space()
		switch {
		case r.at(','):
			r.i++
			continue
		case r.at('}'):
			r.i++
		default:
			r.bad = true
		}
		break
	}
	o.members = slices.Clone(r.members[start:])
	return val{k: kObj, o: o}
}

func (r *planReader) lit(word string) bool {
	for len(r.data)-r.i < len(word) {
		if !r.fill() {
			return false
		}
	}
	if string(r.data[r.i:r.i+len(word)]) == word {
		r.i += len(word)
		return true
	}
	return false
}

// str reads a string and returns its bytes (valid until the next read),
// decoded when the literal has escapes.
func (r *planReader) str() ([]byte, bool) {
	r.mark = r.i
	defer func() { r.mark = -1 }()
	r.i++
	escaped := false
	for {
		c, ok := r.peek()
		switch {
		case !ok || c < 0x20:
			r.bad = true
			return nil, false
		case c == '\\':
			escaped = true
			r.i++
			if _, ok := r.peek(); !ok {
				r.bad = true
				return nil, false
			}
		case c == '"':
			r.i++
			lit := r.data[r.mark:r.i]
			if !escaped {
				if !utf8.Valid(lit) {
					r.bad = true // encoding/json would write U+FFFD
					return nil, false
				}
				return lit[1 : len(lit)-1], true
			}
			var s string
			if err := json.Unmarshal(lit, &s); err != nil || !utf8.ValidString(s) {
				r.bad = true
				return nil, false
			}
			return []byte(s), true
		}
		r.i++
	}
}

// number reads a number: an integer when it is written as one (CUE's
// JSON extraction makes 1.0 and 1e3 floats) and fits 64 bits.
func (r *planReader) number() val {
	r.mark = r.i
	defer func() { r.mark = -1 }()
	for {
		c, ok := r.peek()
		if !ok || strings.IndexByte("0123456789-+.eE", c) < 0 {
			break
		}
		r.i++
	}
	text := string(r.data[r.mark:r.i])
	digits := strings.TrimPrefix(text, "-")
	if digits != "" && strings.Trim(digits, "0123456789") == "" && (digits == "0" || digits[0] != '0') && text != "-0" {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return val{k: kInt, n: n}
		}
	}
	if !json.Valid([]byte(text)) {
		r.bad = true
	}
	return val{k: kFloat, s: text}
}

// skip passes over one value without keeping it, checking it as strictly
// as the values it keeps.
func (r *planReader) skip() {
	r.space()
	c, ok := r.peek()
	if !ok {
		r.bad = true
		return
	}
	switch {
	case c == '"':
		r.str()
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		r.i++
		r.space()
		if r.at(end) {
			r.i++
			return
		}
		for !r.bad {
			if c == '{' {
				r.space()
				if !r.at('"') {
					r.bad = true
					return
				}
				r.str()
				r.space()
				if !r.at(':') {
					r.bad = true
					return
				}
				r.i++
			}
			r.skip()
			r.space()
			switch {
			case r.at(','):
				r.i++
			case r.at(end):
				r.i++
				return
			default:
				r.bad = true
			}
		}
	case r.lit("true"), r.lit("false"), r.lit("null"):
	case c == '-' || (c >= '0' && c <= '9'):
		r.number()
	default:
		r.bad = true
	}
}
