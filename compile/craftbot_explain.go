package compile

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// explainCraftbot explains the entry the host loads under name: each field
// as the plan holds it (an env value as its reference, never the value)
// and where it stands in mcp_config.json, or "default"; the fields its
// transport ignores are marked. Others are the later definitions of the
// name, which the host skips.
func (r *Result) explainCraftbot(name string) (*Explanation, bool) {
	var chosen *Entry
	for _, e := range r.Entries {
		if e.Name == name && e.Skip == "" {
			chosen = e
			break
		}
	}
	if chosen == nil {
		return nil, false
	}
	ce := chosen.craftbot
	server := craftbotServer(chosen)
	x := &Explanation{Name: name, Source: chosen.Source, Origin: chosen.Origin, Fields: []FieldOrigin{}, Others: []ExplainedEntry{}}
	add := func(field string, value any, from string) {
		b, _ := json.Marshal(value)
		x.Fields = append(x.Fields, FieldOrigin{Field: field, Value: r.Redactor.Redact(string(b)), From: from})
	}
	stdio := ce.Transport == craftbot.TransportStdio
	uses := map[string]bool{craftbot.FieldCommand: stdio, craftbot.FieldArgs: stdio, craftbot.FieldEnv: stdio, craftbot.FieldURL: !stdio}
	for _, f := range craftbot.EntryFields {
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
		case f == craftbot.FieldArgs && m.Value.Kind == node.Array && len(m.Value.Elems) > 0:
			for i, el := range m.Value.Elems {
				add(f+"["+strconv.Itoa(i)+"]", el.Text, el.Pos().String())
			}
		case f == craftbot.FieldEnv && m.Value.Kind == node.Object && len(m.Value.Members) > 0:
			for _, em := range m.Value.Members {
				add(f+"."+em.Key, server.Env[em.Key], em.Value.Pos().String())
			}
		default:
			add(f, craftbotFieldValue(f, ce), m.Value.Pos().String())
		}
	}
	from := "default"
	if cfg := r.Craftbot; cfg != nil && cfg.Root != nil {
		if m := cfg.Root.Member(craftbot.FieldAutoConnect); m != nil {
			from = m.Value.Pos().String() + " (the whole file)"
		}
		add(craftbot.FieldAutoConnect, cfg.AutoConnect, from)
	}
	for _, e := range r.Entries {
		if e.Name == name && e.Winner == chosen {
			x.Others = append(x.Others, ExplainedEntry{Origin: e.Origin, Role: "shadowed"})
		}
	}
	return x, true
}

// craftbotFieldValue is the value a field has in the plan (defaults
// filled in).
func craftbotFieldValue(f string, ce *craftbot.Entry) any {
	switch f {
	case craftbot.FieldName:
		return ce.Name
	case craftbot.FieldDescription:
		return ce.Description
	case craftbot.FieldTransport:
		return ce.Transport
	case craftbot.FieldCommand:
		return ce.Command
	case craftbot.FieldArgs:
		return []string{}
	case craftbot.FieldEnv:
		return map[string]string{}
	case craftbot.FieldURL:
		return ce.URL
	case craftbot.FieldEnabled:
		return ce.Enabled
	case craftbot.FieldActionSet:
		return ce.ActionSet
	}
	return nil
}
