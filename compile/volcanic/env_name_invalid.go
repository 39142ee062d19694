package volcanic

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// envNameInvalid: an env key, or the NAME of an ${env:NAME} in an env
// value, that is not a variable's name ([A-Za-z_][A-Za-z0-9_]*).
var envNameInvalid = entryCheck{Rule: rules.EnvNameInvalid, run: func(x *entryRun) {
	if env := x.e.Node().Member(FieldEnv); env != nil && env.Value.Kind == node.Object {
		for _, m := range env.Value.Members {
			if !validEnvName(m.Key) && !strings.ContainsRune(m.Key, 0) { // NUL: nul-character
				x.report(m.KeyPos(),
					fmt.Sprintf("%s: %q is not a valid environment variable name: use letters, digits and _, not starting with a digit", x.subject, m.Key),
					fmt.Sprintf("did you mean %q?", suggestEnvName(m.Key)))
			}
		}
	}
	x.eachTemplate(func(n *node.Node, t plan.Template, _ []string, env bool) {
		if t.Kind != plan.TemplateEnv || !env || validEnvName(t.Name) {
			return
		}
		x.report(textPos(n, t.Start),
			fmt.Sprintf("%s: ${env:%s} does not name a variable: a name is letters, digits and _, not starting with a digit", x.subject, t.Name),
			fmt.Sprintf("did you mean ${env:%s}?", suggestEnvName(t.Name)))
	})
}}
