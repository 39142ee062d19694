package compile

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpc-dev/mcpc/compile/plan"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// Explanation says where every field of one server came from.
type Explanation struct {
	Name   string           `json:"name"`
	Source string           `json:"source"` // host, preset, settings
	Origin plan.Origin      `json:"origin"`
	Fields []FieldOrigin    `json:"fields"`
	Others []ExplainedEntry `json:"others"` // the other definitions of the name
}

// ExplainedEntry is another definition of the same name.
type ExplainedEntry struct {
	Origin plan.Origin `json:"origin"`
	// Role is "shadowed" (dropped because this one wins) or "winner".
	Role string `json:"role"`
}

// FieldOrigin is one field (or list element, or env variable) and where its
// value came from: a file position, an environment variable, the preset, or
// the default.
type FieldOrigin struct {
	Field string `json:"field"`
	Value string `json:"value"` // as JSON
	From  string `json:"from"`
}

// Explain explains the definition of name that wins (or, when none wins,
// the first one).
func (r *Result) Explain(name string) (*Explanation, bool) {
	if r.Profile == ProfileCraftbot {
		return r.explainCraftbot(name)
	}
	var chosen *Entry
	for _, e := range r.Entries {
		if e.Name == name && !e.Shadowed() {
			chosen = e
			break
		}
	}
	if chosen == nil {
		return nil, false
	}
	vars := map[diag.Pos]string{}
	for _, layer := range r.Env.Layers() {
		for _, v := range layer {
			vars[v.Pos()] = v.Name
			vars[v.ValuePos()] = v.Name
		}
	}
	from := func(p diag.Pos) string {
		if name, ok := vars[p]; ok {
			return fmt.Sprintf("environment %s (%s)", name, p)
		}
		return p.String()
	}
	x := &Explanation{Name: name, Source: chosen.Source, Origin: chosen.Origin, Fields: []FieldOrigin{}, Others: []ExplainedEntry{}}
	server := r.draftServer(name)
	add := func(field string, value any, src string) {
		b, _ := json.Marshal(value)
		x.Fields = append(x.Fields, FieldOrigin{Field: field, Value: r.Redactor.Redact(string(b)), From: src})
	}
	tree := chosen.Node()
	for _, f := range serverFields {
		shown := chosen.naming
		if shown == nil {
			shown = settingsNaming
		}
		label := shown([]string{f})
		note, hasNote := chosen.Notes[f]
		m := tree.Member(f)
		switch {
		case hasNote:
			add(label, fieldValue(server, f), note)
		case m == nil:
			add(label, fieldValue(server, f), "default")
		case m.Value.Kind == node.Array:
			if len(m.Value.Elems) == 0 {
				add(label, []string{}, from(m.Value.Pos()))
			}
			for i, el := range m.Value.Elems {
				src := from(el.Pos())
				if note, ok := chosen.Notes[fmt.Sprintf("%s[%d]", f, i)]; ok {
					src = note
				}
				add(shown([]string{f, strconv.Itoa(i)}), el.Text, src)
			}
		case m.Value.Kind == node.Object:
			if len(m.Value.Members) == 0 {
				add(label, map[string]string{}, from(m.Value.Pos()))
			}
			for _, em := range m.Value.Members {
				var v any = em.Value.Text
				if em.Value.Kind == node.Null {
					v = nil
				}
				if server != nil && server.Env[em.Key] != nil {
					v = *server.Env[em.Key] // as the plan holds it: a secret as a reference
				}
				add(label+"."+em.Key, v, from(em.Value.Pos()))
			}
		default:
			add(label, fieldValue(server, f), from(m.Value.Pos()))
		}
	}
	for _, e := range r.Entries {
		if e.Name != name || e == chosen {
			continue
		}
		role := "shadowed"
		if e.Winner != chosen {
			role = "winner"
		}
		x.Others = append(x.Others, ExplainedEntry{Origin: e.Origin, Role: role})
	}
	return x, true
}

func (r *Result) draftServer(name string) *plan.Server {
	if r.draft == nil {
		return nil
	}
	for i := range r.draft.Servers {
		if r.draft.Servers[i].Name == name {
			return &r.draft.Servers[i]
		}
	}
	return nil
}

// fieldValue is the value a field has in the plan (defaults filled in).
func fieldValue(s *plan.Server, f string) any {
	if s == nil {
		return nil
	}
	switch f {
	case FieldCommand:
		return s.Command
	case FieldArgs:
		return s.Args
	case FieldCwd:
		return s.Cwd
	case FieldEnv:
		return s.Env
	case FieldToolPrefix:
		return s.ToolPrefix
	case FieldEnabled:
		return s.Enabled
	case FieldParallel:
		return s.Parallel
	case FieldStartup:
		return s.StartupTimeoutSeconds
	case FieldCall:
		return s.CallTimeoutSeconds
	case FieldIdle:
		return s.IdleTimeoutSeconds
	case FieldStderrLevel:
		return s.StderrLevel
	case FieldPromptSection:
		return s.PromptSection
	}
	return nil
}

// Names returns the names of the servers in the plan, in merge order.
func (r *Result) Names() []string {
	var out []string
	for _, e := range r.Entries {
		if !e.Shadowed() && e.Skip == "" {
			out = append(out, e.Name)
		}
	}
	return out
}
