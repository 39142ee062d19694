package compile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/diag"
	"github.com/mcpc-dev/mcpc/compile/node"
)

// Template kinds found in a value.
const (
	tmplWorkspace = iota
	tmplEnv
	tmplUnknown
	tmplUnterminated
)

// tmplRef is one ${…} in a string; start and end are rune offsets.
type tmplRef struct {
	kind       int
	start, end int
	body       string // between ${ and }
	name       string // NAME of ${env:NAME}
}

// scanTemplates finds every ${…} in s. There is no escape syntax: every
// "${" starts a reference.
func scanTemplates(s string) []tmplRef {
	var out []tmplRef
	rs := []rune(s)
	for i := 0; i+1 < len(rs); i++ {
		if rs[i] != '$' || rs[i+1] != '{' {
			continue
		}
		end := -1
		for j := i + 2; j < len(rs); j++ {
			if rs[j] == '}' {
				end = j
				break
			}
		}
		if end < 0 {
			out = append(out, tmplRef{kind: tmplUnterminated, start: i, end: len(rs), body: string(rs[i+2:])})
			break
		}
		body := string(rs[i+2 : end])
		r := tmplRef{kind: tmplUnknown, start: i, end: end + 1, body: body}
		switch {
		case body == "workspace":
			r.kind = tmplWorkspace
		case strings.HasPrefix(body, "env:"):
			r.kind, r.name = tmplEnv, body[len("env:"):]
		}
		out = append(out, r)
		i = end
	}
	return out
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validEnvName reports whether name is a portable environment variable name.
func validEnvName(name string) bool { return envNameRE.MatchString(name) }

// textPos is the position of rune offset off inside a string node's text.
func textPos(n *node.Node, off int) diag.Pos {
	p := n.Pos
	p.Column += n.TextOffset + off
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
	for _, r := range scanTemplates(n.Text) {
		pos := textPos(n, r.start)
		switch r.kind {
		case tmplUnterminated:
			t.ds = append(t.ds, diag.At(pos, diag.Error, "unknown-variable",
				fmt.Sprintf("%s: %s has \"${\" without a closing \"}\"; the host passes it on literally", t.subject, field),
				"close it: ${workspace} or ${env:NAME}"))
		case tmplUnknown:
			sugg := "the only variables are ${workspace} and ${env:NAME}"
			switch strings.ToLower(strings.TrimSpace(r.body)) {
			case "workspace", "workspacefolder", "workspace_dir", "workspacedir", "cwd", "pwd":
				sugg = "did you mean ${workspace}?"
			}
			if strings.HasPrefix(strings.ToLower(r.body), "env.") || strings.HasPrefix(strings.ToLower(r.body), "env:") {
				sugg = fmt.Sprintf("did you mean ${env:%s}?", r.body[4:])
			}
			t.ds = append(t.ds, diag.At(pos, diag.Error, "unknown-variable",
				fmt.Sprintf("%s: %s uses ${%s}, which the host does not know and passes on literally", t.subject, field, r.body), sugg))
		case tmplEnv:
			if !envValue {
				sugg := fmt.Sprintf("pass it in env (\"%s\": \"${env:%s}\") and let the server read the variable", r.name, r.name)
				if strings.HasPrefix(strings.ToLower(field), "command") {
					sugg = "write the program's name or path; ${env:…} is not expanded in command"
				}
				if t.outsideHint != "" {
					sugg = t.outsideHint
				}
				t.ds = append(t.ds, diag.At(pos, diag.Error, "env-ref-outside-env",
					fmt.Sprintf("%s: ${env:%s} stands in %s, where the host passes it on literally; it works only in env values", t.subject, r.name, field), sugg))
				continue
			}
			if !validEnvName(r.name) {
				t.ds = append(t.ds, diag.At(pos, diag.Error, "env-name-invalid",
					fmt.Sprintf("%s: ${env:%s} does not name a variable: a name is letters, digits and _, not starting with a digit", t.subject, r.name),
					fmt.Sprintf("did you mean ${env:%s}?", suggestEnvName(r.name))))
				continue
			}
			if t.env != nil {
				v, ok := t.env.Lookup(r.name)
				switch {
				case !ok:
					t.ds = append(t.ds, diag.At(pos, diag.Warning, "env-ref-unset",
						fmt.Sprintf("%s: %s is not set in the host environment, so %s gets an empty value", t.subject, r.name, field),
						fmt.Sprintf("set %s for the host (--env-file or --env when checking)", r.name)))
				case v.Value == "":
					t.ds = append(t.ds, diag.At(pos, diag.Warning, "env-ref-unset",
						fmt.Sprintf("%s: %s is set but empty in the host environment (%s), so %s gets an empty value", t.subject, r.name, v.Pos, field),
						fmt.Sprintf("give %s a value", r.name)))
				case strings.IndexByte(v.Value, 0) >= 0:
					t.ds = append(t.ds, diag.At(pos, diag.Error, RuleNULCharacter,
						fmt.Sprintf("%s: %s contains a NUL character (%s), which %s would get; no process can be started with it, so the host cannot start the server", t.subject, r.name, v.ValuePos, field),
						"remove it from "+r.name))
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
	for _, r := range scanTemplates(n.Text) {
		if r.kind == tmplEnv {
			t.ds = append(t.ds, diag.At(textPos(n, r.start), diag.Error, "env-ref-outside-env",
				fmt.Sprintf("%s: ${env:%s} stands in %s, where the host passes it on literally; it works only in env values", t.subject, r.name, field),
				"write the text itself: a prompt section is put into the system prompt as written"))
		}
	}
}

// ResolveTemplates replaces ${workspace} with workspace and ${env:NAME} with
// env(NAME). Anything else is left as written, as the host does; so is
// ${env:NAME} when env is nil: outside env values (command, args, cwd) the
// host passes it on literally.
func ResolveTemplates(s, workspace string, env func(string) string) string {
	refs := scanTemplates(s)
	if len(refs) == 0 {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	last := 0
	for _, r := range refs {
		b.WriteString(string(rs[last:r.start]))
		switch r.kind {
		case tmplWorkspace:
			b.WriteString(workspace)
		case tmplEnv:
			if env != nil {
				b.WriteString(env(r.name))
			} else {
				b.WriteString(string(rs[r.start:r.end]))
			}
		default:
			b.WriteString(string(rs[r.start:r.end]))
		}
		last = r.end
	}
	b.WriteString(string(rs[last:]))
	return b.String()
}

// EnvRefs returns the NAMEs of every ${env:NAME} in s.
func EnvRefs(s string) []string {
	var out []string
	for _, r := range scanTemplates(s) {
		if r.kind == tmplEnv {
			out = append(out, r.name)
		}
	}
	return out
}

// suggestEnvName turns name into a valid variable name.
func suggestEnvName(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "NAME"
	}
	return b.String()
}
