package term

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s as it may be shown on one line of a terminal: every
// character that could move the cursor, end the line, set the title (OSC),
// clear the screen, hide or reorder text is replaced by a Go-style escape
// (docs/decisions/0012-control-characters-in-output.md):
//
//   - \n, \r and \t as themselves, other C0 controls and DEL as \x1b;
//   - C1 controls (U+0080–U+009F) and format characters, among them the
//     bidi controls U+202A–U+202E and U+2066–U+2069, and the line and
//     paragraph separators, as \u009b, \u202e;
//   - a byte that is not UTF-8 as \x9b.
//
// Everything else, backslashes too, is kept. Text from servers, servers.json
// or a config file is printed through it, after redaction (an escape would
// hide a secret from the redactor).
func Escape(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++ // printable ASCII: most text has nothing to escape
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if esc, ok := EscapeRune(r, size, s[i]); ok {
			b.WriteString(esc)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// EscapeLines is Escape for text that is legitimately several lines (a
// message with a usage line): each line is escaped, the newlines between
// them are kept.
func EscapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// EscapeRune returns the escape of the character r, whose encoding in the
// text is size bytes long and starts with the byte first (first names an
// invalid byte, which decodes as utf8.RuneError of size 1), and whether r
// needs one.
func EscapeRune(r rune, size int, first byte) (string, bool) {
	switch EscapeLen(r, size) {
	case 0:
		return "", false
	case 2:
		switch r {
		case '\n':
			return `\n`, true
		case '\r':
			return `\r`, true
		}
		return `\t`, true
	case 4:
		if r == utf8.RuneError && size == 1 {
			return fmt.Sprintf(`\x%02x`, first), true
		}
		return fmt.Sprintf(`\x%02x`, r), true
	case 6:
		return fmt.Sprintf(`\u%04x`, r), true
	}
	return fmt.Sprintf(`\U%08x`, r), true
}

// EscapeLen is the length of EscapeRune's escape for r (0: none), known
// without building it, to measure text without allocating.
func EscapeLen(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size == 1:
		return len(`\x00`)
	case r == '\n', r == '\r', r == '\t':
		return len(`\n`)
	case r < 0x20 || r == 0x7f:
		return len(`\x00`)
	case r < utf8.RuneSelf: // printable ASCII, most of any text
		return 0
	case 0x80 <= r && r <= 0x9f,
		unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
		if r > 0xffff {
			return len(`\U00000000`)
		}
		return len(`\u0000`)
	}
	return 0
}
