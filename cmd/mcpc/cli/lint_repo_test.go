package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/shlex"
	ucli "github.com/urfave/cli/v2"
)

// lintRepo makes a repository whose three deployments are in subfolders:
// a volcanic one recognised by its appsettings.json, a volcanic one with
// mcpc.cue (its sources in conf/, its unpinned package an error), and a
// CraftBot one recognised by app/config/mcp_config.json. The current
// directory is the repository's root until the test ends; npx is on the
// host environment's PATH.
func lintRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	write(t, bin, "npx", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin, "npx"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, root, "README.md", "# a repository\n")
	write(t, root, "appsettings.json", `{"Logging": {"LogLevel": {"Default": "Information"}}}`) // the root's own app declares no servers
	write(t, root, "svc/api/appsettings.json", `{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x@1.0.0"]}}}}`)
	write(t, root, "svc/worker/mcpc.cue", "sources: appsettings: [\"conf/appsettings.json\"]\nrules: \"package-unpinned\": \"error\"\n")
	write(t, root, "svc/worker/conf/appsettings.json", `{"Mcp": {"Servers": {"y": {"Command": "npx", "Args": ["-y", "server-y"]}}}}`)
	write(t, root, "bot/app/config/mcp_config.json", `{"mcp_servers": [{"name": "fs", "transport": "stdio", "command": "npx", "args": ["-y", "server-fs@1.0.0"], "enabled": true}]}`)
	write(t, root, "node_modules/pkg/appsettings.json", `{"Mcp": {"Servers": {"z": {"Command": "npx", "Args": ["-y", "server-z"]}}}}`)
	saved := environ
	environ = func() []string { return []string{"PATH=" + bin, "HOME=" + root} }
	wd, _ := os.Getwd()
	t.Cleanup(func() { environ = saved; os.Chdir(wd) })
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	return root
}

var lintSummaries = regexp.MustCompile(`(?m)^(\S+): \d+ servers?, .*$`)

func summaries(stderr string) []string {
	var out []string
	for _, m := range lintSummaries.FindAllStringSubmatch(stderr, -1) {
		out = append(out, m[1])
	}
	return out
}

