package volcanic

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// envRefOutsideEnv: an ${env:NAME} in command, args, cwd or promptSection,
// where the host passes it on literally: it works only in env values.
var envRefOutsideEnv = entryCheck{Rule: rules.EnvRefOutsideEnv, run: func(x *entryRun) {
	x.eachTemplate(func(n *node.Node, t plan.Template, path []string, env bool) {
		if t.Kind != plan.TemplateEnv || env {
			return
		}
		field := x.name(path...)
		sugg := fmt.Sprintf("pass it in env (\"%s\": \"${env:%s}\") and let the server read the variable", t.Name, t.Name)
		if strings.HasPrefix(strings.ToLower(field), "command") {
			sugg = "write the program's name or path; ${env:…} is not expanded in command"
		}
		x.report(envRefOutsideEnvAt(n, t, x.subject, field, sugg))
	})
	// A prompt section is free text: only its ${env:…} are findings, other
	// ${…} may be the text's own.
	if ps := x.e.Node().Get(FieldPromptSection); templated(ps) {
		for _, t := range plan.Templates(ps.Text) {
			if t.Kind == plan.TemplateEnv {
				x.report(envRefOutsideEnvAt(ps, t, x.subject, x.name(FieldPromptSection),
					"write the text itself: a prompt section is put into the system prompt as written"))
			}
		}
	}
}}

// envRefOutsideEnvAt is the finding of the ${env:NAME} t in n, the value of
// field of subject, which is no env value: for an entry, and for the
// settings the Playwright preset's command line is made of.
func envRefOutsideEnvAt(n *node.Node, t plan.Template, subject, field, suggestion string) (diag.Pos, string, string) {
	return textPos(n, t.Start),
		fmt.Sprintf("%s: ${env:%s} stands in %s, where the host passes it on literally; it works only in env values", subject, t.Name, field),
		suggestion
}
