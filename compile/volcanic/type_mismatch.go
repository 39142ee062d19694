package volcanic

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// typeMismatch: a timeout the host reads into a 32-bit integer that does
// not fit one. The rule's other findings are the binder's (bind.go), its
// home, and the schema's.
var typeMismatch = entryCheck{Rule: rules.TypeMismatch, preset: true, run: func(x *entryRun) {
	for _, f := range []string{FieldStartup, FieldCall, FieldIdle} {
		v := x.e.Node().Get(f)
		if v == nil || v.Kind != node.Number || strings.ContainsAny(v.Text, ".eE") {
			continue
		}
		if _, ok := parseDotnetInt(v.Text); !ok {
			x.report(v.Pos(),
				fmt.Sprintf("%s: %s is %s, which does not fit a 32-bit integer", x.subject, x.name(f), v.Text),
				"write a number of seconds up to 2147483647")
		}
	}
}}
