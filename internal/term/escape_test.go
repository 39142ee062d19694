package term

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The attacks of the issue: clear the screen, set the title (OSC), return
// to the start of the line, the 8-bit CSI, and the rest of what reaches a
// terminal as other than text.
func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain ascii ~!@#$%^&*()", "plain ascii ~!@#$%^&*()"},
		{"é 日本 👍 naïve", "é 日本 👍 naïve"},
		{`C:\Users\x \x1b`, `C:\Users\x \x1b`}, // backslashes kept: Escape(Escape(s)) == Escape(s)
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"ok\rFAKE", `ok\rFAKE`},
		{"a\u009b2Jb", `a\u009b2Jb`},
		{"a\nb\tc", `a\nb\tc`},
		{"\x00\x08\x7f", `\x00\x08\x7f`},
		{"bad \x9b \xff\xfe utf-8", `bad \x9b \xff\xfe utf-8`},
		{"\xe2\x80", `\xe2\x80`}, // a cut sequence: each byte
		{"abc\u202eexe.txt", `abc\u202eexe.txt`},
		{"\u2066\u2067\u2068\u2069\u202a\u202b\u202c\u202d", `\u2066\u2067\u2068\u2069\u202a\u202b\u202c\u202d`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"tag\U000e0041", `tag\U000e0041`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Escape(Escape(c.in)); got != c.want {
			t.Errorf("Escape is not idempotent on %q: %q", c.in, got)
		}
	}
}

func TestEscapeLines(t *testing.T) {
	in := "first\x1b[2J\n\tsecond\r\n\u009bthird"
	want := "first\\x1b[2J\n\\tsecond\\r\n\\u009bthird"
	if got := EscapeLines(in); got != want {
		t.Errorf("EscapeLines(%q) = %q, want %q", in, got, want)
	}
}

// FuzzEscape: whatever the input, the output is valid UTF-8 without a
// control, format or separator character, and unescaped text is kept.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2J", "\x1b]0;pwned\x07", "\r", "\u009b", "\xff", "\u202e", "日本\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Escape(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
				t.Fatalf("Escape(%q) = %q holds %U", s, out, r)
			}
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return EscapeLen(r, utf8.RuneLen(r)) > 0 }) && out != s {
			t.Fatalf("Escape(%q) = %q: changed text without controls", s, out)
		}
		if lines := EscapeLines(s); strings.Count(lines, "\n") != strings.Count(s, "\n") {
			t.Fatalf("EscapeLines(%q) = %q: lines lost or added", s, lines)
		}
	})
}
