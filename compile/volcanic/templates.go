package volcanic

import (
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// validEnvName reports whether name is a portable environment variable
// name, ^[A-Za-z_][A-Za-z0-9_]*$ (FuzzValidEnvName holds the two equal),
// read byte by byte: every env key of every server is asked, and the
// expression was a few percent of a large validation.
func validEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// textPos is the position of rune offset off inside a string node's text.
func textPos(n *node.Node, off int) diag.Pos {
	p := n.Pos()
	p.Column += int(n.TextOffset) + off
	return p
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
