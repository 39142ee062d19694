package volcanic

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

func TestCredentialIn(t *testing.T) {
	for _, c := range []struct {
		value, key, want string
	}{
		{"ghp_" + "0123456789abcdefghijABCDEFGHIJ012345", "", "a GitHub token"},
		{"Bearer sk-proj-" + "abcdefghijklmnopqrstuvwx", "", "an API key (sk-)"},
		{"AKIA" + "ABCDEFGHIJKLMNOP", "", "an AWS access key id"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", "", "a private key"},
		{"Zq8vT3mK9pL2xR7wN4bH6jF1", "API_TOKEN", "a high-entropy value under API_TOKEN"},
		// Near misses: no credential.
		{"Zq8vT3mK9pL2xR7wN4bH6jF1", "LOG_LEVEL", ""},
		{"https://search.example.com/v1/query", "API_URL", ""},
		{"${env:GITHUB_TOKEN}", "GITHUB_TOKEN", ""},
		{"aaaaaaaaaaaaaaaaaaaaaaaa1", "SECRET", ""},
		{"@modelcontextprotocol/server-github@2025.4.8", "", ""},
		{"task-skip-unpinned-servers", "", ""},
	} {
		if got, _ := credentialIn(c.value, c.key); got != c.want {
			t.Errorf("credentialIn(%q, %q) = %q, want %q", c.value, c.key, got, c.want)
		}
	}
}

// TestCredentialLiteralsPrefilter: each pattern's literals are the
// prefixes every match of its expression starts with, read from the
// expression itself, so that the prefilter (mayMatch) never drops a value
// the expression would match.
func TestCredentialLiteralsPrefilter(t *testing.T) {
	for _, p := range credentialPatterns {
		prefixes, err := matchPrefixes(p.re().String())
		if err != nil {
			t.Errorf("%s: %v", p.what, err)
			continue
		}
		slices.Sort(prefixes)
		got := slices.Sorted(slices.Values(p.literals))
		if !slices.Equal(got, prefixes) {
			t.Errorf("%s: literals %q, the expression's prefixes %q", p.what, got, prefixes)
		}
	}
}

// matchPrefixes returns the literal strings one of which every match of the
// expression re starts with: the expression's leading literals, character
// classes and alternations of them expanded, after its leading zero-width
// assertions (\b).
func matchPrefixes(re string) ([]string, error) {
	x, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil, err
	}
	x = x.Simplify()
	parts := []*syntax.Regexp{x}
	if x.Op == syntax.OpConcat {
		parts = x.Sub
	}
	prefixes := []string{""}
	for _, part := range parts {
		if part.Op == syntax.OpWordBoundary || part.Op == syntax.OpEmptyMatch {
			if prefixes[0] == "" {
				continue
			}
			break
		}
		alts, ok := literalSet(part)
		if !ok {
			break
		}
		var next []string
		for _, p := range prefixes {
			for _, a := range alts {
				next = append(next, p+a)
			}
		}
		prefixes = next
	}
	if slices.Contains(prefixes, "") {
		return nil, fmt.Errorf("%s: no literal prefix", re)
	}
	return prefixes, nil
}

// literalSet returns the strings x matches when it is a literal, a small
// character class or an alternation of such.
func literalSet(x *syntax.Regexp) ([]string, bool) {
	if x.Flags&syntax.FoldCase != 0 {
		return nil, false
	}
	switch x.Op {
	case syntax.OpLiteral:
		return []string{string(x.Rune)}, true
	case syntax.OpCharClass:
		var out []string
		for i := 0; i < len(x.Rune); i += 2 {
			if x.Rune[i+1]-x.Rune[i] > 8 {
				return nil, false
			}
			for r := x.Rune[i]; r <= x.Rune[i+1]; r++ {
				out = append(out, string(r))
			}
		}
		return out, len(out) > 0 && len(out) <= 8
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range x.Sub {
			alts, ok := literalSet(sub)
			if !ok {
				return nil, false
			}
			var next []string
			for _, p := range out {
				for _, a := range alts {
					next = append(next, p+a)
				}
			}
			out = next
		}
		return out, true
	case syntax.OpAlternate:
		var out []string
		for _, sub := range x.Sub {
			alts, ok := literalSet(sub)
			if !ok {
				return nil, false
			}
			out = append(out, alts...)
		}
		return out, true
	}
	return nil, false
}

// FuzzCredentialLiterals: whatever the value, the prefilter keeps every
// value an expression matches, and credentialIn finds what the
// expressions alone find.
func FuzzCredentialLiterals(f *testing.F) {
	for _, s := range []string{
		"ghp_" + strings.Repeat("a1", 18), "x ghs_" + strings.Repeat("Z", 40) + " y", "github_pat_" + strings.Repeat("b", 30),
		"sk-ant-" + strings.Repeat("c", 25), "Bearer sk-proj-" + strings.Repeat("d", 24), "xoxb-" + strings.Repeat("1", 12),
		"AKIA" + strings.Repeat("Q", 16), "id=ASIA" + strings.Repeat("7", 16) + ";",
		"eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl", "-----BEGIN EC PRIVATE KEY-----\nabc\n-----END EC PRIVATE KEY-----",
		"@scope/server-1@1.2.3", "${workspace}/data", "", "ghp_short", "sk-", "eyJ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		want := ""
		for _, p := range credentialPatterns {
			if m := p.re().FindString(value); m != "" {
				if !p.mayMatch(value) {
					t.Fatalf("%s matches %q, the prefilter drops it", p.what, value)
				}
				if want == "" {
					want = p.what
				}
			}
		}
		if got, _ := credentialIn(value, ""); got != want {
			t.Fatalf("credentialIn(%q) = %q, the expressions find %q", value, got, want)
		}
	})
}

// FuzzValidEnvName: validEnvName is the expression it replaces.
func FuzzValidEnvName(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{"", "A", "_", "9A", "A9", "A-B", "API_TOKEN", "é", "A\n", "a b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validEnvName(s), re.MatchString(s); got != want {
			t.Fatalf("validEnvName(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
