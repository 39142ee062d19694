package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diffDeploymentDir writes a deployment directory: mcpc.cue and its files.
func diffDeploymentDir(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func volcanicDeployment(t *testing.T, dir, side, extra string) string {
	return diffDeploymentDir(t, dir, map[string]string{
		"mcpc.cue": `profile: "volcanic"
sources: {appsettings: ["appsettings.json"], envFiles: ["host.env"], agentDir: "agent", cleanEnv: true}
`,
		"host.env": "GITHUB_TOKEN=canary-deny-" + side + "-4f1d\nMcp__Servers__srv__Env__API_TOKEN=canary-bound-" + side + "-93ab\n",
		"appsettings.json": `{"Mcp": {"Servers": {
  "gh": {"command": "npx", "args": ["-y", "gh-mcp@1.0.0"], "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}", "SESSION_SETTING": "canary-literal-` + side + `-77c2"` + extra + `}},
  "srv": {"command": "srv-mcp", "args": ["--` + side + `"]}}}}`,
		"agent/settings.json": `{}`,
	})
}

func craftbotDeployment(t *testing.T, dir, side string) string {
	return diffDeploymentDir(t, dir, map[string]string{
		"mcpc.cue": "profile: \"craftbot\"\nsources: config: \"mcp_config.json\"\n",
		"mcp_config.json": `{"auto_connect": true, "mcp_servers": [
  {"name": "gh", "transport": "stdio", "command": "npx", "args": ["-y", "gh-mcp@1.0.0"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "canary-cb-env-` + side + `-1a2b"}},
  {"name": "remote", "transport": "sse", "url": "https://u:canary-cb-pw-` + side + `@mcp.example.com/sse?key=canary-cb-query-` + side + `&x"}
]}`,
	})
}

// TestDiffNoSecret: secrets of the sources — deny-listed host variables,
// a token bound the .NET way, literal env values of both profiles, a URL's
// password and query — appear in no output of mcpc diff, text or json,
// of two deployments or of their plan files; and the diff does see that
// they changed.
func TestDiffNoSecret(t *testing.T) {
	root := t.TempDir()
	var outputs []string
	check := func(want int, args ...string) string {
		t.Helper()
		code, stdout, stderr := run(t, append([]string{"diff"}, args...)...)
		outputs = append(outputs, stdout, stderr)
		if code != want {
			t.Fatalf("diff %v: exit %d, want %d\n%s%s", args, code, want, stdout, stderr)
		}
		return stdout
	}
	vOld := volcanicDeployment(t, filepath.Join(root, "v-old"), "old", "")
	vNew := volcanicDeployment(t, filepath.Join(root, "v-new"), "new", `, "ADDED_SECRET": "canary-literal-added-5e5e"`)
	cOld := craftbotDeployment(t, filepath.Join(root, "c-old"), "old")
	cNew := craftbotDeployment(t, filepath.Join(root, "c-new"), "new")
	// The craftbot plan holds ${config:KEY} for the changed token, so only
	// the URL's change shows there (docs/decisions/0035-diff.md).
	for _, pair := range [][3]string{{vOld, vNew, "gh"}, {cOld, cNew, "remote"}} {
		for _, format := range []string{"text", "json"} {
			out := check(ExitChanged, "--exit-code", "--format", format, pair[0], pair[1])
			for _, want := range []string{pair[2], "[REDACTED]"} {
				if !strings.Contains(out, want) {
					t.Errorf("diff %s %s: no %q in\n%s", format, pair, want, out)
				}
			}
		}
		// The same through plan files.
		var plans []string
		for _, dir := range pair[:2] {
			file := filepath.Join(root, filepath.Base(dir)+".plan.json")
			args := []string{"plan", "-o", file, "--clean-env", "--env-file", filepath.Join(dir, "host.env"),
				"--appsettings", filepath.Join(dir, "appsettings.json"), "--agent-dir", filepath.Join(dir, "agent")}
			if strings.Contains(dir, "c-") {
				args = []string{"plan", "-o", file, "--clean-env", "--profile", "craftbot", "--config", filepath.Join(dir, "mcp_config.json")}
			}
			if code, stdout, stderr := run(t, args...); code != ExitOK {
				t.Fatalf("plan: exit %d\n%s%s", code, stdout, stderr)
			}
			plans = append(plans, file)
		}
		check(ExitChanged, "--exit-code", plans[0], plans[1])
		check(ExitOK, "--format", "json", plans[0], plans[1])
	}
	if text := check(ExitOK, vOld, vNew); !strings.Contains(text, "env.SESSION_SETTING: [REDACTED] → [REDACTED] (restart)") ||
		!strings.Contains(text, "env.ADDED_SECRET: (unset) → [REDACTED] (restart)") {
		t.Errorf("the literal env changes are not listed:\n%s", text)
	}
	// A side that does not compile (a secret copied into a command line)
	// is refused, its diagnostics redacted.
	bad := volcanicDeployment(t, filepath.Join(root, "v-bad"), "new", "")
	os.WriteFile(filepath.Join(bad, "appsettings.json"), []byte(`{"Mcp": {"Servers": {
  "gh": {"command": "npx", "args": ["--token", "canary-deny-new-4f1d"], "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}}}}}`), 0o644)
	check(ExitUsage, vOld, bad)
	if !strings.Contains(outputs[len(outputs)-1], "secret-literal") {
		t.Errorf("no secret-literal diagnostic:\n%s", outputs[len(outputs)-1])
	}
	all := strings.Join(outputs, "\n")
	for _, c := range []string{"canary-deny", "canary-bound", "canary-literal", "canary-cb", "4f1d", "93ab", "77c2", "1a2b", "5e5e"} {
		if strings.Contains(all, c) {
			t.Errorf("%q in the output of mcpc diff:\n%s", c, all)
		}
	}
}

func TestDiffUsage(t *testing.T) {
	root := t.TempDir()
	one := volcanicDeployment(t, filepath.Join(root, "one"), "old", "")
	os.MkdirAll(filepath.Join(one, "sub"), 0o755)
	empty := filepath.Join(root, "empty")
	os.MkdirAll(empty, 0o755)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{one}, "two arguments"},
		{[]string{one, filepath.Join(root, "missing.json")}, "cannot read"},
		{[]string{one, filepath.Join(one, "sub")}, "are one deployment"},
		{[]string{one, empty}, "nothing to check"},
		{[]string{"--format", "sarif", one, one}, "--format sarif"},
		{[]string{one, filepath.Join(one, "appsettings.json")}, "not a plan this mcpc can compare"},
	} {
		code, stdout, stderr := run(t, append([]string{"diff"}, c.args...)...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("diff %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}
