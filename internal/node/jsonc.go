package node

import "bytes"

// standardize returns JSONC text as plain JSON: each comment and each
// trailing comma replaced by spaces (a comment's newlines kept), so that
// every value stays at its byte offset and the builder can read it
// (build.go) without hujson's syntax tree, which took more memory than the
// Nodes built from it.
//
// It blanks only what hujson accepts: a comment where whitespace may stand,
// ended by a newline (a line comment, without U+2028 or U+2029) or by */;
// and a comma that follows a value and comes before the } or ] that closes
// its container. Anything else is left as it is, so the result is valid
// JSON only when hujson accepts data. ok is false when there was nothing
// to blank, or when a comment is one hujson refuses: hujson then parses
// data, and its message is the one reported.
// FuzzJSONCBuildMatchesHujson holds the two paths equal.
func standardize(data []byte) (std []byte, ok bool) {
	blank := func(from, to int) {
		if std == nil {
			std = bytes.Clone(data)
		}
		for i := from; i < to; i++ {
			if std[i] != '\n' {
				std[i] = ' '
			}
		}
	}
	afterValue := false // the last token ended a value
	comma := -1         // a comma after a value, with only space and comments since
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case c == '/' && bytes.HasPrefix(data[i:], []byte("//")):
			end := bytes.IndexByte(data[i:], '\n')
			if end < 0 || bytes.ContainsRune(data[i:i+end], '\u2028') || bytes.ContainsRune(data[i:i+end], '\u2029') {
				return nil, false
			}
			blank(i, i+end)
			i += end
			continue
		case c == '/' && bytes.HasPrefix(data[i:], []byte("/*")):
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return nil, false
			}
			blank(i, i+2+end+2)
			i += 2 + end + 1
			continue
		case c == '"':
			i = stringEnd(data, i)
			afterValue, comma = true, -1
			continue
		case c == ',':
			if afterValue {
				comma = i
			} else {
				comma = -1
			}
			afterValue = false
			continue
		case c == '}' || c == ']':
			if comma >= 0 {
				blank(comma, comma+1)
			}
			afterValue, comma = true, -1
			continue
		}
		// A literal's byte (true, 12, …) ends a value; {, [ and : do not.
		afterValue, comma = c != '{' && c != '[' && c != ':', -1
	}
	return std, std != nil
}

// stringEnd is the offset of the quote that closes the string literal
// opening at data[start] (len(data) when it is not closed).
func stringEnd(data []byte, start int) int {
	for i := start + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(data)
}

// Comment is one comment of a JSONC text: its text without the // or the
// /* */, where it starts, and whether only space stands before it on its
// line (a comment on a line of its own).
type Comment struct {
	Text       string
	Start, End int // byte span of the comment, its // or /* */ included
	Alone      bool
}

// Comments returns the comments of JSONC data, read with the same lexing
// as standardize (a // or /* inside a string is no comment), in order.
func Comments(data []byte) []Comment {
	var out []Comment
	lineStart := 0
	alone := func(i int) bool { return len(bytes.TrimSpace(data[lineStart:i])) == 0 }
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '\n':
			lineStart = i + 1
		case c == '"':
			i = stringEnd(data, i)
		case c == '/' && bytes.HasPrefix(data[i:], []byte("//")):
			end := bytes.IndexByte(data[i:], '\n')
			if end < 0 {
				end = len(data) - i
			}
			out = append(out, Comment{Text: string(data[i+2 : i+end]), Start: i, End: i + end, Alone: alone(i)})
			i += end - 1
		case c == '/' && bytes.HasPrefix(data[i:], []byte("/*")):
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				end = len(data) - i - 2
			}
			out = append(out, Comment{Text: string(data[i+2 : i+2+end]), Start: i, End: min(i+2+end+2, len(data)), Alone: alone(i)})
			if nl := bytes.LastIndexByte(data[i:i+2+end], '\n'); nl >= 0 {
				lineStart = i + nl + 1
			}
			i += 2 + end + 1
		}
	}
	return out
}