// ./..., a bare lint and lint . in a root without a deployment of its own
// lint every deployment below, in one run whose exit is the worst; once the
// finding is fixed, the run passes.
func TestLintRepoBelow(t *testing.T) {
	lintRepo(t)
	want := []string{"bot", "svc/api", "svc/worker/mcpc.cue"}
	for _, args := range [][]string{{"./..."}, {}, {"."}} {
		code, stdout, stderr := run(t, append([]string{"lint", "--oneline"}, args...)...)
		if got := summaries(stderr); code != ExitProblems || strings.Join(got, " ") != strings.Join(want, " ") ||
			strings.Count(stdout, "\n") != 1 || !strings.Contains(stdout, "svc/worker/conf/appsettings.json:1:61: error: server y runs server-y without an exact version") {
			t.Errorf("lint %v: exit %d, deployments %v\n%s%s", args, code, got, stdout, stderr)
		}
	}
	write(t, ".", "svc/worker/conf/appsettings.json", `{"Mcp": {"Servers": {"y": {"Command": "npx", "Args": ["-y", "server-y@2.0.0"]}}}}`)
	if code, stdout, stderr := run(t, "lint", "--strict", "./..."); code != ExitOK || len(summaries(stderr)) != 3 {
		t.Errorf("fixed: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "lint", "bin"); code != ExitUsage || !strings.Contains(stderr, "lint bin: nothing to check: no mcpc.cue there or in a parent, and no deployment there or below") {
		t.Errorf("nothing below: exit %d\n%s", code, stderr)
	}
	// One deployment that cannot be linted does not hide the others: the
	// exit is the worst.
	write(t, ".", "svc/worker/mcpc.cue", "sources: nope: 1\n")
	code, _, stderr := run(t, "lint", "./...")
	if got := summaries(stderr); code != ExitUsage || strings.Join(got, " ") != "bot svc/api" || !strings.Contains(stderr, "mcpc: svc/worker/mcpc.cue: the deployment's configuration is not valid") {
		t.Errorf("broken mcpc.cue: exit %d, deployments %v\n%s", code, got, stderr)
	}
}

// The pre-commit hook, run as pre-commit runs it (the entry, then the
// changed files, from the repository's root), lints the deployments that
// read a changed file, and passes when none does.
func TestLintPreCommitHook(t *testing.T) {
	hook, err := os.ReadFile(filepath.Join("..", "..", "..", ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`(?m)^\s+entry: (mcpc .*)$`).FindStringSubmatch(string(hook))
	if entry == nil || !regexp.MustCompile(`(?m)^\s+pass_filenames: true$`).Match(hook) {
		t.Fatalf("the hook has no mcpc entry given the file names:\n%s", hook)
	}
	words, err := shlex.Split(entry[1])
	if err != nil {
		t.Fatal(err)
	}
	lintRepo(t)
	for _, c := range []struct {
		files []string
		code  int
		want  []string
	}{
		{[]string{"README.md", "svc/worker/conf/appsettings.json"}, ExitProblems, []string{"svc/worker/mcpc.cue"}},
		{[]string{"svc/worker/mcpc.cue"}, ExitProblems, []string{"svc/worker/mcpc.cue"}},
		{[]string{"bot/app/config/mcp_config.json", "svc/api/appsettings.json"}, ExitOK, []string{"bot", "svc/api"}},
		{[]string{"README.md", "node_modules/pkg/appsettings.json"}, ExitOK, nil},
	} {
		code, stdout, stderr := run(t, append(words[1:], c.files...)...)
		if got := summaries(stderr); code != c.code || strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("hook %v: exit %d, deployments %v, want %d %v\n%s%s", c.files, code, got, c.code, c.want, stdout, stderr)
		}
	}
}

// lint DIR recognises a CraftBot deployment without mcpc.cue, as --init
// does.
func TestLintCraftbotWithoutCue(t *testing.T) {
	lintRepo(t)
	code, stdout, stderr := run(t, "lint", "--oneline", "bot")
	if code != ExitOK || !strings.Contains(stderr, "bot: 1 server, no problems") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// lint takes every flag validate takes (its source flags among them), so a
// deployment validate checks can be linted; a chat's servers.json is
// linted with --workspace.
func TestLintTakesValidateFlags(t *testing.T) {
	names := func(cmd *ucli.Command) map[string]bool {
		out := map[string]bool{}
		for _, f := range cmd.Flags {
			out[f.Names()[0]] = true
		}
		return out
	}
	lintFlags := names(lintCommand())
	var missing []string
	for name := range names(validateCommand()) {
		if !lintFlags[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("lint lacks validate's flags %v", missing)
	}
	lintRepo(t)
	write(t, "chat", ".volcanic/mcp/servers.json", `{"servers": {"r": {"url": "http://example.invalid/mcp", "bogus": 1}}}`)
	vcode, vout, verr := run(t, "validate", "--oneline", "--appsettings", "svc/api/appsettings.json", "--workspace", "chat")
	code, stdout, stderr := run(t, "lint", "--oneline", "--appsettings", "svc/api/appsettings.json", "--workspace", "chat", "svc/api")
	if code != vcode || stdout != vout || !strings.Contains(stdout, "servers.json") || !strings.Contains(stderr, "remote: ") {
		t.Errorf("lint --workspace: exit %d\n%s%s\nvalidate: exit %d\n%s%s", code, stdout, stderr, vcode, vout, verr)
	}
}

// The commands of docs/usage.md's lint section run as written, from the
// repository's root, and pass.
func TestLintUsageCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "usage.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "\n## Lint")
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("the lint section has no sh block")
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(filepath.Join("..", "..", "..")); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(block[1], "\n") {
		line, _, _ = strings.Cut(line, "#")
		if !strings.HasPrefix(line, "go run ./cmd/mcpc lint ") {
			continue
		}
		n++
		words, err := shlex.Split(line)
		if err != nil {
			t.Fatal(err)
		}
		if code, stdout, stderr := run(t, words[3:]...); code != ExitOK {
			t.Errorf("%s: exit %d\n%s%s", line, code, stdout, stderr)
		}
	}
	if n < 2 {
		t.Errorf("the lint section's block runs %d lint commands", n)
	}
}
