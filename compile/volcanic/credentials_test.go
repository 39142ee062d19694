package volcanic

import "testing"

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
