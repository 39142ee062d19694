package volcanic

import (
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// credentialPattern is the shape of a well-known credential: a regular
// expression and the literals one of which every match of it holds. Each
// expression starts with \b, so Go's regexp has no literal prefix to skip
// to and scanned every value byte by byte, eight times; the literals are
// looked for first (TestCredentialLiteralsPrefilter, FuzzCredentialLiterals:
// no value the expression matches lacks them).
type credentialPattern struct {
	what     string
	literals []string
	re       func() *regexp.Regexp
}

func credential(what, pattern string, literals ...string) credentialPattern {
	return credentialPattern{what: what, literals: literals, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })}
}

// mayMatch is false when value holds none of p's literals, so that p's
// expression cannot match it.
func (p *credentialPattern) mayMatch(value string) bool {
	for _, l := range p.literals {
		if strings.Contains(value, l) {
			return true
		}
	}
	return false
}

// credentialPatterns are the shapes of well-known credentials. A value of
// a host file or settings.json that holds one is secret-literal: it ends up
// in the repository and in the plan, and where the field shows (exposure).
var credentialPatterns = []credentialPattern{
	credential("a GitHub token", `\bgh[pousr]_[A-Za-z0-9]{36,}`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
	credential("a GitHub fine-grained token", `\bgithub_pat_[A-Za-z0-9_]{22,}`, "github_pat_"),
	credential("an Anthropic API key", `\bsk-ant-[A-Za-z0-9_-]{20,}`, "sk-ant-"),
	credential("an API key (sk-)", `\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}`, "sk-"),
	credential("a Slack token", `\bxox[abprs]-[A-Za-z0-9-]{10,}`, "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"),
	credential("an AWS access key id", `\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`, "AKIA", "ASIA"),
	credential("a JSON Web Token", `\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, "eyJ"),
	credential("a private key", `-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`, "-----BEGIN "),
}

// minCredentialLen is the length of the shortest credential shape above
// (a Slack token: xoxb- and 10 more).
const minCredentialLen = 15

// keyLike matches variable names that hold credentials.
var keyLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(key|token|secret|password|passwd|credential|auth)`)
})

// credentialIn finds a credential written into value: a well-known shape
// anywhere, or, under a key-like env name, a long high-entropy word. It
// returns what it looks like and the credential's text ("" when none).
func credentialIn(value, envKey string) (what, found string) {
	for i := range credentialPatterns {
		p := &credentialPatterns[i]
		if !p.mayMatch(value) {
			continue
		}
		if m := p.re().FindString(value); m != "" {
			return p.what, m
		}
	}
	if envKey != "" && highEntropy(value) && keyLike().MatchString(envKey) {
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
