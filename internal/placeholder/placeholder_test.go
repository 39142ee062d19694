package placeholder

import "testing"

func TestIn(t *testing.T) {
	yes := []string{
		"C:/path/to/apple-notes-mcp/dist/index.js", `C:\path\to\server.py`, "/path/to/repo", "~/path/to/x",
		"path/to/credentials.json", "--config=/path/to/config.json", "<your-token>", "<API_KEY>",
		"Bearer <token>", "YOUR_API_KEY", "your-api-key", "your_token_here", "https://your-domain.atlassian.net",
		"REPLACE_ME", "changeme",
	}
	no := []string{
		"", "npx", "-y", "@playwright/mcp@0.0.82", "/usr/local/bin/server", "C:/Tools/mcp.exe",
		"/srv/paths/together", "yourself", "a<b", "x > y", "3<4>5", "/home/me/project", "flavour-x",
		"https://mcp.example.com/sse", "ghp_0123456789abcdef", "${env:GITHUB_TOKEN}", "${workspace}/path/tools",
	}
	for _, s := range yes {
		if !In(s) {
			t.Errorf("In(%q) = false, want true", s)
		}
	}
	for _, s := range no {
		if In(s) {
			t.Errorf("In(%q) = true, want false", s)
		}
	}
}

// The literal check before the patterns changes no answer.
func FuzzMayHoldKeepsEveryMatch(f *testing.F) {
	for _, s := range []string{"C:/path/to/x", "<your-token>", "YOUR_API_KEY", "inſert here", "REPLACE_ME", "npx", "a<b>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		matched := false
		for _, p := range patterns {
			matched = matched || p.MatchString(s)
		}
		if matched && !mayHold(s) {
			t.Errorf("%q matches a pattern, and mayHold says it cannot", s)
		}
	})
}
