package policies

import (
	"bytes"
	"encoding/json"
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
	l []val
	o *obj
}

// obj is a struct: the plan's objects, and those the pack's struct
// literals build (which may embed another: base).
type obj struct {
	members []member
	base    *obj // an embedded struct; nil for the plan's objects
	partial bool // keys were dropped when the plan was read
}

type member struct {
	key string
	v   val
}

// get looks key up in o and what o embeds.
func (o *obj) get(key string) (val, bool) {
	for x := o; x != nil; x = x.base {
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
// name. It returns false on anything it does not read exactly as CUE's JSON
// extraction does (a repeated key, invalid JSON): CUE then decides.
type planReader struct {
	data  []byte
	i     int
	names map[string]string // the names the pack mentions (each its own value)
	whole map[string]bool   // keys whose object keeps every key
	bad   bool
	// members and elems are stacks the values being read are collected
	// on, each copied into a slice of its exact size when complete.
	members []member
	elems   []val
}

func readPlan(data []byte, names map[string]string, whole map[string]bool) (val, bool) {
	r := &planReader{data: data, names: names, whole: whole}
	v := r.value(false)
	r.space()
	if r.bad || r.i != len(r.data) {
		return val{}, false
	}
	return v, true
}

func (r *planReader) space() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// value reads one value; keepAll keeps every key of an object.
func (r *planReader) value(keepAll bool) val {
	r.space()
	if r.i >= len(r.data) {
		r.bad = true
		return val{}
	}
	switch c := r.data[r.i]; {
	case c == '{':
		return r.object(keepAll)
	case c == '[':
		r.i++
		r.space()
		if r.i < len(r.data) && r.data[r.i] == ']' {
			r.i++
			return val{k: kList, l: []val{}}
		}
		start := len(r.elems)
		defer func() { r.elems = r.elems[:start] }()
		for !r.bad {
			v := r.value(false)
			r.elems = append(r.elems, v)
			r.space()
			if r.i >= len(r.data) {
				r.bad = true
				break
			}
			if r.data[r.i] == ',' {
				r.i++
				continue
			}
			if r.data[r.i] == ']' {
				r.i++
				break
			}
			r.bad = true
		}
		return val{k: kList, l: slices.Clone(r.elems[start:])}
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
	if r.i < len(r.data) && r.data[r.i] == '}' {
		r.i++
		return val{k: kObj, o: o}
	}
	var all [][]byte // every key, kept or not, for the check of repeated keys
	var seen map[string]bool
	start := len(r.members)
	defer func() { r.members = r.members[:start] }()
	for !r.bad {
		r.space()
		if r.i >= len(r.data) || r.data[r.i] != '"' {
			r.bad = true
			break
		}
		raw, ok := r.str()
		if !ok {
			break
		}
		if len(all) < 16 {
			for _, k := range all {
				if bytes.Equal(k, raw) {
					r.bad = true // CUE unifies a repeated key's values
				}
			}
			all = append(all, raw)
		} else {
			if seen == nil {
				seen = map[string]bool{}
				for _, k := range all {
					seen[string(k)] = true
				}
			}
			if seen[string(raw)] {
				r.bad = true
			}
			seen[string(raw)] = true
		}
		name, named := r.names[string(raw)]
		r.space()
		if r.i >= len(r.data) || r.data[r.i] != ':' {
			r.bad = true
			break
		}
		r.i++
		switch {
		case named:
			v := r.value(r.whole[name])
			r.members = append(r.members, member{name, v})
		case keepAll:
			key := string(raw)
			v := r.value(false)
			r.members = append(r.members, member{key, v})
		default:
			o.partial = true
			r.skip()
		}
		r.space()
		if r.i >= len(r.data) {
			r.bad = true
			break
		}
		if r.data[r.i] == ',' {
			r.i++
			continue
		}
		if r.data[r.i] == '}' {
			r.i++
			break
		}
		r.bad = true
	}
	o.members = slices.Clone(r.members[start:])
	return val{k: kObj, o: o}
}

func (r *planReader) lit(word string) bool {
	if len(r.data)-r.i >= len(word) && string(r.data[r.i:r.i+len(word)]) == word {
		r.i += len(word)
		return true
	}
	return false
}

// str reads a string and returns its bytes, decoded (a fresh slice) when
// the literal has escapes.
func (r *planReader) str() ([]byte, bool) {
	start := r.i
	r.i++
	escaped := false
	for r.i < len(r.data) {
		c := r.data[r.i]
		switch {
		case c == '\\':
			escaped = true
			r.i += 2
			continue
		case c == '"':
			r.i++
			lit := r.data[start:r.i]
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
		case c < 0x20:
			r.bad = true
			return nil, false
		}
		r.i++
	}
	r.bad = true
	return nil, false
}

// number reads a number: an integer when it is written as one (CUE's
// JSON extraction makes 1.0 and 1e3 floats) and fits 64 bits.
func (r *planReader) number() val {
	start := r.i
	for r.i < len(r.data) && strings.IndexByte("0123456789-+.eE", r.data[r.i]) >= 0 {
		r.i++
	}
	text := string(r.data[start:r.i])
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
	if r.i >= len(r.data) {
		r.bad = true
		return
	}
	switch c := r.data[r.i]; {
	case c == '"':
		r.str()
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		r.i++
		r.space()
		if r.i < len(r.data) && r.data[r.i] == end {
			r.i++
			return
		}
		for !r.bad {
			if c == '{' {
				r.space()
				if r.i >= len(r.data) || r.data[r.i] != '"' {
					r.bad = true
					return
				}
				r.str()
				r.space()
				if r.i >= len(r.data) || r.data[r.i] != ':' {
					r.bad = true
					return
				}
				r.i++
			}
			r.skip()
			r.space()
			switch {
			case r.i >= len(r.data):
				r.bad = true
			case r.data[r.i] == ',':
				r.i++
			case r.data[r.i] == end:
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
