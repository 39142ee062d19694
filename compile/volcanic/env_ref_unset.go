package volcanic

import (
	"fmt"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// envRefUnset: an ${env:NAME} in an env value whose variable the host
// environment does not set, or sets empty: the server gets an empty value.
var envRefUnset = entryCheck{Rule: rules.EnvRefUnset, run: func(x *entryRun) {
	x.eachTemplate(func(n *node.Node, t plan.Template, path []string, env bool) {
		v, set, ok := x.envTemplate(t, env)
		switch {
		case !ok:
		case !set:
			x.report(textPos(n, t.Start),
				fmt.Sprintf("%s: %s is not set in the host environment, so %s gets an empty value", x.subject, t.Name, x.name(path...)),
				fmt.Sprintf("set %s for the host (--env-file or --env when checking)", t.Name))
		case v.Value == "":
			x.report(textPos(n, t.Start),
				fmt.Sprintf("%s: %s is set but empty in the host environment (%s), so %s gets an empty value", x.subject, t.Name, v.Pos(), x.name(path...)),
				fmt.Sprintf("give %s a value", t.Name))
		}
	})
}}
