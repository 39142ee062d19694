package compile

import (
	"strconv"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// Locate maps a path into the plan (keys and list indices from its root, as
// policies report them: "servers", 2, "args", 1) to the place in the sources
// that set that value, so that a finding about the plan points where the
// operator fixes it. A value the sources did not write (a default, a value
// the preset computed) maps to the nearest enclosing value they did write,
// and at worst to where the server is defined; a path outside the servers
// maps to the first source.
func (r *Result) Locate(path []any) diag.Pos {
	fallback := r.firstSource()
	p := r.draft
	if r.Plan != nil {
		p = r.Plan
	}
	if p == nil || len(path) < 2 || path[0] != "servers" {
		return fallback
	}
	i, ok := path[1].(int)
	if !ok || i < 0 || i >= len(p.Servers) {
		return fallback
	}
	s := &p.Servers[i]
	e := r.winner(s.Name)
	origin := diag.Pos{File: s.Origin.Path, Line: s.Origin.Line, Column: s.Origin.Column}
	if origin.Line == 0 {
		origin = fallback
	}
	if e == nil {
		return origin
	}
	keys := make([]string, 0, len(path)-2)
	for _, step := range path[2:] {
		switch v := step.(type) {
		case string:
			keys = append(keys, v)
		case int:
			keys = append(keys, strconv.Itoa(v))
		default:
			return origin
		}
	}
	var tree *node.Node
	if r.winners != nil {
		r.winners.mu.Lock()
		defer r.winners.mu.Unlock()
		tree = e.NodeIn(&r.winners.scratch)
	} else {
		tree = e.Node()
	}
	if tree == nil {
		return origin
	}
	if len(keys) > 0 && keys[0] == "name" && e.NamePos.Line > 0 {
		return e.NamePos
	}
	for n := len(keys); n > 0; n-- {
		if _, v := tree.Lookup(keys[:n]); v != nil && v.Pos().Line > 0 {
			return v.Pos()
		}
	}
	return origin
}

// firstSource is the start of the first source file read, where a finding
// about the deployment as a whole points.
func (r *Result) firstSource() diag.Pos {
	for _, s := range r.Sources {
		if s.Path != "" {
			return diag.Pos{File: s.Path, Line: 1, Column: 1}
		}
	}
	return diag.Pos{File: "(deployment)", Line: 1, Column: 1}
}

// winner is the first entry named name that no other source shadowed,
// nil when there is none. Entries do not change once a Result is made.
func (r *Result) winner(name string) *Entry {
	if r.winners == nil { // a Result not made by Compile
		for _, x := range r.Entries {
			if x.Name == name && !x.Shadowed() {
				return x
			}
		}
		return nil
	}
	r.winners.once.Do(func() {
		r.winners.byName = make(map[string]*Entry, len(r.Entries))
		for _, x := range r.Entries {
			if _, seen := r.winners.byName[x.Name]; !seen && !x.Shadowed() {
				r.winners.byName[x.Name] = x
			}
		}
	})
	return r.winners.byName[name]
}
