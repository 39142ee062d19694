package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// RedactFragments hides what Redact hides, and also every piece of a
// secret of FragmentMin bytes or more, such as the first 32 bytes of a
// secret that a decoder's error quotes; shorter pieces and other text stay.
func TestRedactFragments(t *testing.T) {
	secret := "CANARY-frag-" + strings.Repeat("Jk4p", 20)
	r := New([]string{secret, "sh0rt"})
	for _, c := range []struct{ in, want string }{
		{"whole: " + secret + ".", "whole: [REDACTED]."},
		{`cannot unmarshal "{\"x\":\"` + secret[:32] + `..." into string`, `cannot unmarshal "{\"x\":\"[REDACTED]..." into string`},
		{"the end " + secret[len(secret)-9:] + " here", "the end [REDACTED] here"},
		{"a middle piece " + secret[20:28] + "!", "a middle piece [REDACTED]!"},
		{"too brief to tell: " + secret[:7], "too brief to tell: " + secret[:7]},
		{"sh0rt and sh0rtly", "[REDACTED] and sh0rtly"},
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
	r := New([]string{secret})
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

// Output redaction replaces whole tokens only, so that a secret that is
// also part of ordinary words does not mangle them; long secrets go
// wherever they stand; weak values are not redacted at all.
func TestRedactWholeTokens(t *testing.T) {
	long := "ghp_" + strings.Repeat("A1b2", 6) // 28 bytes: anywhere
	r := New([]string{"py7hon", "other", "python", "true", long, "x1"})
	for _, c := range []struct{ in, want string }{
		{"run py7hon now", "run [REDACTED] now"},
		{"py7hon3 and py7hon_x and xpy7hon", "py7hon3 and py7hon_x and xpy7hon"},
		{"(py7hon)", "([REDACTED])"},
		{"py7hon", "[REDACTED]"},
		{"--pw=py7hon;", "--pw=[REDACTED];"},
		{"épy7hon", "épy7hon"}, // a letter beyond ASCII continues the word
		// Weak values stay: ordinary words, and "true" in every result.
		{"another chat, python3, python, true", "another chat, python3, python, true"},
		{"tok" + long + "en", "tok[REDACTED]en"},
		{"x1 y", "x1 y"},
	} {
		if got := r.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWeakSecret(t *testing.T) {
	for s, want := range map[string]bool{
		"": true, "abc": true, "python": true, "Password": true, "changemeplz": true, "true": true,
		"ab12": false, "changemeplease": false, "hunter2": false, "py7hon": false, "ghp_abc": false,
		"пароль": true, " a1 ": true,
	} {
		if got := Weak(s); got != want {
			t.Errorf("Weak(%q) = %v, want %v", s, got, want)
		}
	}
}

// A PEM key is known line by line too, so that output handled a line at a
// time (a server's stderr) hides every line of it.
func TestRedactMultiLineSecret(t *testing.T) {
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n"
	r := New([]string{key})
	if got := r.Redact("key: " + key); got != "key: [REDACTED]" {
		t.Errorf("whole key: %q", got)
	}
	for _, line := range strings.Split(key, "\n") {
		if line == "" {
			continue
		}
		if got := r.Redact(line); strings.Contains(got, "MII") || strings.Contains(got, "BKcw") {
			t.Errorf("line %q → %q", line, got)
		}
	}
	if got := r.Redact("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\r"); got != "[REDACTED]\r" {
		t.Errorf("a line with CR: %q", got)
	}
}

func TestRedactorContains(t *testing.T) {
	r := New([]string{"python", "tok-1234-abcd", "sk-9876"})
	if i, ok := r.Contains("--key tok-1234-abcd"); !ok || i != 1 {
		t.Errorf("Contains = %d, %v", i, ok)
	}
	if _, ok := r.Contains("python3 -m sk-98765"); ok {
		t.Errorf("a weak value or the inside of a word was found")
	}
}

// Whatever the text, Redact leaves no strong secret that stands as a whole
// token, nor any secret of LongMin bytes or more anywhere; and the
// text around what it replaced is kept as it was.
func FuzzRedact(f *testing.F) {
	secrets := []string{"tok-1234", "ghp_" + strings.Repeat("Ab3", 6), "a1_b2", "python"}
	r := New(secrets)
	f.Add("run tok-1234 now, tok-12345 and xtok-1234")
	f.Add("ghp_Ab3Ab3Ab3Ab3Ab3Ab3Ab3 inside" + "ghp_Ab3Ab3Ab3Ab3Ab3Ab3")
	f.Add("a1_b2a1_b2 a1_b2 python")
	f.Fuzz(func(t *testing.T, s string) {
		out := r.Redact(s)
		if strings.Contains(out, secrets[1]) {
			t.Fatalf("%q → %q keeps a long secret", s, out)
		}
		for _, sec := range secrets[:3] {
			for from := 0; ; {
				i := strings.Index(out[from:], sec)
				if i < 0 {
					break
				}
				start, end := from+i, from+i+len(sec)
				before, _ := utf8.DecodeLastRuneInString(out[:start])
				after, _ := utf8.DecodeRuneInString(out[end:])
				if (start == 0 || !isWordRune(before)) && (end == len(out) || !isWordRune(after)) {
					t.Fatalf("%q → %q keeps %q as a token", s, out, sec)
				}
				from = start + 1
			}
		}
		if strings.Contains(s, Redacted) {
			return
		}
		rest := s
		for _, part := range strings.Split(out, Redacted) {
			i := strings.Index(rest, part)
			if i < 0 {
				t.Fatalf("%q → %q changed text it did not replace", s, out)
			}
			rest = rest[i+len(part):]
		}
	})
}
