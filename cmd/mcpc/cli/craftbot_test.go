package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Canary credentials written literally into mcp_config.json — a token, a
// weak word (too plain for output redaction), one in an unknown field —
// appear in no output of validate (every format), plan (stdout and -o) or
// explain (text and json), also when a diagnostic's excerpt shows their
// line, in a pretty, a minified and a broken file. The plan refers to them.
func TestCraftbotSecretsNeverPrinted(t *testing.T) {
	const token, weak, unknown = "ghp_CANARYcraftbot0123456789abcdef", "hunter", "CANARY-unknown-42"
	canaries := []string{token, weak, unknown}
	pretty := `{
  "auto_connect": true,
  "mcp_servers": [
    {"name": "github", "transport": "stdio", "command": "npx", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "` + token + `", "EMPTY": ""}, "enabled": true},
    {"name": "db", "transport": "stdio", "command": "npx", "env": {"DB_PASSWORD": "` + weak + `"}, "url": "http://x", "enabled": true, "api_key": "` + unknown + `"},
    {"name": "sentry", "transport": "sse", "url": "https://sentry.example.com/sse", "env": {"SENTRY_TOKEN": "` + token + `"}, "enabled": false}
  ]
}
`
	minified := strings.Join(strings.Fields(strings.ReplaceAll(pretty, ": ", ":")), " ")
	broken := strings.Replace(pretty, `"EMPTY": ""}`, `"EMPTY": "" "X": 1}`, 1)
	dir := t.TempDir()
	for name, content := range map[string]string{"pretty": pretty, "minified": minified, "broken": broken} {
		t.Run(name, func(t *testing.T) {
			cfg := write(t, dir, name+"/mcp_config.json", content)
			src := []string{"--clean-env", "--profile", "craftbot", "--config", cfg, "--target-os", "linux"}
			var out strings.Builder
			for _, format := range []string{"text", "json", "sarif", "github"} {
				code, stdout, stderr := run(t, append([]string{"validate", "--format", format}, src...)...)
				out.WriteString(stdout + stderr)
				if name != "broken" && code != ExitOK || name == "broken" && code != ExitProblems {
					t.Fatalf("validate --format %s: exit %d\n%s%s", format, code, stdout, stderr)
				}
			}
			if name != "broken" && !strings.Contains(out.String(), "[REDACTED]") {
				t.Errorf("no excerpt shows a hidden value:\n%s", out.String())
			}
			planFile := filepath.Join(dir, name+"/plan.json")
			code, stdout, stderr := run(t, append([]string{"plan", "-o", planFile}, src...)...)
			out.WriteString(stdout + stderr)
			if name != "broken" {
				data, err := os.ReadFile(planFile)
				if err != nil || code != ExitOK {
					t.Fatalf("plan: exit %d, %v\n%s", code, err, stderr)
				}
				out.Write(data)
				if !strings.Contains(string(data), `"GITHUB_PERSONAL_ACCESS_TOKEN": "${config:GITHUB_PERSONAL_ACCESS_TOKEN}"`) {
					t.Errorf("the plan does not refer to the token:\n%s", data)
				}
				for _, server := range []string{"github", "db", "sentry"} {
					for _, format := range []string{"text", "json"} {
						code, stdout, stderr := run(t, append([]string{"explain", server, "--format", format}, src...)...)
						out.WriteString(stdout + stderr)
						if code != ExitOK {
							t.Fatalf("explain %s: exit %d\n%s", server, code, stderr)
						}
					}
				}
			}
			for _, c := range canaries {
				if strings.Contains(out.String(), c) {
					t.Errorf("the canary %q appears in the output:\n%s", c, out.String())
				}
			}
		})
	}
}

