// Package placeholder recognises the values a catalog or a README leaves
// for the operator to fill in (C:/path/to/…, /path/to/…, <your-key>,
// YOUR_API_KEY): a server launched with one cannot start on any machine,
// and such a path says nothing about the OS the server runs on.
package placeholder

import (
	"regexp"
	"strings"
)

// patterns are the shapes of a placeholder, each anchored so that an
// ordinary word does not match: a path whose first directories are
// path/to, a name in angle brackets, a your-/YOUR_ word, and the usual
// "replace me" words.
var patterns = []*regexp.Regexp{
	// C:/path/to/x, C:\path\to\x, /path/to/x, ~/path/to/x, path/to/x,
	// also inside a value (--config=/path/to/x).
	regexp.MustCompile(`(?i)(?:^|[\s=:"'])(?:[a-z]:|~)?[\\/]?path[\\/]to(?:[\\/]|$)`),
	// <your-token>, <API_KEY>, <path to repo>
	regexp.MustCompile(`<[A-Za-z][A-Za-z0-9 _.:/-]{0,62}>`),
	// YOUR_API_KEY, your-api-key, your_token_here, https://your-domain.example.com
	regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9])your[-_][A-Za-z0-9]`),
	regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9])(?:replace[-_ ]?me|change[-_ ]?me|insert[-_ ]here)(?:$|[^A-Za-z0-9])`),
}

// In reports whether s holds a placeholder.
func In(s string) bool {
	if !mayHold(s) {
		return false
	}
	for _, p := range patterns {
		if p.MatchString(s) {
			return true
		}
	}
	return false
}

// mayHold is false when s cannot match a pattern: each needs one of these
// words (path, your, replace, change, insert) or both angle brackets. Lint
// asks about every argument of every server, and most hold none of them.
// A string that is not all ASCII goes to the patterns: (?i) folds some
// other letters to ASCII ones (ſ to s).
func mayHold(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	if strings.IndexByte(s, '<') >= 0 && strings.IndexByte(s, '>') >= 0 {
		return true
	}
	lower := strings.ToLower(s)
	for _, w := range []string{"path", "your", "replace", "change", "insert"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}
