package volcanic

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// toolPrefixReserved: a toolPrefix in the namespace the provider gives
// every MCP tool.
var toolPrefixReserved = entryCheck{Rule: rules.ToolPrefixReserved, preset: true, run: func(x *entryRun) {
	tp := x.e.Node().Get(FieldToolPrefix)
	if tp == nil || tp.Kind != node.String || !strings.HasPrefix(tp.Text, "mcp__") {
		return
	}
	x.report(tp.Pos(),
		fmt.Sprintf("%s: %s %q starts with mcp__, the namespace the provider gives every MCP tool (mcp__volcanic__<name>)", x.subject, x.name(FieldToolPrefix), tp.Text),
		fmt.Sprintf("use %q", strings.TrimPrefix(tp.Text, "mcp__")))
}}
