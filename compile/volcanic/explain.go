package volcanic

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// explain is the profile's Explain.
func explain(r *compile.Result, name string) (*compile.Explanation, bool) {
	var chosen *compile.Entry
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
	x := &compile.Explanation{Name: name, Source: chosen.Source, Origin: chosen.Origin, Fields: []compile.FieldOrigin{}, Others: []compile.ExplainedEntry{}}
	server := draftServer(r, name)
	add := func(field string, value any, src string) {
		b, _ := json.Marshal(value)
		x.Fields = append(x.Fields, compile.FieldOrigin{Field: field, Value: r.Redactor.Redact(string(b)), From: src})
	}
	tree := chosen.Node()
	for _, f := range serverFields {
		shown := chosen.Naming
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
		x.Others = append(x.Others, compile.ExplainedEntry{Origin: e.Origin, Role: role})
	}
	return x, true
}

func draftServer(r *compile.Result, name string) *plan.Server {
	if r.Draft() == nil {
		return nil
	}
	for i := range r.Draft().Servers {
		if r.Draft().Servers[i].Name == name {
			return &r.Draft().Servers[i]
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
