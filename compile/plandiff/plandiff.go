// Package plandiff compares two launch plans of one profile and says what
// a running runtime would have to do to go from the first to the second:
// per server, connect, disconnect, restart, re-register its tools, update a
// setting in place, or nothing; and the fields that changed, old → new,
// with secrets redacted. `mcpc diff` prints it for a reviewer; a runtime
// that reloads its plan acts on the same value.
//
// It serves mcpc's own commands, not embedders: its API may change
// (docs/decisions/0002-package-layout-and-import-direction.md).
package plandiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mcpc-dev/mcpc/compile/plan"
)

// Effect is what a change makes a running runtime do. The effects of
// field changes are ordered: a server's effect is the strongest of its
// fields' (Restart covers Reregister, which covers Update).
type Effect int

// The effects, weakest first.
const (
	// None: nothing runs differently (the definition moved in its file).
	None Effect = iota
	// Update: the runtime takes the new value in place; running processes
	// and connections stay, the next call (or start) uses it.
	Update
	// Reregister: the tools' agent-visible names, action set or
	// descriptions change: the runtime registers the server's tools again
	// (from the tool list it has) and tells clients the list changed.
	Reregister
	// Restart: how the server is started or reached changed: its running
	// processes or connections stop, the next use starts anew, and its
	// tools are discovered and registered again.
	Restart
	// Connect: a server that was not there, or was disabled, is to be
	// served.
	Connect
	// Disconnect: a server removed or disabled: its processes stop and its
	// tools go before the next call can reach them.
	Disconnect
)

var effectNames = [...]string{"nothing", "update", "reregister", "restart", "connect", "disconnect"}

func (e Effect) String() string {
	if e < 0 || int(e) >= len(effectNames) {
		return fmt.Sprintf("Effect(%d)", int(e))
	}
	return effectNames[e]
}

// MarshalText writes the effect's name (JSON output).
func (e Effect) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// Kind is how a server differs between the two plans.
type Kind string

// The kinds of server difference.
const (
	Added    Kind = "added"    // only in the new plan
	Removed  Kind = "removed"  // only in the old plan
	Enabled  Kind = "enabled"  // disabled in the old plan, enabled in the new one
	Disabled Kind = "disabled" // enabled in the old plan, disabled in the new one
	Changed  Kind = "changed"  // in both, enabled or not alike, some field differs
)

// Change is one field that differs. Old and New are the values as output
// may show them (JSON; an env value that is not a template is "[REDACTED]");
// a side where the field is absent (an env key set on one side only) is
// nil.
type Change struct {
	Effect Effect          `json:"effect"`
	Field  string          `json:"field"` // a server field, env.KEY, or a field of the plan
	New    json.RawMessage `json:"new,omitempty"`
	Old    json.RawMessage `json:"old,omitempty"`
	// Via is set for an env.KEY whose plan value is alike on both sides
	// while the value the process starts with is not (Launches): the
	// references it is resolved from (${config:KEY}, ${env:NAME}), or
	// ViaHost for a variable the server inherits. Old and New are then
	// [REDACTED], or absent on a side without the variable.
	Via string `json:"via,omitempty"`
}

// ViaHost is the Via of a variable a server inherits from the host
// environment.
const ViaHost = "host environment"

// Server is one server that differs between the plans.
type Server struct {
	// Change is how it differs; Effect what a runtime does about it:
	// Connect for Added and Enabled, Disconnect for Removed and Disabled,
	// the strongest effect of its Fields for Changed — None when the
	// server is disabled on both sides, since nothing of it runs.
	Change Kind   `json:"change"`
	Effect Effect `json:"effect"`
	// Fields are the fields that differ, by name (env keys as env.KEY),
	// also for an enabled or disabled server; none for an added or removed
	// one. Where a server is written (origin) is never one.
	Fields []Change `json:"fields"`
	Name   string   `json:"name"`
	// Origin is where the server is defined: in the new plan, or in the
	// old one for a removed server.
	Origin plan.Origin `json:"origin"`
	// Old and New are the server in each plan (nil where it is absent);
	// they point into the plans given to Compare.
	Old *plan.Server `json:"-"`
	New *plan.Server `json:"-"`
}

