package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"mcpc"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUnreadableFileExits2NamingIt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	code, stdout, stderr := run(t, "validate", "--clean-env", "--appsettings", missing)
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, missing) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = run(t, "plan", "--clean-env", "--env-file", missing)
	if code != ExitUsage || !strings.Contains(stderr, missing) {
		t.Errorf("env-file: exit %d, stderr %q", code, stderr)
	}
}

func TestSyntaxErrorExits1WithLineColumn(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "appsettings.json", "{\n  \"Mcp\": {\n    \"Servers\": { \"a\": { \"Command\": \"x\" } }\n  ]\n}\n")
	code, stdout, _ := run(t, "validate", "--clean-env", "--agent-dir", dir, "--appsettings", f, "--format", "json")
	if code != ExitProblems {
		t.Fatalf("exit %d", code)
	}
	var ds []map[string]any
	if err := json.Unmarshal([]byte(stdout), &ds); err != nil {
		t.Fatalf("json output: %v\n%s", err, stdout)
	}
	if len(ds) != 1 || ds[0]["rule"] != "json-syntax" || ds[0]["line"] != float64(4) || ds[0]["column"] != float64(3) {
		t.Errorf("got %v", ds)
	}
	for _, key := range []string{"file", "line", "column", "severity", "rule", "message"} {
		if _, ok := ds[0][key]; !ok {
			t.Errorf("json diagnostic lacks %q", key)
		}
	}
}

func TestPlanNeverWritesOverAnInput(t *testing.T) {
	dir := t.TempDir()
	content := `{"Mcp": {"Servers": {"a": {"Command": "x"}}}}`
	f := write(t, dir, "appsettings.json", content)
	for _, out := range []string{f, filepath.Join(dir, ".", "appsettings.json")} {
		code, _, stderr := run(t, "plan", "--clean-env", "--agent-dir", dir, "--appsettings", f, "-o", out)
		if code != ExitUsage || !strings.Contains(stderr, "never writes over an input") {
			t.Errorf("-o %s: exit %d, %s", out, code, stderr)
		}
	}
	if b, _ := os.ReadFile(f); string(b) != content {
		t.Errorf("input changed: %s", b)
	}
	out := filepath.Join(dir, "plan.json")
	if code, _, stderr := run(t, "plan", "--clean-env", "--agent-dir", dir, "--appsettings", f, "-o", out); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(b, []byte("{\n  \"digest\": \"sha256:")) {
		t.Errorf("plan file: %v %s", err, b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".plan.json.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestEveryHelpShowsAnExample(t *testing.T) {
	for _, cmd := range []string{"validate", "lint", "plan", "explain", "rules", "tools", "run", "remote", "import", "diff", "config", "schema"} {
		code, stdout, _ := run(t, cmd, "--help")
		if code != ExitOK || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "mcpc "+cmd) {
			t.Errorf("%s --help: exit %d\n%s", cmd, code, stdout)
		}
	}
	if _, stdout, _ := run(t, "--help"); !strings.Contains(stdout, "mcpc validate --appsettings") {
		t.Errorf("mcpc --help shows no example:\n%s", stdout)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"validate", "--no-such-flag"},
		{"plan", "--resolve"},
		{"validate", "--format", "yaml", "--clean-env"},
		{"explain"},
		{"explain", "missing", "--clean-env", "--agent-dir", t.TempDir()},
		{"validate", "--clean-env", "--env", "NOEQUALS"},
		{"validate", "--profile", "other"},
		{"nosuchcommand"},
	} {
		if code, _, stderr := run(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %s", args, code, stderr)
		}
	}
}

func TestStrictTurnsWarningsIntoExit1(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "appsettings.json", `{"Mcp": {"Servers": {"a": {"Command": "x", "Comand": "y"}}}}`)
	if code, _, _ := run(t, "validate", "--clean-env", "--agent-dir", dir, "--appsettings", f); code != ExitOK {
		t.Errorf("warnings only: exit %d", code)
	}
	if code, _, _ := run(t, "validate", "--clean-env", "--agent-dir", dir, "--appsettings", f, "--strict"); code != ExitProblems {
		t.Errorf("--strict: exit %d", code)
	}
}

