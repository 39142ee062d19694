package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/shlex"
)

// A wrong flag prints one line and the command's usage line, never the
// whole help, for every command and subcommand.
func TestUnknownFlagIsBrief(t *testing.T) {
	for _, args := range [][]string{
		{"validate", "--nope"}, {"lint", "--nope"}, {"plan", "--nope"}, {"tools", "--nope"},
		{"remote", "list", "--nope"}, {"lint", "--format"},
	} {
		code, stdout, stderr := run(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != ExitUsage || stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[1], "usage: mcpc "+args[0]) || strings.Contains(stderr, "OPTIONS") {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s", args, code, stdout, stderr)
		}
	}
}

// lint --init writes an mcpc.cue that finds the sources (.env once, though
// *.env matches it too), that lint then reads with the files' host
// environment alone (cleanEnv); it never overwrites one.
func TestLintInit(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "appsettings.json", `{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x@1.0.0"]}}}}`)
	write(t, dir, "appsettings.Production.json", `{}`)
	write(t, dir, "host.env", "A=1\n")
	write(t, dir, ".env", "B=2\n")
	write(t, dir, "agent/settings.json", `{"mcpServers": {"y": {"command": "npx", "args": ["-y", "server-y"]}}}`)
	code, _, stderr := run(t, "lint", "--init", dir)
	if code != ExitOK {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "mcpc.cue"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`appsettings: ["appsettings.json", "appsettings.Production.json"]`, `envFiles: [".env", "host.env"]`, "cleanEnv: true", `agentDir: "agent"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("mcpc.cue lacks %s:\n%s", want, data)
		}
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "lint", "--oneline", "--path", bin, dir)
	if code != ExitOK || !strings.Contains(stdout, "agent/settings.json:1:56: warning: server y runs server-y without an exact version") {
		t.Errorf("lint after init: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "lint", "--init", dir); code != ExitUsage || !strings.Contains(stderr, "does not overwrite") {
		t.Errorf("second init: exit %d: %s", code, stderr)
	}
}

// Several deployments in one run; nothing to check is exit 2; a missing
// agent dir is exit 2.
func TestLintDirs(t *testing.T) {
	root := filepath.Join("..", "..", "..", "fixtures")
	code, stdout, stderr := run(t, "lint", "--oneline", filepath.Join(root, "rule-package-unpinned"), filepath.Join(root, "rule-runtime-missing"))
	if code != ExitProblems || !strings.Contains(stdout, "[package-unpinned]") || !strings.Contains(stdout, "[runtime-missing]") ||
		strings.Count(stderr, "mcpc.cue: 1 server") != 2 {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "lint", t.TempDir()); code != ExitUsage || !strings.Contains(stderr, "nothing to check") {
		t.Errorf("empty dir: exit %d: %s", code, stderr)
	}
	dir := t.TempDir()
	write(t, dir, "mcpc.cue", `sources: agentDir: "no-such-dir"`)
	if code, _, stderr := run(t, "lint", dir); code != ExitUsage || !strings.Contains(stderr, "no-such-dir does not exist") {
		t.Errorf("missing agent dir: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "lint", "--appsettings", "x.json", dir, dir); code != ExitUsage {
		t.Errorf("source flags with two dirs: exit %d: %s", code, stderr)
	}
}

// No secret of the deployment appears in any output of lint, in any format.
func TestLintNeverPrintsASecret(t *testing.T) {
	const canary = "canary-7f3a9c2e5b1d4068-secret"
	dir := t.TempDir()
	write(t, dir, "mcpc.cue", `sources: {appsettings: ["appsettings.json"], cleanEnv: true, env: ["API_TOKEN=`+canary+`", "TELEGRAM_BOT_TOKEN=`+canary+`-bot"]}
target: path: "bin"`)
	write(t, dir, "appsettings.json", `{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x", "--token", "`+canary+`"],
		"Env": {"T": "${env:TELEGRAM_BOT_TOKEN}", "K": "${env:API_TOKEN}"}}}}}`)
	for _, format := range []string{"text", "json", "sarif", "github"} {
		_, stdout, stderr := run(t, "lint", "--format", format, dir)
		if strings.Contains(stdout+stderr, canary) {
			t.Errorf("%s: the canary is in the output:\n%s%s", format, stdout, stderr)
		}
		if !strings.Contains(stdout, "master-secret-passed") || !strings.Contains(stdout, "secret-literal") {
			t.Errorf("%s: expected findings missing:\n%s", format, stdout)
		}
	}
}

// The GitHub Actions workflow of docs/ci runs mcpc lint on the example: its
// mcpc commands are run here as the workflow gives them, and pass.
func TestCIWorkflowCommands(t *testing.T) {
	wf, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "ci", "mcpc-lint.yml"))
	if err != nil {
		t.Fatal(err)
	}
	runs := regexp.MustCompile(`(?m)^\s+run: (mcpc .*)$`).FindAllStringSubmatch(string(wf), -1)
	if len(runs) < 2 {
		t.Fatalf("the workflow runs %d mcpc commands", len(runs))
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(filepath.Join("..", "..", "..")); err != nil {
		t.Fatal(err)
	}
	for _, m := range runs {
		line, _, _ := strings.Cut(m[1], ">") // the shell's redirection is not mcpc's
		words, err := shlex.Split(line)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(t, words[1:]...)
		if code != ExitOK {
			t.Errorf("%s: exit %d\n%s%s", m[1], code, stdout, stderr)
		}
	}
	hook, err := os.ReadFile(".pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`(?m)^\s+entry: (mcpc .*)$`).FindStringSubmatch(string(hook))
	if entry == nil {
		t.Fatal("the pre-commit hook has no mcpc entry")
	}
	words, _ := shlex.Split(entry[1])
	changed := append(words[1:], "examples/volcanic/appsettings.json")
	if code, stdout, stderr := run(t, changed...); code != ExitOK || !strings.Contains(stderr, "examples/volcanic/mcpc.cue: 3 servers") {
		t.Errorf("pre-commit hook %s examples/volcanic/appsettings.json: exit %d\n%s%s", entry[1], code, stdout, stderr)
	}
}

// validate without any source flag checks the deployment of the current
// directory (its mcpc.cue), and says when there is nothing to check.
func TestValidateWithoutFlags(t *testing.T) {
	home := t.TempDir()
	saved := environ
	environ = func() []string { return []string{"HOME=" + home} }
	wd, _ := os.Getwd()
	t.Cleanup(func() { environ = saved; os.Chdir(wd) })
	empty := t.TempDir()
	if err := os.Chdir(empty); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "validate"); code != ExitUsage || !strings.Contains(stderr, "nothing to check") {
		t.Errorf("empty dir: exit %d: %s", code, stderr)
	}
	write(t, empty, "conf/appsettings.json", `{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x@1.0.0"], "comand": "typo"}}}}`)
	write(t, empty, "mcpc.cue", `sources: appsettings: ["conf/appsettings.json"]`)
	code, stdout, stderr := run(t, "validate", "--oneline")
	if code != ExitOK || !strings.Contains(stdout, "conf/appsettings.json:1:80: warning") || !strings.Contains(stderr, "1 server") {
		t.Errorf("with mcpc.cue: exit %d\n%s%s", code, stdout, stderr)
	}
}

// "-" reads standard input where one file is meant.
func TestLintReadsStdin(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	in := strings.NewReader(`{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x"]}}}}`)
	code := Run([]string{"mcpc", "lint", "--oneline", "--clean-env", "--path", dir, "--appsettings", "-", dir}, in, &stdout, &stderr)
	if code != ExitProblems || !strings.Contains(stdout.String(), "-:1:61: warning: server x runs server-x without an exact version") {
		t.Errorf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}