// Diff is what differs between two plans of one profile.
type Diff struct {
	// Plan are the plan's own fields that differ: autoConnect (craftbot,
	// Update), and, with effect None, sources, shadowed and skipped (what
	// the compiler read, dropped or skipped; the servers that result are
	// compared one by one).
	Plan    []Change `json:"plan"`
	Profile string   `json:"profile"`
	// Servers differ, sorted by name.
	Servers []Server `json:"servers"`
	// Unchanged counts the servers alike in both plans; Moved those of
	// them written elsewhere (an entry inserted above them): where a server
	// is written is not a change of it (the fields table).
	Unchanged int `json:"unchanged"`
	Moved     int `json:"moved"`
	// NotCompared says, sorted, why the values some servers start with
	// could not be compared (Launches.Unknown, a launch that fails);
	// Uncompared counts the servers alike in both plans whose env refers
	// to such values: they are not counted unchanged.
	NotCompared []string `json:"notCompared"`
	Uncompared  int      `json:"uncompared"`
}

// Empty reports whether the plans are alike in everything Compare looks at
// (the digest, sources' order and the like aside), and it could look at
// every value a server starts with.
func (d *Diff) Empty() bool {
	return len(d.Plan) == 0 && len(d.Servers) == 0 && len(d.NotCompared) == 0
}

// Changed reports whether a runtime would do anything: some change has an
// effect other than None. Two plans whose definitions only moved are not
// changed (`mcpc diff --exit-code` exits 0), nor are values that could not
// be compared (NotCompared): the diff does not know they changed.
func (d *Diff) Changed() bool {
	for _, c := range d.Plan {
		if c.Effect != None {
			return true
		}
	}
	for _, s := range d.Servers {
		if s.Effect != None {
			return true
		}
	}
	return false
}

// Compare compares two plans. Plans of two profiles do not compare (their
// servers are started by different hosts): that is an error.
func Compare(old, new *plan.Plan) (*Diff, error) { return CompareLaunches(old, new, Launches{}) }

// CompareLaunches compares two plans and, with l, the values their stdio
// servers start with where the plans only name them.
func CompareLaunches(old, new *plan.Plan, l Launches) (*Diff, error) {
	if old.Profile != new.Profile {
		return nil, fmt.Errorf("a %s plan and a %s plan do not compare: both must be of one profile", old.Profile, new.Profile)
	}
	d := &Diff{Profile: new.Profile, Plan: planChanges(old, new), Servers: []Server{}, NotCompared: []string{}}
	notCompared := map[string]bool{}
	oldByName, newByName := byName(old), byName(new)
	for _, name := range names(oldByName, newByName) {
		o, n := oldByName[name], newByName[name]
		s := Server{Name: name, Old: o, New: n, Fields: []Change{}}
		switch {
		case n == nil:
			s.Change, s.Effect, s.Origin = Removed, Disconnect, o.Origin
		case o == nil:
			s.Change, s.Effect, s.Origin = Added, Connect, n.Origin
		default:
			var moved bool
			s.Origin = n.Origin
			s.Fields, moved = serverChanges(o, n)
			launched, why := l.changes(o, n, s.Fields)
			if len(launched) > 0 {
				s.Fields = append(s.Fields, launched...)
				sort.SliceStable(s.Fields, func(i, j int) bool { return s.Fields[i].Field < s.Fields[j].Field })
			}
			if why != "" {
				notCompared[why] = true
			}
			switch {
			case !o.Enabled && n.Enabled:
				s.Change, s.Effect = Enabled, Connect
			case o.Enabled && !n.Enabled:
				s.Change, s.Effect = Disabled, Disconnect
			case len(s.Fields) == 0 && why != "":
				d.Uncompared++
				continue
			case len(s.Fields) == 0:
				d.Unchanged++
				if moved {
					d.Moved++
				}
				continue
			default:
				s.Change = Changed
				if n.Enabled {
					s.Effect = strongest(s.Fields)
				}
			}
		}
		d.Servers = append(d.Servers, s)
	}
	for why := range notCompared {
		d.NotCompared = append(d.NotCompared, why)
	}
	sort.Strings(d.NotCompared)
	return d, nil
}

