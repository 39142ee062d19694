package volcanic

import (
	"math"
	"regexp"
	"strings"
	"unicode"
)

// credentialPatterns are the shapes of well-known credentials. A value of
// a host file or settings.json that holds one is secret-literal: it ends up
// in the repository and in the plan, and where the field shows (exposure).
var credentialPatterns = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a GitHub token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}`)},
	{"a GitHub fine-grained token", regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},
	{"an Anthropic API key", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{"an API key (sk-)", regexp.MustCompile(`\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}`)},
	{"a Slack token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"an AWS access key id", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"a JSON Web Token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"a private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`)},
}

// minCredentialLen is the length of the shortest credential shape above
// (a Slack token: xoxb- and 10 more).
const minCredentialLen = 15

// keyLike matches variable names that hold credentials.
var keyLike = regexp.MustCompile(`(?i)(key|token|secret|password|passwd|credential|auth)`)

// credentialIn finds a credential written into value: a well-known shape
// anywhere, or, under a key-like env name, a long high-entropy word. It
// returns what it looks like and the credential's text ("" when none).
func credentialIn(value, envKey string) (what, found string) {
	for _, p := range credentialPatterns {
		if m := p.re.FindString(value); m != "" {
			return p.what, m
		}
	}
	if envKey != "" && keyLike.MatchString(envKey) && highEntropy(value) {
		return "a high-entropy value under " + envKey, value
	}
	return "", ""
}

// highEntropy: one word of at least 20 characters, letters and digits mixed,
// no template, and at least 3.5 bits of entropy per character — the shape of
// a generated key, not of a path, a URL or a sentence.
func highEntropy(s string) bool {
	if len(s) < 20 || strings.Contains(s, "${") || strings.ContainsAny(s, " /\\:") {
		return false
	}
	letters, digits := false, false
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters = true
		case unicode.IsDigit(r):
			digits = true
		}
		counts[r]++
		n++
	}
	if !letters || !digits {
		return false
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h >= 3.5
}
