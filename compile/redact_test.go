package compile

import (
	"strings"
	"testing"
)

// RedactFragments hides what Redact hides, and also every piece of a
// secret of FragmentMin bytes or more, such as the first 32 bytes of a
// secret that a decoder's error quotes; shorter pieces and other text stay.
func TestRedactFragments(t *testing.T) {
	secret := "CANARY-frag-" + strings.Repeat("Jk4p", 20)
	r := NewRedactor([]string{secret, "short"})
	for _, c := range []struct{ in, want string }{
		{"whole: " + secret + ".", "whole: [REDACTED]."},
		{`cannot unmarshal "{\"x\":\"` + secret[:32] + `..." into string`, `cannot unmarshal "{\"x\":\"[REDACTED]..." into string`},
		{"the end " + secret[len(secret)-9:] + " here", "the end [REDACTED] here"},
		{"a middle piece " + secret[20:28] + "!", "a middle piece [REDACTED]!"},
		{"too brief to tell: " + secret[:7], "too brief to tell: " + secret[:7]},
		{"short and shortly", "[REDACTED] and [REDACTED]ly"},
		{"nothing secret here at all", "nothing secret here at all"},
		{"two pieces " + secret[:10] + secret[40:50] + " joined", "two pieces [REDACTED] joined"},
		{strings.Repeat("x", 1<<20) + secret[5:30], strings.Repeat("x", 1<<20) + "[REDACTED]"},
		{"", ""},
	} {
		if got := r.RedactFragments(c.in); got != c.want {
			t.Errorf("%q\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	if got := (&Redactor{}).RedactFragments("CANARY-frag-Jk4p"); got != "CANARY-frag-Jk4p" {
		t.Errorf("the zero redactor: %q", got)
	}
}

// Whatever the text, no FragmentMin-byte piece of a secret is left.
func FuzzRedactFragments(f *testing.F) {
	secret := "sk-Fuzz-" + strings.Repeat("a1B2", 8) + "-end"
	r := NewRedactor([]string{secret})
	f.Add("before " + secret[3:20] + " after")
	f.Add(secret[:9] + secret[9:18] + "x" + secret[20:])
	f.Add(strings.Repeat("a1B2", 20))
	f.Fuzz(func(t *testing.T, s string) {
		out := r.RedactFragments(s)
		for i := 0; i+FragmentMin <= len(secret); i++ {
			if strings.Contains(out, secret[i:i+FragmentMin]) {
				t.Fatalf("%q → %q keeps %q", s, out, secret[i:i+FragmentMin])
			}
		}
	})
}