func byName(p *plan.Plan) map[string]*plan.Server {
	m := make(map[string]*plan.Server, len(p.Servers))
	for i := range p.Servers {
		if _, dup := m[p.Servers[i].Name]; !dup {
			m[p.Servers[i].Name] = &p.Servers[i]
		}
	}
	return m
}

// names are the server names of both plans, sorted.
func names(a, b map[string]*plan.Server) []string {
	var out []string
	for n := range a {
		out = append(out, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func strongest(cs []Change) Effect {
	e := None
	for _, c := range cs {
		e = max(e, c.Effect)
	}
	return e
}

// serverChanges are the fields of the fields table that differ, env key by
// key, sorted by field name; moved reports whether a field that only
// locates the server differs (it is not a change).
func serverChanges(o, n *plan.Server) (out []Change, moved bool) {
	out = []Change{}
	for _, f := range fields {
		if f.name == "env" {
			out = append(out, envChanges(o.Env, n.Env, f.effect)...)
			continue
		}
		ov, nv := f.get(o), f.get(n)
		ob, nb := mustJSON(ov), mustJSON(nv)
		if bytes.Equal(ob, nb) {
			continue
		}
		if f.locates {
			moved = true
			continue
		}
		if f.show != nil {
			ob, nb = mustJSON(f.show(ov)), mustJSON(f.show(nv))
		}
		out = append(out, Change{Field: f.name, Old: ob, New: nb, Effect: f.effect})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out, moved
}

// envChanges compares two env maps key by key. A key set on one side only
// has no value on the other; null (the variable is removed) is a value.
func envChanges(o, n map[string]*string, effect Effect) []Change {
	keys := map[string]bool{}
	for k := range o {
		keys[k] = true
	}
	for k := range n {
		keys[k] = true
	}
	var out []Change
	for k := range keys {
		ov, inOld := o[k]
		nv, inNew := n[k]
		if inOld && inNew && sameEnvValue(ov, nv) {
			continue
		}
		c := Change{Field: "env." + k, Effect: effect}
		if inOld {
			c.Old = mustJSON(showEnv(ov))
		}
		if inNew {
			c.New = mustJSON(showEnv(nv))
		}
		out = append(out, c)
	}
	return out
}

func sameEnvValue(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// planChanges compares the plan's own fields.
func planChanges(old, new *plan.Plan) []Change {
	out := []Change{}
	add := func(field string, effect Effect, ov, nv any) {
		ob, nb := mustJSON(ov), mustJSON(nv)
		if !bytes.Equal(ob, nb) {
			out = append(out, Change{Field: field, Old: ob, New: nb, Effect: effect})
		}
	}
	add("autoConnect", autoConnectEffect, autoConnect(old), autoConnect(new))
	add("shadowed", None, nonNil(old.Shadowed), nonNil(new.Shadowed))
	add("skipped", None, nonNil(old.Skipped), nonNil(new.Skipped))
	add("sources", None, nonNil(old.Sources), nonNil(new.Sources))
	return out
}

// autoConnect is a plan's autoConnect; a volcanic plan has none.
func autoConnect(p *plan.Plan) any {
	if p.AutoConnect == nil {
		return nil
	}
	return *p.AutoConnect
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// mustJSON encodes a value of a plan (strings, numbers, lists, maps,
// Origin, the plan's structs): that cannot fail.
func mustJSON(v any) json.RawMessage {
	b, err := plan.CanonicalJSON(v)
	if err != nil {
		panic(fmt.Sprintf("plandiff: encoding a plan value: %v", err))
	}
	return json.RawMessage(bytes.TrimSpace(compact(b)))
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