// TestCanarySecretAppearsInNoOutput puts a secret in the host environment
// and in places where it would naturally leak (a literal copy in a file, a
// value an error message quotes, an env-file line under a diagnostic) and
// checks every command and format.
func TestCanarySecretAppearsInNoOutput(t *testing.T) {
	// Longer than the 40 characters a message quotes, so that a value cut
	// before redaction would show its beginning.
	const canary = "CANARY-7f3a9c-s3cr3t-0123456789-abcdefghijklmnopqrstuvwxyz-END"
	// A variable that is not deny-listed but is read with ${env:PLAIN_VAR}:
	// its value is a known secret too.
	const plain = "PLAINVAR-5e1d-0123456789-abcdefghijklmnopqrstuvwxyz-0123456789"
	dir := t.TempDir()
	app := write(t, dir, "appsettings.json", `{
  "Mcp": {
    "Servers": {
      "github": {
        "Command": "npx",
        "Args": ["--literal", "`+canary+`"],
        "Env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}", "COPY": "Bearer `+canary+`"}
      },
      "broken": { "Command": "x", "StartupTimeoutSeconds": "`+canary+`" }
    }
  }
}`)
	envFile := write(t, dir, "host.env", "GITHUB_TOKEN="+canary+"\nPLAYWRIGHT_ENABLED=true\nPLAYWRIGHT_BROWSER="+plain+"\nPLAIN_VAR="+plain+"\nMcp__Servers__x__Env__API_TOKEN="+canary+"\nMcp__Servers__x__Command=node\nMcp__Servers__x__Enabled="+canary+"\n")
	agent := filepath.Join(dir, "agent")
	write(t, agent, "settings.json", `{"mcpServers": {"s": {"command": "`+canary+`", "env": {"T": "${env:OPENAI_API_KEY}", "U": "${env:PLAIN_VAR}"}}}}`)
	src := []string{"--agent-dir", agent, "--appsettings", app, "--env-file", envFile, "--env", "OPENAI_API_KEY=" + canary}
	environ = func() []string { return []string{"ANTHROPIC_API_KEY=" + canary, "HOME=/nowhere"} }
	defer func() { environ = os.Environ }()

	var outputs []string
	for _, f := range []string{"text", "json", "sarif", "github"} {
		_, o, e := run(t, append([]string{"validate", "--format", f}, src...)...)
		outputs = append(outputs, o, e)
	}
	_, o, e := run(t, append([]string{"plan"}, src...)...)
	outputs = append(outputs, o, e)
	_, o, e = run(t, append([]string{"explain", "github"}, src...)...)
	outputs = append(outputs, o, e)
	_, o, e = run(t, append([]string{"explain", "x", "--format", "json"}, src...)...)
	outputs = append(outputs, o, e)

	// Without the broken parts (a literal copy of a secret is one: a plan
	// cannot carry it) the plan and the resolved view are produced; the
	// secret bound through Mcp__Servers__github__Env__API_TOKEN is a
	// reference to that variable.
	fixed := write(t, dir, "fixed.json", `{"Mcp": {"Servers": {"github": {"Command": "npx", "Args": ["-y"], "Env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}", "X": "a${env:OPENAI_API_KEY}"}}}}}`)
	okSrc := []string{"--agent-dir", dir, "--appsettings", fixed, "--env", "GITHUB_TOKEN=" + canary, "--env", "OPENAI_API_KEY=" + canary, "--env", "Mcp__Servers__github__Env__API_TOKEN=" + canary}
	code, o, e := run(t, append([]string{"plan"}, okSrc...)...)
	if code != ExitOK || !strings.Contains(o, `"digest"`) || !strings.Contains(o, `"API_TOKEN": "${env:Mcp__Servers__github__Env__API_TOKEN}"`) {
		t.Fatalf("plan: exit %d %s %s", code, o, e)
	}
	outputs = append(outputs, o, e)
	code, o, e = run(t, append([]string{"plan", "--resolve", "--workspace", dir}, okSrc...)...)
	if code != ExitOK || !strings.Contains(o, `"X": "a[REDACTED]"`) {
		t.Fatalf("resolve: exit %d %s %s", code, o, e)
	}
	outputs = append(outputs, o, e)

	for i, out := range outputs {
		if strings.Contains(out, canary[:12]) || strings.Contains(out, "7f3a9c") || strings.Contains(out, plain[:12]) {
			t.Errorf("output %d leaks the secret:\n%s", i, out)
		}
	}
	if !strings.Contains(strings.Join(outputs, ""), "[REDACTED]") {
		t.Errorf("nothing was redacted: the test does not exercise redaction")
	}
}

func TestFlagsMayFollowArguments(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "appsettings.json", `{"Mcp": {"Servers": {"a": {"Command": "x"}}}}`)
	code, stdout, stderr := run(t, "explain", "a", "--clean-env", "--agent-dir", dir, "--appsettings", f)
	if code != ExitOK || !strings.Contains(stdout, `server "a" from appsettings`) {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "explain", "--clean-env", "--agent-dir", dir, "--appsettings="+f, "--", "a")
	if code != ExitOK || !strings.Contains(stdout, "Command") {
		t.Errorf("with --: exit %d\n%s", code, stdout)
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int
		word, want string
	}{{0, "process", "0 processes"}, {1, "process", "1 process"}, {2, "server", "2 servers"}, {1, "tool", "1 tool"}} {
		if got := plural(c.n, c.word); got != c.want {
			t.Errorf("plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}