// Without --config, craftbot reads app/config/mcp_config.json under the
// current directory, as CraftBot does; a missing file is unreadable input.
func TestCraftbotDefaultConfigPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, _, stderr := run(t, "validate", "--profile", "craftbot", "--clean-env")
	if code != ExitUsage || !strings.Contains(stderr, "app/config/mcp_config.json") {
		t.Errorf("missing default file: exit %d, %s", code, stderr)
	}
	write(t, dir, "app/config/mcp_config.json", `{"mcp_servers": [{"name": "fs", "transport": "stdio", "command": "npx", "enabled": true}]}`)
	code, stdout, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env")
	if code != ExitOK || !strings.Contains(stdout, `"path": "app/config/mcp_config.json"`) || !strings.Contains(stdout, `"profile": "craftbot"`) {
		t.Errorf("default file: exit %d\n%s%s", code, stdout, stderr)
	}
}

// Exit codes: warnings alone exit 0 (1 with --strict); a file no server can
// load from exits 1 without a plan; flags of the other profile, an unknown
// profile or target OS, and commands that do not take craftbot yet exit 2.
func TestCraftbotExitCodes(t *testing.T) {
	dir := t.TempDir()
	warn := write(t, dir, "warn.json", `{"mcp_servers": [{"name": "fs", "transport": "http", "enabled": false}]}`)
	bad := write(t, dir, "bad.json", `{"mcp_servers": {"fs": {}}}`)
	ok := write(t, dir, "ok.json", `{"mcp_servers": [{"name": "fs", "transport": "stdio", "command": "npx"}]}`)
	cb := func(file string, more ...string) []string {
		return append([]string{"--clean-env", "--profile", "craftbot", "--config", file}, more...)
	}
	planFile := filepath.Join(dir, "plan.json")
	if code, _, stderr := run(t, append([]string{"plan", "-o", planFile}, cb(ok)...)...); code != ExitOK {
		t.Fatalf("plan: exit %d %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want int
		says string
	}{
		{append([]string{"validate"}, cb(warn)...), ExitOK, "[cb-transport]"},
		{append([]string{"validate", "--strict"}, cb(warn)...), ExitProblems, "[cb-transport]"},
		{append([]string{"validate"}, cb(bad)...), ExitProblems, "[type-mismatch]"},
		{append([]string{"plan"}, cb(bad)...), ExitProblems, "no plan"},
		{append([]string{"validate"}, cb(ok, "--appsettings", ok)...), ExitUsage, "--appsettings belongs to --profile volcanic"},
		{append([]string{"plan"}, cb(ok, "--workspace", dir, "--resolve")...), ExitUsage, "belongs to --profile volcanic"},
		{[]string{"validate", "--clean-env", "--config", ok}, ExitUsage, "--config belongs to --profile craftbot"},
		{append([]string{"validate"}, cb(ok, "--target-os", "plan9")...), ExitUsage, "--target-os plan9"},
		{[]string{"validate", "--profile", "claude", "--clean-env"}, ExitUsage, "the profiles are volcanic and craftbot"},
		{append([]string{"tools"}, cb(ok, "--builtin-tools", "read")...), ExitUsage, "--builtin-actions"},
		{[]string{"tools", "--clean-env", "--agent-dir", dir, "--builtin-actions", "x"}, ExitUsage, "--builtin-actions belongs to --profile craftbot"},
		{[]string{"run", "--plan", planFile, "--stdio", "--workspace", dir, "--clean-env", "--scope", "s"}, ExitUsage, "craftbot plan"},
		{[]string{"tools", "--plan", planFile, "--clean-env"}, ExitUsage, "craftbot plan"},
		{append([]string{"explain", "nope"}, cb(ok)...), ExitUsage, `no server named "nope"`},
	} {
		code, stdout, stderr := run(t, c.args...)
		if code != c.want || !strings.Contains(stdout+stderr, c.says) {
			t.Errorf("mcpc %s: exit %d, want %d saying %q\n%s%s", strings.Join(c.args, " "), code, c.want, c.says, stdout, stderr)
		}
	}
}
