package volcanic

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// unknownVariable: a ${…} other than ${workspace} and ${env:NAME}, or one
// without its closing }, in a value the host expands: the host passes it on
// literally.
var unknownVariable = entryCheck{Rule: rules.UnknownVariable, run: func(x *entryRun) {
	x.eachTemplate(func(n *node.Node, t plan.Template, path []string, _ bool) {
		if unknownTemplate(t) {
			x.report(unknownVariableAt(n, t, x.subject, x.name(path...)))
		}
	})
}}

// unknownTemplate reports whether t is a ${…} the host does not know.
func unknownTemplate(t plan.Template) bool {
	return t.Kind == plan.TemplateUnterminated || t.Kind == plan.TemplateUnknown
}

// unknownVariableAt is the finding of the unknown template t in n, the
// value of field of subject: for an entry, and for the settings the
// Playwright preset's command line is made of.
func unknownVariableAt(n *node.Node, t plan.Template, subject, field string) (pos diag.Pos, msg, suggestion string) {
	pos = textPos(n, t.Start)
	if t.Kind == plan.TemplateUnterminated {
		return pos, fmt.Sprintf("%s: %s has \"${\" without a closing \"}\"; the host passes it on literally", subject, field),
			"close it: ${workspace} or ${env:NAME}"
	}
	sugg := "the only variables are ${workspace} and ${env:NAME}"
	switch strings.ToLower(strings.TrimSpace(t.Body)) {
	case "workspace", "workspacefolder", "workspace_dir", "workspacedir", "cwd", "pwd":
		sugg = "did you mean ${workspace}?"
	}
	if strings.HasPrefix(strings.ToLower(t.Body), "env.") || strings.HasPrefix(strings.ToLower(t.Body), "env:") {
		sugg = fmt.Sprintf("did you mean ${env:%s}?", t.Body[4:])
	}
	return pos, fmt.Sprintf("%s: %s uses ${%s}, which the host does not know and passes on literally", subject, field, t.Body), sugg
}
