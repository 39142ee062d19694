package importer

import (
	"fmt"
	"strings"
)

// craftbotNameMax keeps mcp_<name>_<tool> an action name (CraftBot's
// schema: 1 to 58 characters).
const craftbotNameMax = 58

// sanitizeName makes a server name of A-Z a-z 0-9 _ -: one _ per other
// character. The characters are craftbot's (the name becomes part of
// action names) and, for volcanic, those that survive every place a name
// goes: a .NET configuration key (where : separates sections), an
// environment key (Mcp__Servers__<name>__Command) and the /mcp commands.
func sanitizeName(name, target string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		s = "server"
	}
	if target == Craftbot && len(s) > craftbotNameMax {
		s = s[:craftbotNameMax]
	}
	return s
}

// assignNames gives each entry its target name, unique as the target
// compares names (case-insensitively: the host's configuration keys ignore
// case), and reports every name that changed.
func (c *converter) assignNames(es []*entry) {
	taken := map[string]bool{}
	for _, e := range es {
		base := sanitizeName(e.orig, c.opts.To)
		name := base
		for i := 2; taken[strings.ToLower(name)]; i++ {
			suffix := fmt.Sprintf("_%d", i)
			b := base
			if c.opts.To == Craftbot && len(b)+len(suffix) > craftbotNameMax {
				b = b[:craftbotNameMax-len(suffix)]
			}
			name = b + suffix
		}
		taken[strings.ToLower(name)] = true
		e.name = name
		switch {
		case name == e.orig:
		case base == e.orig:
			c.report(e.namePos, Renamed, fmt.Sprintf("server %q became %q: the name is taken (the target compares names ignoring case)", e.orig, name), "")
		default:
			c.report(e.namePos, Renamed, fmt.Sprintf("server %q became %q: a name holds only A-Z a-z 0-9 _ -%s", e.orig, name, c.nameLimit()), "")
		}
	}
}

func (c *converter) nameLimit() string {
	if c.opts.To == Craftbot {
		return fmt.Sprintf(", at most %d characters", craftbotNameMax)
	}
	return ""
}
