package volcanic

import (
	"fmt"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// workspaceInPrompt: ${workspace} in a promptSection, which the host puts
// into the system prompt as written.
var workspaceInPrompt = entryCheck{Rule: rules.WorkspaceInPrompt, preset: true, run: func(x *entryRun) {
	n := x.e.Node().Get(FieldPromptSection)
	if n == nil || n.Kind != node.String {
		return
	}
	for _, t := range plan.Templates(n.Text) {
		if t.Kind == plan.TemplateWorkspace {
			x.report(textPos(n, t.Start),
				fmt.Sprintf("%s: ${workspace} in promptSection stays as written: the host puts the text into the system prompt without templates", x.subject),
				"say \"the chat's workspace\" (the agent's working directory) instead")
			return
		}
	}
}}
