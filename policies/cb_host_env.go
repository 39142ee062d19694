package policies

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// cbHostEnv: CraftBot (read at 605efb4, server.py) starts a stdio server
// with a copy of its own whole environment, updated with the entry's env:
// every secret the host holds (its LLM provider's key among them) reaches
// every server it starts. mcpc's runtime withholds the deny-list; this says
// what the host itself does, by name, when the deployment describes the
// host's environment.
var cbHostEnv = Check{
	Rule: rules.CbHostEnv,
	Run: func(in *Input) []Violation {
		if in.Plan.Profile != plan.ProfileCraftbot || len(in.HostSecrets) == 0 {
			return nil
		}
		var out []Violation
		for i, s := range in.Plan.Servers {
			if !s.Enabled || s.Transport != plan.TransportStdio {
				continue
			}
			var got []string
			for _, name := range in.HostSecrets {
				if _, own := s.Env[name]; !own { // the entry's env replaces the host's value
					got = append(got, name)
				}
			}
			if len(got) == 0 {
				continue
			}
			out = append(out, Violation{Path: []any{"servers", i},
				Message: fmt.Sprintf("server %s receives the host's secret %s %s: CraftBot starts a stdio server with its whole environment plus the entry's env (mcpc run withholds deny-listed variables; the host does not)",
					s.Name, map[bool]string{true: "variable", false: "variables"}[len(got) == 1], strings.Join(got, ", ")),
				Suggestion: "start CraftBot with only the variables it needs, or give the server an env entry of that name to replace the value it receives"})
		}
		return out
	},
}
