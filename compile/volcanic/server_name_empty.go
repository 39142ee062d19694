package volcanic

import (
	"strings"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// serverNameEmpty: a server named "" (or only spaces), which the host
// cannot call by name.
var serverNameEmpty = entryCheck{Rule: rules.ServerNameEmpty, preset: true, run: func(x *entryRun) {
	if strings.TrimSpace(x.e.Name) != "" {
		return
	}
	sugg := `give it a name: "mcpServers": {"github": {…}}`
	if x.e.Source == "host" {
		sugg = `give it a name: "Servers": {"github": {…}}, or Mcp__Servers__github__Command in the environment (the name goes between the double underscores)`
	}
	x.report(x.e.NamePos, "a server has an empty name", sugg)
}}
