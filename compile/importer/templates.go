package importer

import (
	"regexp"
	"strings"
)

// tmplKind is what a source ${…} means.
type tmplKind int

const (
	tLiteral     tmplKind = iota // text between templates
	tWorkspace                   // VS Code/Cursor ${workspaceFolder}
	tSeparator                   // ${pathSeparator}, ${/}
	tEnv                         // ${VAR}, ${VAR:-default} (Claude), ${env:VAR} (VS Code, Cursor)
	tInput                       // VS Code ${input:id}
	tUnsupported                 // anything else, and a ${ without its }
)

// piece is a run of literal text or one template of a source string.
type piece struct {
	kind tmplKind
	text string // tLiteral: the text; otherwise the whole ${…} as written
	// name is VAR of tEnv and the id of tInput.
	name string
	// def is the default of ${VAR:-default}; hasDef says there is one.
	def    string
	hasDef bool
	// why explains a tUnsupported.
	why string
}

var (
	envNameRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	claudeVarRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(:-(.*))?$`)
	// quotableRE is an unsupported template the report may quote: short,
	// closed, and made of the characters of variable names.
	quotableRE = regexp.MustCompile(`^\$\{[A-Za-z0-9_:./-]{0,40}\}$`)
)

// split cuts s into literal text and the templates the client defines.
// Every "${" starts a template, as in the clients and in volcanic.
func (c *converter) split(s string) []piece {
	var out []piece
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		if i > 0 {
			out = append(out, piece{kind: tLiteral, text: s[:i]})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			out = append(out, piece{kind: tUnsupported, text: s[i:], why: "a ${ without its closing }"})
			return out
		}
		out = append(out, c.classify(s[i:i+j+1]))
		s = s[i+j+1:]
	}
	if s != "" {
		out = append(out, piece{kind: tLiteral, text: s})
	}
	return out
}

// classify says what the template t ("${…}") means to the source client.
func (c *converter) classify(t string) piece {
	body := t[2 : len(t)-1]
	p := piece{text: t, kind: tUnsupported}
	switch c.opts.From {
	case VSCode, Cursor:
		switch {
		case body == "workspaceFolder":
			p.kind = tWorkspace
		case body == "pathSeparator" || body == "/":
			p.kind = tSeparator
		case strings.HasPrefix(body, "env:"):
			p.kind, p.name = tEnv, body[len("env:"):]
		case c.opts.From == VSCode && strings.HasPrefix(body, "input:"):
			p.kind, p.name = tInput, body[len("input:"):]
		case body == "userHome":
			p.why = "the editor user's home directory"
		case body == "workspaceFolderBasename":
			p.why = "the name of the editor's workspace folder"
		case strings.HasPrefix(body, "config:") || strings.HasPrefix(body, "command:"):
			p.why = "a value of the editor itself"
		default:
			p.why = "not a variable " + clientName(c.opts.From) + " defines"
		}
	default: // Claude Desktop, Claude Code: ${VAR} and ${VAR:-default}
		if m := claudeVarRE.FindStringSubmatch(body); m != nil {
			p.kind, p.name = tEnv, m[1]
			p.def, p.hasDef = m[3], m[2] != ""
		} else {
			p.why = "not a ${VAR} or ${VAR:-default} reference"
		}
	}
	return p
}

// hasTemplates reports whether any piece is a template.
func hasTemplates(ps []piece) bool {
	for _, p := range ps {
		if p.kind != tLiteral {
			return true
		}
	}
	return false
}

// shown is a template as the report may quote it: the default of
// ${VAR:-default} is a value and may be a credential, so it is left out.
func (p piece) shown() string {
	switch {
	case p.kind == tEnv && p.hasDef:
		return "${" + p.name + ":-…}"
	case p.kind == tUnsupported && !quotableRE.MatchString(p.text):
		return "a ${…}"
	}
	return p.text
}

// envVarFor turns a VS Code input id into a host variable name
// ("github-token" → GITHUB_TOKEN).
func envVarFor(id string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(id) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "INPUT_" + s
	}
	return s
}
