package volcanic

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// missingCommand: an entry without a command, or with an empty one, which
// the host cannot start (disabled entries are checked too).
var missingCommand = entryCheck{Rule: rules.MissingCommand, preset: true, run: func(x *entryRun) {
	cmd := x.e.Node().Get(FieldCommand)
	switch {
	case cmd == nil:
		sugg := fmt.Sprintf("add %q: \"npx\" (or the program that runs the server)", x.name(FieldCommand))
		for _, m := range x.e.Node().Members {
			if looksLike(m.Key, FieldCommand) && !strings.EqualFold(m.Key, FieldCommand) {
				sugg = fmt.Sprintf("rename %q to %q", m.Key, x.name(FieldCommand))
			}
		}
		x.report(x.e.NamePos,
			fmt.Sprintf("%s has no %s; the host cannot start it (disabled entries are checked too)", x.subject, x.name(FieldCommand)), sugg)
	case cmd.Kind == node.String && strings.TrimSpace(cmd.Text) == "":
		x.report(cmd.Pos(),
			fmt.Sprintf("%s has an empty %s; the host cannot start it", x.subject, x.name(FieldCommand)),
			"write the program that runs the server, such as npx")
	}
}}
