package policies

import (
	"fmt"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// toolNameLength: a tool name longer than the MCP specification allows, or
// longer, in the form a target client sends to its model, than that client
// allows. Checked from the tool lock.
var toolNameLength = Check{
	Rule: rules.ToolNameLength,
	Run: func(in *Input) []Violation {
		if in.Lock == nil {
			return nil
		}
		var out []Violation
		for i, s := range in.Lock.Servers {
			for j, t := range s.Tools {
				if n := utf8.RuneCountInString(t.Name); n > mcpMaxToolName {
					out = append(out, Violation{InLock: true, Path: []any{"servers", i, "tools", j, "name"},
						Message:    fmt.Sprintf("server %s lists a tool name of %d characters; the MCP specification allows %d", s.Name, n, mcpMaxToolName),
						Suggestion: "ask the server's maintainers for shorter names; clients may refuse the tool"})
				}
				if t.VisibleName == nil {
					continue
				}
				for _, name := range in.Target.Clients {
					c, ok := clientLimit(name)
					if !ok || c.MaxName == 0 {
						continue
					}
					form := c.Prefix[in.Plan.Profile] + *t.VisibleName
					if n := utf8.RuneCountInString(form); n > c.MaxName {
						out = append(out, Violation{InLock: true, Path: []any{"servers", i, "tools", j, "visibleName"},
							Message:    fmt.Sprintf("%s sends the tool as %s, %d characters; it accepts %d", c.Name, form, n, c.MaxName),
							Suggestion: "give the server a shorter name or prefix, so that its tools fit"})
					}
				}
			}
		}
		return out
	},
}
