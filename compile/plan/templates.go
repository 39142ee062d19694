package plan

import "strings"

// TemplateKind says what a ${…} in a plan value refers to.
type TemplateKind int

// The kinds of template a value can hold (SPEC §2.4).
const (
	TemplateWorkspace    TemplateKind = iota // ${workspace}
	TemplateEnv                              // ${env:NAME}
	TemplateUnknown                          // any other ${…}
	TemplateUnterminated                     // a ${ without its }
)

// Template is one ${…} in a string; Start and End are rune offsets.
type Template struct {
	Kind       TemplateKind
	Start, End int
	Body       string // between ${ and }
	Name       string // NAME of ${env:NAME}
}

// Templates finds every ${…} in s. There is no escape syntax: every
// "${" starts a reference.
func Templates(s string) []Template {
	var out []Template
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
			out = append(out, Template{Kind: TemplateUnterminated, Start: i, End: len(rs), Body: string(rs[i+2:])})
			break
		}
		body := string(rs[i+2 : end])
		r := Template{Kind: TemplateUnknown, Start: i, End: end + 1, Body: body}
		switch {
		case body == "workspace":
			r.Kind = TemplateWorkspace
		case strings.HasPrefix(body, "env:"):
			r.Kind, r.Name = TemplateEnv, body[len("env:"):]
		}
		out = append(out, r)
		i = end
	}
	return out
}

// Resolve replaces ${workspace} with workspace and ${env:NAME} with
// env(NAME). Anything else is left as written, as the host does; so is
// ${env:NAME} when env is nil: outside env values (command, args, cwd) the
// host passes it on literally.
func Resolve(s, workspace string, env func(string) string) string {
	refs := Templates(s)
	if len(refs) == 0 {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	last := 0
	for _, r := range refs {
		b.WriteString(string(rs[last:r.Start]))
		switch r.Kind {
		case TemplateWorkspace:
			b.WriteString(workspace)
		case TemplateEnv:
			if env != nil {
				b.WriteString(env(r.Name))
			} else {
				b.WriteString(string(rs[r.Start:r.End]))
			}
		default:
			b.WriteString(string(rs[r.Start:r.End]))
		}
		last = r.End
	}
	b.WriteString(string(rs[last:]))
	return b.String()
}

// EnvRefs returns the NAMEs of every ${env:NAME} in s.
func EnvRefs(s string) []string {
	var out []string
	for _, r := range Templates(s) {
		if r.Kind == TemplateEnv {
			out = append(out, r.Name)
		}
	}
	return out
}
