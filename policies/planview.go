package policies

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// The plan as the fast path sees it when the compiler's value is at hand: a
// view of the Go value as encoding/json writes it (a volcanic plan's
// canonical JSON is that), read field by field when a rule reads it. Nothing
// is copied: a plan of 50 000 servers is not held a second time, as values,
// while the packs run. Whatever encoding/json would write in a way the view
// does not model (a MarshalJSON method, an embedded struct, a float, invalid
// UTF-8, a ",string" field) is opaque, and a rule that reads it is left to
// CUE. TestPlanViewIsTheCanonicalJSON holds the view to the plan's bytes.

// kOpaque is a value of the view the fast path does not compute with.
const kOpaque kind = 255

// viewType is how encoding/json writes a struct type: its fields in order.
type viewType struct {
	names  []string
	fields []viewField
	index  map[string]int // names' positions
	ok     bool
}

type viewField struct {
	index     int
	omitEmpty bool
	// opaque: the field's type is (viewOf asks it of every value read);
	// dynamic: an interface, whose value's type is asked instead.
	opaque, dynamic bool
}

var (
	viewTypes      sync.Map // reflect.Type → *viewType
	marshalerType  = reflect.TypeFor[json.Marshaler]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
	jsonNameLetter = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)

func typeOf(t reflect.Type) *viewType {
	if vt, ok := viewTypes.Load(t); ok {
		return vt.(*viewType)
	}
	vt := &viewType{ok: true, index: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			vt.ok = false // encoding/json promotes its fields
			break
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if strings.Trim(name, jsonNameLetter) != "" || slices.Contains(vt.names, name) {
			vt.ok = false
			break
		}
		omit := false
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				omit = true
			case "":
			default:
				vt.ok = false // ,string, omitzero: not modelled
			}
		}
		vt.index[name] = len(vt.names)
		vt.names = append(vt.names, name)
		vt.fields = append(vt.fields, viewField{index: i, omitEmpty: omit, opaque: opaque(f.Type), dynamic: f.Type.Kind() == reflect.Interface})
	}
	viewTypes.Store(t, vt)
	return vt
}

// opaque: a type encoding/json writes by a method of its own. Remembered
// by type: the view asks it of every value a rule reads.
func opaque(t reflect.Type) bool {
	if o, ok := opaqueTypes.Load(t); ok {
		return o.(bool)
	}
	o := t.Implements(marshalerType) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshaler)
	opaqueTypes.Store(t, o)
	return o
}

var opaqueTypes sync.Map // reflect.Type → bool

// structView is what an obj that views a Go struct reads it through.
type structView struct {
	v  reflect.Value
	vt *viewType // v's type
	// memo, when set (the plan's root), keeps the view's fields once read:
	// the packs of one lint read the same servers.
	memo map[string]val
}

// viewObj is an obj and its view, allocated together.
type viewObj struct {
	o  obj
	sv structView
}

func (x *viewObj) of(v reflect.Value, vt *viewType) val {
	x.sv = structView{v: v, vt: vt}
	x.o.sv = &x.sv
	return val{k: kObj, o: &x.o}
}

// viewOf is v as the fast path reads it.
func viewOf(v reflect.Value) val {
	if !v.IsValid() {
		return val{k: kNull}
	}
	if opaque(v.Type()) {
		return val{k: kOpaque}
	}
	return viewOfClear(v)
}

// viewOfClear is viewOf of a value whose type is known not to be opaque.
func viewOfClear(v reflect.Value) val {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return val{k: kOpaque} // encoding/json writes U+FFFD for each bad byte
		}
		return val{k: kStr, s: s}
	case reflect.Bool:
		return val{k: kBool, b: v.Bool()}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return val{k: kInt, n: v.Int()}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := v.Uint(); u <= 1<<63-1 {
			return val{k: kInt, n: int64(u)}
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return val{k: kNull}
		}
		return viewOf(v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			return val{k: kNull}
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			break // base64
		}
		fallthrough
	case reflect.Array:
		l := make([]val, v.Len())
		if et := v.Type().Elem(); et.Kind() == reflect.Struct && !opaque(et) && typeOf(et).ok {
			// The views of a list of structs (the servers) in one allocation.
			vt, objs := typeOf(et), make([]viewObj, len(l))
			for i := range l {
				l[i] = objs[i].of(v.Index(i), vt)
			}
			return listOf(l)
		}
		for i := range l {
			l[i] = viewOf(v.Index(i))
		}
		return listOf(l)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || opaque(v.Type().Key()) {
			break
		}
		if v.IsNil() {
			return val{k: kNull}
		}
		if v.Type() == envMapType && v.CanInterface() {
			return viewOfEnv(v.Interface().(map[string]*string)) // a server's env: no reflection
		}
		// The keys read through one scratch value (MapKeys copies each).
		o := &obj{members: make([]member, 0, v.Len())}
		key := reflect.New(v.Type().Key()).Elem()
		for it := v.MapRange(); it.Next(); {
			key.SetIterKey(it)
			k := key.String()
			if !utf8.ValidString(k) {
				return val{k: kOpaque}
			}
			o.members = append(o.members, member{k, viewOf(it.Value())})
		}
		slices.SortFunc(o.members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		return val{k: kObj, o: o}
	case reflect.Struct:
		vt := typeOf(v.Type())
		if !vt.ok {
			break
		}
		return new(viewObj).of(v, vt)
	}
	return val{k: kOpaque}
}

var envMapType = reflect.TypeFor[map[string]*string]()

// viewOfEnv is viewOf of a map[string]*string.
func viewOfEnv(m map[string]*string) val {
	o := &obj{members: make([]member, 0, len(m))}
	for k, p := range m {
		if !utf8.ValidString(k) {
			return val{k: kOpaque}
		}
		v := val{k: kNull}
		if p != nil {
			if !utf8.ValidString(*p) {
				v = val{k: kOpaque}
			} else {
				v = val{k: kStr, s: *p}
			}
		}
		o.members = append(o.members, member{k, v})
	}
	slices.SortFunc(o.members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	return val{k: kObj, o: o}
}

// viewGet is the field of a struct's view that encoding/json writes as key.
func (o *obj) viewGet(key string) (val, bool) {
	if v, ok := o.sv.memo[key]; ok {
		return v, true
	}
	v, ok := o.viewField(key)
	if ok && o.sv.memo != nil {
		o.sv.memo[key] = v
	}
	return v, ok
}

func (o *obj) viewField(key string) (val, bool) {
	vt := o.sv.vt
	i, ok := vt.index[key]
	if !ok {
		return val{}, false
	}
	vf := &vt.fields[i]
	f := o.sv.v.Field(vf.index)
	if vf.omitEmpty && emptyValue(f) {
		return val{}, false
	}
	switch {
	case vf.dynamic:
		return viewOf(f), true
	case vf.opaque:
		return val{k: kOpaque}, true
	}
	return viewOfClear(f), true
}

// viewMembers are the fields of a struct's view, in the order written.
func (o *obj) viewMembers() []member {
	vt := o.sv.vt
	var out []member
	for _, name := range vt.names {
		if v, ok := o.viewGet(name); ok {
			out = append(out, member{name, v})
		}
	}
	return out
}

// emptyValue is encoding/json's test for omitempty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
