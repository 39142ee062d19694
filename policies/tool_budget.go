package policies

import (
	"fmt"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// toolBudget: more registered tools than a target client takes. Counted from
// the tool lock, so that CI needs no servers.
var toolBudget = Check{
	Rule: rules.ToolBudget,
	Run: func(in *Input) []Violation {
		if in.Lock == nil {
			return nil
		}
		type at struct{ server, tool int }
		var registered []at
		for i, s := range in.Lock.Servers {
			for j, t := range s.Tools {
				if t.VisibleName != nil {
					registered = append(registered, at{i, j})
				}
			}
		}
		var out []Violation
		for _, name := range in.Target.Clients {
			c, ok := clientLimit(name)
			if !ok || c.MaxTools == 0 || len(registered) <= c.MaxTools {
				continue
			}
			first := registered[c.MaxTools]
			out = append(out, Violation{InLock: true, Path: []any{"servers", first.server, "tools", first.tool, "visibleName"},
				Message: fmt.Sprintf("%d tools are registered, more than %s accepts (%d); this is the first one past the limit",
					len(registered), c.Name, c.MaxTools),
				Suggestion: "disable servers the agent does not need, or narrow what they offer"})
		}
		return out
	},
}
