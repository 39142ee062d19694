package compile

import (
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// parseDotenv reads an env file: NAME=VALUE lines, blank lines and #
// comments, an optional "export " before the name, values optionally in
// single quotes (taken literally) or double quotes (with \n, \t, \r, \", \\
// and \$ escapes). A quoted value may span lines, as python-dotenv, docker
// compose and node's dotenv read it (a PEM key, say); an unquoted value
// runs to the end of its line, trailing blanks trimmed; after a closing
// quote only blanks or a # comment may follow. A name has letters, digits
// and _ . - : only.
//
// A line that does not parse may be part of a secret (a key's body
// continued without quotes): a diagnostic names its line and its shape and
// never quotes it, and its excerpt shows only the name and = of a line
// whose name parsed (masks holds the replacement of each such line). The
// lines of a secret's value (secret tells which names are secrets) are
// masked too, whatever their length.
func parseDotenv(file string, data []byte, secret func(string) bool) (vars []*EnvVar, ds []diag.Diagnostic, masks map[int]string) {
	ix := node.NewLineIndex(file, data)
	masks = map[int]string{}
	if secret == nil {
		secret = func(string) bool { return false }
	}
	if !utf8.Valid(data) {
		return nil, []diag.Diagnostic{rules.EnvFileSyntax.At(diag.Pos{File: file, Line: 1, Column: 1}, "the file is not valid UTF-8", "save the file as UTF-8")}, nil
	}
	for lineNo := 1; ; lineNo++ {
		line, ok := ix.Line(lineNo)
		if !ok {
			break
		}
		first := lineNo
		at := func(byteCol int) diag.Pos {
			return diag.Pos{File: file, Line: first, Column: utf8.RuneCountInString(line[:byteCol]) + 1}
		}
		// mask shows lines first to lastLine in excerpts as shown (the
		// name and =, or nothing) and [REDACTED].
		mask := func(shown string, lastLine int) {
			masks[first] = shown + redact.Redacted
			for n := first + 1; n <= lastLine; n++ {
				masks[n] = redact.Redacted
			}
		}
		fail := func(byteCol int, msg, suggestion string, shown string, lastLine int) {
			ds = append(ds, rules.EnvFileSyntax.At(at(byteCol), msg, suggestion))
			mask(shown, lastLine)
		}
		i := skipBlanks(line, 0)
		if i == len(line) || line[i] == '#' {
			continue
		}
		if strings.HasPrefix(line[i:], "export ") {
			i = skipBlanks(line, i+len("export "))
		}
		keyStart := i
		eq := strings.IndexByte(line[i:], '=')
		if eq < 0 {
			fail(keyStart, "expected NAME=value, but the line has no = (its text is not shown: it may be part of a value)",
				"write it as NAME=value; a value on several lines goes in double quotes", "", first)
			continue
		}
		key := strings.TrimRight(line[keyStart:keyStart+eq], " \t")
		if problem, suggestion := nameProblem(key); problem != "" {
			fail(keyStart, "the text before = is not a variable name: "+problem+" (the line is not shown)", suggestion, "", first)
			continue
		}
		hidden := secret(key)
		j := skipBlanks(line, keyStart+eq+1)
		shown := line[:j] // the name and =: the part of the line that is no value
		v := &EnvVar{Name: key, Source: "env-file", Loc: node.LocOf(at(keyStart)), ValueLoc: node.LocOf(at(j))}
		rest := line[j:]
		last := first
		if rest != "" && (rest[0] == '\'' || rest[0] == '"') {
			q := quotedValue{quote: rest[0]}
			after, closed := q.read(rest[1:])
			for !closed {
				next, ok := ix.Line(last + 1)
				if !ok {
					break
				}
				last++
				q.b.WriteByte('\n')
				after, closed = q.read(next)
			}
			if !closed {
				what := "double"
				if q.quote == '\'' {
					what = "single"
				}
				fail(j, "the "+what+" quote that opens the value of "+key+" is not closed before the end of the file",
					"close it with "+string(q.quote)+"; a quoted value may span several lines", shown, last)
				break
			}
			v.Value, v.TextOffset = q.b.String(), 1
			if t := strings.TrimLeft(after, " \t"); t != "" && t[0] != '#' {
				endLine, _ := ix.Line(last)
				col := utf8.RuneCountInString(endLine[:len(endLine)-len(t)]) + 1
				ds = append(ds, rules.EnvFileSyntax.At(diag.Pos{File: file, Line: last, Column: col},
					"unexpected text after the quoted value of "+key+" (the text is not shown: it may be part of a value)", "put a # before a comment, or quote the whole value"))
				mask(shown, last)
				lineNo = last
				continue
			}
		} else {
			v.Value = strings.TrimRight(rest, " \t")
		}
		if hidden {
			// A secret's value never shows in an excerpt, even one too weak
			// to redact by value.
			mask(shown, last)
		}
		vars = append(vars, v)
		lineNo = last
	}
	return vars, ds, masks
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// nameProblem says what keeps the text before = from being a variable
// name, by its shape only, and what to write instead; "" when it is one.
func nameProblem(key string) (problem, suggestion string) {
	const fix = "write it as NAME=value"
	switch {
	case key == "":
		return "there is no name", fix
	case len(key) >= 2 && (key[0] == '"' || key[0] == '\'') && key[len(key)-1] == key[0]:
		return "the name is in quotes, so the variable's name would include them", "write the name without quotes: NAME=value"
	case strings.ContainsAny(key, " \t"):
		return "it has a blank in it", fix
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c == '_' || c == '.' || c == '-' || c == ':' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "it has a character other than letters, digits, _ . - and :", fix
		}
	}
	return "", ""
}

// quotedValue reads a quoted value line by line, up to its closing quote.
type quotedValue struct {
	quote byte
	b     strings.Builder
}

// read takes the next piece of the value (a line, or the rest of the
// first one) and returns the text after the closing quote, if it has one.
func (q *quotedValue) read(s string) (after string, closed bool) {
	if q.quote == '\'' {
		end := strings.IndexByte(s, '\'')
		if end < 0 {
			q.b.WriteString(s)
			return "", false
		}
		q.b.WriteString(s[:end])
		return s[end+1:], true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return s[i+1:], true
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				q.b.WriteByte('\n')
			case 't':
				q.b.WriteByte('\t')
			case 'r':
				q.b.WriteByte('\r')
			case '"', '\\', '$':
				q.b.WriteByte(s[i])
			default:
				q.b.WriteByte('\\')
				q.b.WriteByte(s[i])
			}
		default:
			q.b.WriteByte(c)
		}
	}
	return "", false
}
