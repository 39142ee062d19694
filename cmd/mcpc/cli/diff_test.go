package cli

import (
	"encoding/json"
	"fmt"
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
// diffRunner runs mcpc diff with args, checks its exit code, keeps its
// stdout and stderr in outputs (to look for secrets in) and returns stdout.
func diffRunner(t *testing.T, outputs *[]string) func(want int, args ...string) string {
	return func(want int, args ...string) string {
		t.Helper()
		code, stdout, stderr := run(t, append([]string{"diff"}, args...)...)
		*outputs = append(*outputs, stdout, stderr)
		if code != want {
			t.Fatalf("diff %v: exit %d, want %d\n%s%s", args, code, want, stdout, stderr)
		}
		return stdout
	}
}

func TestDiffNoSecret(t *testing.T) {
	root := t.TempDir()
	var outputs []string
	check := diffRunner(t, &outputs)
	vOld := volcanicDeployment(t, filepath.Join(root, "v-old"), "old", "")
	vNew := volcanicDeployment(t, filepath.Join(root, "v-new"), "new", `, "ADDED_SECRET": "canary-literal-added-5e5e"`)
	cOld := craftbotDeployment(t, filepath.Join(root, "c-old"), "old")
	cNew := craftbotDeployment(t, filepath.Join(root, "c-new"), "new")
	// The craftbot plan holds ${config:KEY} for the changed token: the
	// value it resolves to is compared (docs/decisions/0035-diff.md).
	for _, pair := range [][4]string{{vOld, vNew, "gh", "env.GITHUB_TOKEN"}, {cOld, cNew, "remote", "env.GITHUB_PERSONAL_ACCESS_TOKEN"}} {
		for _, format := range []string{"text", "json"} {
			out := check(ExitChanged, "--exit-code", "--format", format, pair[0], pair[1])
			for _, want := range []string{pair[2], pair[3], "[REDACTED]"} {
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

// craftbotTokenDeployment is a craftbot deployment whose server gh holds
// token in its env, and whose server docs has no env.
func craftbotTokenDeployment(t *testing.T, dir, token string) string {
	return diffDeploymentDir(t, dir, map[string]string{
		"mcpc.cue": "profile: \"craftbot\"\nsources: config: \"mcp_config.json\"\n",
		"mcp_config.json": `{"auto_connect": true, "mcp_servers": [
  {"name": "gh", "transport": "stdio", "command": "gh-mcp", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "` + token + `"}, "enabled": true},
  {"name": "docs", "transport": "stdio", "command": "docs-mcp", "enabled": true}
]}`,
	})
}

// TestDiffCredentialValue: two craftbot deployments whose config files
// differ only in a credential's value differ: the server holding it
// restarts (as a reload restarts it, docs/decisions/0029-reload.md), the
// value shown [REDACTED] on both sides, in text and JSON, and through plan
// files that name two config files. Two plan files that name one config
// file cannot show it, and say so instead of "no difference".
func TestDiffCredentialValue(t *testing.T) {
	root := t.TempDir()
	const oldCanary, newCanary = "ghp_canaryOldValue7c1e", "ghp_canaryNewValueLonger9d2f"
	oldDir := craftbotTokenDeployment(t, filepath.Join(root, "old"), oldCanary)
	newDir := craftbotTokenDeployment(t, filepath.Join(root, "new"), newCanary)
	var outputs []string
	diff := diffRunner(t, &outputs)
	const line = "    env.GITHUB_PERSONAL_ACCESS_TOKEN: [REDACTED] → [REDACTED] (restart; value of ${config:GITHUB_PERSONAL_ACCESS_TOKEN})\n"
	text := diff(ExitChanged, "--exit-code", oldDir, newDir)
	if !strings.Contains(text, "~ gh: changed, restart") || !strings.Contains(text, line) || strings.Contains(text, "docs") ||
		!strings.Contains(text, "1 changed, 1 unchanged") {
		t.Errorf("deployments:\n%s", text)
	}
	var d struct {
		Changed bool
		Servers []struct {
			Name, Effect string
			Fields       []struct{ Field, Effect, Old, New, Via string }
		}
	}
	if err := json.Unmarshal([]byte(diff(ExitOK, "--format", "json", oldDir, newDir)), &d); err != nil {
		t.Fatal(err)
	}
	if !d.Changed || len(d.Servers) != 1 || d.Servers[0].Effect != "restart" || len(d.Servers[0].Fields) != 1 ||
		d.Servers[0].Fields[0] != (struct{ Field, Effect, Old, New, Via string }{"env.GITHUB_PERSONAL_ACCESS_TOKEN", "restart", "[REDACTED]", "[REDACTED]", "${config:GITHUB_PERSONAL_ACCESS_TOKEN}"}) {
		t.Errorf("json: %+v", d)
	}
	// Plan files, each next to its config file: the two files are read.
	var plans []string
	for _, dir := range []string{oldDir, newDir} {
		file := filepath.Join(dir, "plan.json")
		if code, stdout, stderr := run(t, "plan", "-o", file, "--clean-env", "--profile", "craftbot", "--config", filepath.Join(dir, "mcp_config.json")); code != ExitOK {
			t.Fatalf("plan: exit %d\n%s%s", code, stdout, stderr)
		}
		plans = append(plans, file)
	}
	if text := diff(ExitChanged, "--exit-code", plans[0], plans[1]); !strings.Contains(text, line) {
		t.Errorf("plan files of two config files:\n%s", text)
	}
	// Two plan files naming one config file: what either launches with is
	// the file as it is when a server starts; the diff cannot know what
	// the old plan ran with.
	other := filepath.Join(oldDir, "other.plan.json")
	data, _ := os.ReadFile(plans[0])
	os.WriteFile(other, data, 0o644)
	text = diff(ExitOK, "--exit-code", plans[0], other)
	if strings.Contains(text, "no difference") || !strings.Contains(text, "not compared") || !strings.Contains(text, "1 not compared") ||
		!strings.Contains(text, filepath.Join(oldDir, "mcp_config.json")) {
		t.Errorf("one config file:\n%s", text)
	}
	for _, c := range []string{oldCanary, newCanary, "canary", "7c1e", "9d2f"} {
		if all := strings.Join(outputs, "\n"); strings.Contains(all, c) {
			t.Errorf("%q in the output of mcpc diff:\n%s", c, all)
		}
	}
}

// TestDiffHostValue: two volcanic deployments whose env files differ only
// in the value of a variable a server refers to (${env:NAME}), or one it
// inherits, differ: that server restarts, the value [REDACTED].
func TestDiffHostValue(t *testing.T) {
	root := t.TempDir()
	deployment := func(side, token, mode string) string {
		return diffDeploymentDir(t, filepath.Join(root, side), map[string]string{
			"mcpc.cue": `profile: "volcanic"
sources: {appsettings: ["appsettings.json"], envFiles: ["host.env"], agentDir: "agent", cleanEnv: true}
`,
			"host.env": "GITHUB_TOKEN=" + token + "\nAPP_MODE=" + mode + "\n",
			"appsettings.json": `{"Mcp": {"Servers": {
  "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}", "APP_MODE": null}},
  "srv": {"command": "srv-mcp"}}}}`,
			"agent/settings.json": `{}`,
		})
	}
	a := deployment("a", "canary-host-a-31f0", "canary-mode-a")
	b := deployment("b", "canary-host-b-longer-8e2c", "canary-mode-a")
	c := deployment("c", "canary-host-a-31f0", "canary-mode-c")
	code, text, stderr := run(t, "diff", "--exit-code", a, b)
	if code != ExitChanged || !strings.Contains(text, "~ gh: changed, restart") ||
		!strings.Contains(text, "    env.GITHUB_TOKEN: [REDACTED] → [REDACTED] (restart; value of ${env:GITHUB_TOKEN})\n") || strings.Contains(text, "srv") {
		t.Errorf("a variable referred to: exit %d\n%s%s", code, text, stderr)
	}
	// APP_MODE is inherited by srv (not deny-listed), removed from gh.
	code, text2, stderr := run(t, "diff", "--exit-code", a, c)
	if code != ExitChanged || !strings.Contains(text2, "~ srv: changed, restart") ||
		!strings.Contains(text2, "    env.APP_MODE: [REDACTED] → [REDACTED] (restart; inherited from the host environment)\n") || strings.Contains(text2, "gh") {
		t.Errorf("an inherited variable: exit %d\n%s%s", code, text2, stderr)
	}
	// A plan file runs with mcpc run's environment: against a deployment,
	// its ${env:NAME} values are not known, and gh is not "unchanged".
	planA := filepath.Join(root, "a.plan.json")
	if code, stdout, stderr := run(t, "plan", "-o", planA, "--clean-env", "--env-file", filepath.Join(a, "host.env"),
		"--appsettings", filepath.Join(a, "appsettings.json"), "--agent-dir", filepath.Join(a, "agent")); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s%s", code, stdout, stderr)
	}
	code, text3, stderr3 := run(t, "diff", "--exit-code", planA, b)
	if code != ExitOK || !strings.Contains(text3, "not compared: the values of ${env:NAME}: "+planA+" is a plan file") ||
		!strings.Contains(text3, ", 1 not compared; nothing for a runtime to do") {
		t.Errorf("a plan file against a deployment: exit %d\n%s%s", code, text3, stderr3)
	}
	if all := text + stderr + text2 + text3 + stderr3; strings.Contains(all, "canary") {
		t.Errorf("a value in the output:\n%s", all)
	}
}

// TestDiffOriginOnly: inserting one env key into one server of a large
// catalog moves every server below it; only the one it was inserted into
// is listed (as the 157 servers of CraftBot's shipped catalog are).
func TestDiffOriginOnly(t *testing.T) {
	root := t.TempDir()
	catalog := func(side string, extra string) string {
		var b strings.Builder
		b.WriteString(`{"auto_connect": true, "mcp_servers": [`)
		for i := 0; i < 157; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			env := `"LOG": "info"`
			if i == 1 {
				env += extra
			}
			fmt.Fprintf(&b, "\n  {\n    \"name\": \"s%03d\",\n    \"transport\": \"stdio\",\n    \"command\": \"npx\",\n    \"args\": [\"-y\", \"s%03d-mcp\"],\n    \"env\": {\n      %s\n    },\n    \"enabled\": %v\n  }", i, i, env, i < 2)
		}
		b.WriteString("\n]}\n")
		return diffDeploymentDir(t, filepath.Join(root, side), map[string]string{
			"mcpc.cue":        "profile: \"craftbot\"\nsources: config: \"mcp_config.json\"\n",
			"mcp_config.json": b.String(),
		})
	}
	old, new := catalog("old", ""), catalog("new", ",\n      \"REGION\": \"eu\"")
	code, text, stderr := run(t, "diff", old, new)
	if code != ExitOK || !strings.Contains(text, "~ s001: changed, restart") || strings.Count(text, "~ ") != 1 ||
		!strings.Contains(text, "summary: 1 changed, 156 unchanged (155 moved)") {
		t.Errorf("exit %d\n%s%s", code, text, stderr)
	}
}
