package actions

import (
	"fmt"
	"strings"
)

// The host writes each action's handler as Python source, pasting the
// server and tool names between double quotes (_server = "<server>",
// _tool = "<tool>"), and compiles it when it registers the action. So a
// name is read as a Python string literal: a quote or a line break ends
// it (the source does not compile and the action is never registered),
// and a backslash starts an escape (the handler calls the decoded name).

// Target is what an action's handler calls, or why its source does not
// compile (Problem; InServer: the server's name is the cause).
type Target struct {
	Server, Tool string
	Problem      string
	InServer     bool
	// Unresolved names the \N{…} escapes in the names, whose characters
	// mcpc does not know (Python's Unicode name table).
	Unresolved []string
}

// HandlerTarget is the server and tool name the handler of server's tool
// calls, as Python decodes them from its source.
func HandlerTarget(server, tool string) Target {
	var t Target
	var unresolved []string
	t.Server, t.Problem, unresolved = PythonLiteral(server)
	if t.Problem != "" {
		t.Problem, t.InServer = "the server name "+t.Problem, true
		return t
	}
	t.Unresolved = unresolved
	t.Tool, t.Problem, unresolved = PythonLiteral(tool)
	if t.Problem != "" {
		t.Problem = "the tool name " + t.Problem
	}
	t.Unresolved = append(t.Unresolved, unresolved...)
	return t
}

// Calls says what the handler calls instead of tool of server.
func (t Target) Calls(server, tool string) string {
	s := fmt.Sprintf("tool %q", t.Tool)
	if t.Server != server {
		s += fmt.Sprintf(" of server %q, which is not this server", t.Server)
	} else if t.Tool != tool {
		s += fmt.Sprintf(", not %q", tool)
	}
	if len(t.Unresolved) > 0 {
		s += fmt.Sprintf(", with %s read as the character Python names so (if Python knows no such name, the action is not registered)", strings.Join(t.Unresolved, ", "))
	}
	return s
}

// Misroutes reports whether the handler calls another name than server's
// tool (or one mcpc cannot decode).
func (t Target) Misroutes(server, tool string) bool {
	return t.Problem == "" && (t.Server != server || t.Tool != tool || len(t.Unresolved) > 0)
}

// PythonLiteral decodes s as the body of a Python 3 double-quoted string
// literal: the value, or the problem that makes the source fail to
// compile. \N{NAME} escapes are kept as written and listed in unresolved.
func PythonLiteral(s string) (value, problem string, unresolved []string) {
	if strings.ContainsRune(s, 0) {
		return "", "holds a NUL character, which Python source cannot hold", nil
	}
	var b strings.Builder
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch c {
		case '"':
			return "", `holds " (a double quote), which ends the string in the handler's source`, nil
		case '\n', '\r':
			return "", "holds a line break, which ends the line in the handler's source before the string is closed", nil
		case '\\':
		default:
			b.WriteRune(c)
			continue
		}
		if i+1 == len(r) {
			return "", `ends with \ (a backslash), which escapes the quote that closes the string in the handler's source`, nil
		}
		i++
		e := r[i]
		switch e {
		case '\n':
		case '\r':
			if i+1 < len(r) && r[i+1] == '\n' {
				i++
			}
		case '\\', '\'', '"':
			b.WriteRune(e)
		case 'a':
			b.WriteRune('\a')
		case 'b':
			b.WriteRune('\b')
		case 'f':
			b.WriteRune('\f')
		case 'n':
			b.WriteRune('\n')
		case 'r':
			b.WriteRune('\r')
		case 't':
			b.WriteRune('\t')
		case 'v':
			b.WriteRune('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for n := 1; n < 3 && i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(r[i]-'0')
			}
			b.WriteRune(rune(v))
		case 'x', 'u', 'U':
			n := map[rune]int{'x': 2, 'u': 4, 'U': 8}[e]
			v, ok := hexDigits(r[i+1:], n)
			if !ok || v > 0x10FFFF {
				return "", fmt.Sprintf(`holds \%c not followed by %d hexadecimal digits of a character, an escape Python refuses`, e, n), nil
			}
			i += n
			b.WriteRune(rune(v))
		case 'N':
			end := -1
			if i+1 < len(r) && r[i+1] == '{' {
				for j := i + 2; j < len(r); j++ {
					if r[j] == '}' {
						end = j
						break
					}
				}
			}
			if end < 0 || end == i+2 {
				return "", `holds \N not followed by {NAME}, an escape Python refuses`, nil
			}
			esc := string(r[i-1 : end+1])
			unresolved = append(unresolved, esc)
			b.WriteString(esc)
			i = end
		default:
			b.WriteRune('\\')
			b.WriteRune(e)
		}
	}
	return b.String(), "", unresolved
}

func hexDigits(r []rune, n int) (int, bool) {
	if len(r) < n {
		return 0, false
	}
	v := 0
	for _, c := range r[:n] {
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
