package compile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validEnvName reports whether name is a portable environment variable name.
func validEnvName(name string) bool { return envNameRE.MatchString(name) }

// textPos is the position of rune offset off inside a string node's text.
func textPos(n *node.Node, off int) diag.Pos {
	p := n.Pos()
	p.Column += int(n.TextOffset) + off
	return p
}

// templateChecker checks the ${…} of one entry.
type templateChecker struct {
	env     *HostEnv
	subject string
	// outsideHint, when set, is the suggestion for an ${env:…} outside an
	// env value (where the entry has no env of its own).
	outsideHint string
	ds          []diag.Diagnostic
}

// check checks one string value of field; envValue says whether ${env:…} is
// allowed there.
func (t *templateChecker) check(n *node.Node, field string, envValue bool) {
	if n == nil || n.Kind != node.String {
		return
	}
	for _, r := range plan.Templates(n.Text) {
		pos := textPos(n, r.Start)
		switch r.Kind {
		case plan.TemplateUnterminated:
			t.ds = append(t.ds, rules.UnknownVariable.At(pos,
				fmt.Sprintf("%s: %s has \"${\" without a closing \"}\"; the host passes it on literally", t.subject, field),
				"close it: ${workspace} or ${env:NAME}"))
		case plan.TemplateUnknown:
			sugg := "the only variables are ${workspace} and ${env:NAME}"
			switch strings.ToLower(strings.TrimSpace(r.Body)) {
			case "workspace", "workspacefolder", "workspace_dir", "workspacedir", "cwd", "pwd":
				sugg = "did you mean ${workspace}?"
			}
			if strings.HasPrefix(strings.ToLower(r.Body), "env.") || strings.HasPrefix(strings.ToLower(r.Body), "env:") {
				sugg = fmt.Sprintf("did you mean ${env:%s}?", r.Body[4:])
			}
			t.ds = append(t.ds, rules.UnknownVariable.At(pos,
				fmt.Sprintf("%s: %s uses ${%s}, which the host does not know and passes on literally", t.subject, field, r.Body), sugg))
		case plan.TemplateEnv:
			if !envValue {
				sugg := fmt.Sprintf("pass it in env (\"%s\": \"${env:%s}\") and let the server read the variable", r.Name, r.Name)
				if strings.HasPrefix(strings.ToLower(field), "command") {
					sugg = "write the program's name or path; ${env:…} is not expanded in command"
				}
				if t.outsideHint != "" {
					sugg = t.outsideHint
				}
				t.ds = append(t.ds, rules.EnvRefOutsideEnv.At(pos,
					fmt.Sprintf("%s: ${env:%s} stands in %s, where the host passes it on literally; it works only in env values", t.subject, r.Name, field), sugg))
				continue
			}
			if !validEnvName(r.Name) {
				t.ds = append(t.ds, rules.EnvNameInvalid.At(pos,
					fmt.Sprintf("%s: ${env:%s} does not name a variable: a name is letters, digits and _, not starting with a digit", t.subject, r.Name),
					fmt.Sprintf("did you mean ${env:%s}?", suggestEnvName(r.Name))))
				continue
			}
			if t.env != nil {
				v, ok := t.env.Lookup(r.Name)
				switch {
				case !ok:
					t.ds = append(t.ds, rules.EnvRefUnset.At(pos,
						fmt.Sprintf("%s: %s is not set in the host environment, so %s gets an empty value", t.subject, r.Name, field),
						fmt.Sprintf("set %s for the host (--env-file or --env when checking)", r.Name)))
				case v.Value == "":
					t.ds = append(t.ds, rules.EnvRefUnset.At(pos,
						fmt.Sprintf("%s: %s is set but empty in the host environment (%s), so %s gets an empty value", t.subject, r.Name, v.Pos(), field),
						fmt.Sprintf("give %s a value", r.Name)))
				case strings.IndexByte(v.Value, 0) >= 0:
					t.ds = append(t.ds, rules.NULCharacter.At(pos,
						fmt.Sprintf("%s: %s contains a NUL character (%s), which %s would get; no process can be started with it, so the host cannot start the server", t.subject, r.Name, v.ValuePos(), field),
						"remove it from "+r.Name))
				}
			}
		}
	}
}

// checkEnvRefs reports only the ${env:…} of a free text (a prompt section),
// which the host passes on as written: other ${…} may be the text's own.
func (t *templateChecker) checkEnvRefs(n *node.Node, field string) {
	if n == nil || n.Kind != node.String {
		return
	}
	for _, r := range plan.Templates(n.Text) {
		if r.Kind == plan.TemplateEnv {
			t.ds = append(t.ds, rules.EnvRefOutsideEnv.At(textPos(n, r.Start),
				fmt.Sprintf("%s: ${env:%s} stands in %s, where the host passes it on literally; it works only in env values", t.subject, r.Name, field),
				"write the text itself: a prompt section is put into the system prompt as written"))
		}
	}
}

// suggestEnvName turns name into a variable name a person would write: every
// run of characters a name cannot hold becomes one _, none at either end,
// and a name that would start with a digit starts with VAR_ ("0" → "VAR_0",
// "${workspace}" → "workspace", "my-token" → "my_token").
func suggestEnvName(name string) string {
	var b strings.Builder
	pending := false
	for _, r := range name {
		if r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(r)
			continue
		}
		pending = true
	}
	out := strings.Trim(b.String(), "_")
	switch {
	case out == "":
		return "NAME"
	case out[0] >= '0' && out[0] <= '9':
		return "VAR_" + out
	}
	return out
}
