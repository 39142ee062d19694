package compile

import (
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/node"
	"github.com/mcpc-dev/mcpc/redact"
	"github.com/mcpc-dev/mcpc/rules"
)

// parseDotenv reads an env file: KEY=VALUE lines, blank lines and # comments,
// an optional "export " before the key, values optionally in single quotes
// (taken literally) or double quotes (with \n, \t, \", \\ and \$ escapes).
// An unquoted value runs to the end of the line, trailing blanks trimmed;
// after a closing quote only blanks or a # comment may follow.
//
// secret tells which names are secrets: a line that does not parse is then
// neither quoted in a message nor shown in an excerpt (masks holds its
// replacement), since mcpc cannot tell where its value starts.
func parseDotenv(file string, data []byte, secret func(string) bool) (vars []*EnvVar, ds []diag.Diagnostic, masks map[int]string) {
	ix := node.NewLineIndex(file, data)
	masks = map[int]string{}
	if secret == nil {
		secret = func(string) bool { return false }
	}
	if !utf8.Valid(data) {
		return nil, []diag.Diagnostic{rules.EnvFileSyntax.At(diag.Pos{File: file, Line: 1, Column: 1}, "the file is not valid UTF-8", "save the file as UTF-8")}, nil
	}
	lineNo := 0
	for {
		lineNo++
		line, ok := ix.Line(lineNo)
		if !ok {
			break
		}
		at := func(byteCol int) diag.Pos {
			return diag.Pos{File: file, Line: lineNo, Column: utf8.RuneCountInString(line[:byteCol]) + 1}
		}
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) || line[i] == '#' {
			continue
		}
		if strings.HasPrefix(line[i:], "export ") {
			i += len("export ")
			for i < len(line) && line[i] == ' ' {
				i++
			}
		}
		keyStart := i
		guess := leadingName(line[keyStart:])
		hidden := secret(guess)
		if hidden {
			masks[lineNo] = line[:keyStart] + guess + " " + redact.Redacted
		}
		eq := strings.IndexByte(line[i:], '=')
		if eq < 0 {
			got := quoteShort(strings.TrimSpace(line[keyStart:]))
			if hidden {
				got = "a line starting with " + guess + " (its value is a secret and not shown)"
			}
			ds = append(ds, rules.EnvFileSyntax.At(at(keyStart),
				"expected KEY=VALUE, got "+got, "write it as NAME=value"))
			continue
		}
		key := strings.TrimRight(line[keyStart:keyStart+eq], " \t")
		if key == "" || strings.ContainsAny(key, " \t") {
			ds = append(ds, rules.EnvFileSyntax.At(at(keyStart),
				"expected a variable name before =, got "+quoteShort(key), "write it as NAME=value"))
			continue
		}
		j := keyStart + eq + 1
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		v := &EnvVar{Name: key, Source: "env-file", Loc: node.LocOf(at(keyStart)), ValueLoc: node.LocOf(at(j))}
		rest := line[j:]
		switch {
		case strings.HasPrefix(rest, "'"):
			end := strings.IndexByte(rest[1:], '\'')
			if end < 0 {
				ds = append(ds, rules.EnvFileSyntax.At(at(j), "the single quote that opens the value of "+key+" is not closed", "close it with ' on the same line"))
				continue
			}
			v.Value, v.TextOffset = rest[1:1+end], 1
			if d, bad := trailing(rest[2+end:], at(j+2+end), hidden); bad {
				ds = append(ds, d)
				continue
			}
		case strings.HasPrefix(rest, `"`):
			val, n, closed := unquoteDouble(rest[1:])
			if !closed {
				ds = append(ds, rules.EnvFileSyntax.At(at(j), "the double quote that opens the value of "+key+" is not closed", `close it with " on the same line`))
				continue
			}
			v.Value, v.TextOffset = val, 1
			if d, bad := trailing(rest[1+n:], at(j+1+n), hidden); bad {
				ds = append(ds, d)
				continue
			}
		default:
			v.Value = strings.TrimRight(rest, " \t")
		}
		if hidden {
			// A secret's value never shows in an excerpt, even one too weak
			// to redact by value.
			masks[lineNo] = line[:j] + redact.Redacted
		} else {
			delete(masks, lineNo) // parsed: redaction by value applies
		}
		vars = append(vars, v)
	}
	return vars, ds, masks
}

// leadingName is the variable name a line seems to start with.
func leadingName(s string) string {
	end := 0
	for end < len(s) && (s[end] == '_' || s[end] >= 'A' && s[end] <= 'Z' || s[end] >= 'a' && s[end] <= 'z' || s[end] >= '0' && s[end] <= '9') {
		end++
	}
	return s[:end]
}

func trailing(s string, pos diag.Pos, hidden bool) (diag.Diagnostic, bool) {
	t := strings.TrimLeft(s, " \t")
	if t == "" || t[0] == '#' {
		return diag.Diagnostic{}, false
	}
	pos.Column += len(s) - len(t)
	what := ": " + quoteShort(t)
	if hidden {
		what = ""
	}
	return rules.EnvFileSyntax.At(pos, "unexpected text after the closing quote"+what, "put a # before a comment, or quote the whole value"), true
}

// unquoteDouble reads a double-quoted value up to its closing quote and
// returns the value and the bytes consumed (including the closing quote).
func unquoteDouble(s string) (string, int, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\', '$':
				b.WriteByte(s[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", len(s), false
}
