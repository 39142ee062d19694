package craftbot

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// explainCraftbot explains the entry the host loads under name: each field
// as the plan holds it (an env value as its reference, never the value)
// and where it stands in mcp_config.json, or "default"; the fields its
// transport ignores are marked. Others are the later definitions of the
// name, for which the host starts this one.
func (profile) Explain(r *compile.Result, name string) (*compile.Explanation, bool) {
	var chosen *compile.Entry
	for _, e := range r.Entries {
		if e.Name == name && e.Skip == "" && !e.Shadowed() {
			chosen = e
			break
		}
	}
	if chosen == nil {
		return nil, false
	}
	ce := entryOf(chosen)
	server := craftbotServer(chosen)
	x := &compile.Explanation{Name: name, Source: chosen.Source, Origin: chosen.Origin, Fields: []compile.FieldOrigin{}, Others: []compile.ExplainedEntry{}}
	add := func(field string, value any, from string) {
		b, _ := json.Marshal(value)
		x.Fields = append(x.Fields, compile.FieldOrigin{Field: field, Value: r.Redactor.Redact(string(b)), From: from})
	}
	stdio := ce.Transport == plan.TransportStdio
	uses := map[string]bool{FieldCommand: stdio, FieldArgs: stdio, FieldEnv: stdio, FieldURL: !stdio}
	for _, f := range EntryFields {
		m := ce.Node.Member(f)
		used, specific := uses[f]
		if specific && !used {
			if m != nil {
				add(f, nil, fmt.Sprintf("%s (ignored: a %s server does not use it)", m.Value.Pos(), ce.Transport))
			}
			continue
		}
		switch {
		case m == nil:
			add(f, craftbotFieldValue(f, ce), "default")
		case f == FieldArgs && m.Value.Kind == node.Array && len(m.Value.Elems) > 0:
			for i, el := range m.Value.Elems {
				add(f+"["+strconv.Itoa(i)+"]", el.Text, el.Pos().String())
			}
		case f == FieldEnv && m.Value.Kind == node.Object && len(m.Value.Members) > 0:
			for _, em := range m.Value.Members {
				add(f+"."+em.Key, server.Env[em.Key], em.Value.Pos().String())
			}
		default:
			add(f, craftbotFieldValue(f, ce), m.Value.Pos().String())
		}
	}
	from := "default"
	if cfg := ConfigOf(r); cfg != nil && cfg.Root != nil {
		if m := cfg.Root.Member(FieldAutoConnect); m != nil {
			from = m.Value.Pos().String() + " (the whole file)"
		}
		add(FieldAutoConnect, cfg.AutoConnect, from)
	}
	for _, e := range r.Entries {
		if e.Name == name && e.Winner == chosen {
			x.Others = append(x.Others, compile.ExplainedEntry{Origin: e.Origin, Role: "shadowed"})
		}
	}
	return x, true
}

// craftbotFieldValue is the value a field has in the plan (defaults
// filled in).
func craftbotFieldValue(f string, ce *Entry) any {
	switch f {
	case FieldName:
		return ce.Name
	case FieldDescription:
		return ce.Description
	case FieldTransport:
		return ce.Transport
	case FieldCommand:
		return ce.Command
	case FieldArgs:
		return []string{}
	case FieldEnv:
		return map[string]string{}
	case FieldURL:
		return ce.URL
	case FieldEnabled:
		return ce.Enabled || ce.starts
	case FieldActionSet:
		return ce.ActionSet
	}
	return nil
}
