package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/cmd/mcpc/ui"
)

// inDir runs the test in dir, with a host environment of HOME only (an
// empty home: no agent dir of the machine's user is read).
func inDir(t *testing.T, dir string) {
	t.Helper()
	home := t.TempDir()
	saved := environ
	environ = func() []string { return []string{"HOME=" + home} }
	wd, _ := os.Getwd()
	t.Cleanup(func() { environ = saved; os.Chdir(wd) })
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
}

// cueDeployment writes a deployment whose mcpc.cue names four servers:
// three in conf/appsettings.json, one in agent/settings.json.
func cueDeployment(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "conf/appsettings.json", fmt.Sprintf(`{"Mcp": {"Servers": {
  "github": {"Command": %[1]q, "Args": ["-tools", "issues"]},
  "notes": {"Command": %[1]q, "Args": ["-tools", "search"]},
  "fs": {"Command": %[1]q, "Args": ["-tools", "files"]}}}}`, testServer))
	write(t, dir, "agent/settings.json", fmt.Sprintf(`{"mcpServers": {"browser": {"command": %q, "args": ["-tools", "open"]}}}`, testServer))
	write(t, dir, "mcpc.cue", `sources: {appsettings: ["conf/appsettings.json"], agentDir: "agent", cleanEnv: true}`)
	write(t, dir, "sub/README", "a directory below the deployment's\n")
	return dir
}

var fourServers = []string{"fs", "github", "notes", "browser"} // in plan order

// Every command that reads a deployment reads the mcpc.cue found upward,
// as mcpc lint does: the four servers it names, not "0 servers".
func TestEveryCommandReadsMcpcCue(t *testing.T) {
	dir := cueDeployment(t)
	for _, wd := range []string{dir, filepath.Join(dir, "sub")} {
		inDir(t, wd)
		t.Run(filepath.Base(wd), func(t *testing.T) {
			code, stdout, stderr := run(t, "plan")
			var p struct {
				Servers []struct{ Name string } `json:"servers"`
			}
			if err := json.Unmarshal([]byte(stdout), &p); code != ExitOK || err != nil {
				t.Fatalf("plan: exit %d, %v\n%s%s", code, err, stdout, stderr)
			}
			var names []string
			for _, s := range p.Servers {
				names = append(names, s.Name)
			}
			if strings.Join(names, " ") != strings.Join(fourServers, " ") {
				t.Errorf("plan: servers %v, want %v", names, fourServers)
			}
			if code, stdout, stderr := run(t, "explain", "github"); code != ExitOK || !strings.Contains(stdout, `server "github" from`) {
				t.Errorf("explain github: exit %d\n%s%s", code, stdout, stderr)
			}
			if code, _, stderr := run(t, "validate"); code != ExitOK || !strings.Contains(stderr, "4 servers") {
				t.Errorf("validate: exit %d\n%s", code, stderr)
			}
			code, stdout, stderr = run(t, "tools")
			if code != ExitOK || !strings.Contains(stderr, "4 servers, 4 tools visible") {
				t.Errorf("tools: exit %d\n%s%s", code, stdout, stderr)
			}
			for _, name := range fourServers {
				if !strings.Contains(stdout, name) {
					t.Errorf("tools: no %s\n%s", name, stdout)
				}
			}
			page, err := uiPage(t)
			if err != nil {
				t.Fatalf("ui: %v", err)
			}
			for _, name := range fourServers {
				if !strings.Contains(page, `data-server="`+name+`"`) {
					t.Errorf("ui: no row for %s\n%s", name, page)
				}
			}
		})
	}
}

// uiPage is the servers page mcpc ui --no-token serves for the deployment
// of the current directory.
func uiPage(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var opts ui.Options
	var optsErr error
	cmd := uiCommand()
	cmd.Action = func(c *ucli.Context) error {
		opts, _, optsErr = uiOptions(c)
		return nil
	}
	app := newApp(strings.NewReader(""), new(strings.Builder), new(strings.Builder))
	app.Commands = []*ucli.Command{cmd}
	if err := app.Run(append([]string{"mcpc", "ui", "--no-token", "--listen", "127.0.0.1:0"}, args...)); err != nil {
		return "", err
	}
	if optsErr != nil {
		return "", optsErr
	}
	srv, err := ui.New(opts)
	if err != nil {
		return "", err
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil))
	if rec.Code != http.StatusOK {
		return "", fmt.Errorf("GET /: %d\n%s", rec.Code, rec.Body)
	}
	return rec.Body.String(), nil
}

// A command that finds no source says "nothing to check" and exits 2; it
// never answers with an empty plan, table or page and 0.
func TestEveryCommandNothingToCheck(t *testing.T) {
	inDir(t, t.TempDir())
	for _, args := range [][]string{{"plan"}, {"explain", "github"}, {"validate"}, {"tools"}, {"lint"}} {
		if code, stdout, stderr := run(t, args...); code != ExitUsage || !strings.Contains(stderr, "nothing to check") {
			t.Errorf("%s: exit %d\n%s%s", args[0], code, stdout, stderr)
		}
	}
	if _, err := uiPage(t); err == nil || !strings.Contains(err.Error(), "nothing to check") {
		t.Errorf("ui: %v", err)
	}
}

// A directory named on the command line that does not exist is an error
// that names the flag, on every command that reads it: a typo must not drop
// the agent's servers. (plan --resolve --workspace only names the chat's
// directory in the plan; it reads nothing there.)
func TestMissingDirectoryFlagIsAnError(t *testing.T) {
	dir := cueDeployment(t)
	inDir(t, dir)
	for _, args := range [][]string{
		{"validate", "--agent-dir", "agnet"},
		{"plan", "--agent-dir", "agnet"},
		{"explain", "github", "--agent-dir", "agnet"},
		{"tools", "--agent-dir", "agnet"},
		{"validate", "--workspace", "nope"},
		{"tools", "--workspace", "nope", "--scope", "42"},
	} {
		flag := args[len(args)-2]
		if args[0] == "tools" && args[1] == "--workspace" {
			flag = "--workspace"
		}
		code, stdout, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, flag) || !strings.Contains(stderr, "no such file or directory") {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	if _, err := uiPage(t, "--agent-dir", "agnet"); err == nil || !strings.Contains(err.Error(), "--agent-dir agnet") {
		t.Errorf("ui --agent-dir agnet: %v", err)
	}
	write(t, dir, "afile", "")
	if code, _, stderr := run(t, "plan", "--agent-dir", "afile"); code != ExitUsage || !strings.Contains(stderr, "--agent-dir afile: not a directory") {
		t.Errorf("plan --agent-dir afile: exit %d\n%s", code, stderr)
	}
}

// validate --appsettings - reads standard input, as lint does.
func TestValidateReadsStdin(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	in := strings.NewReader(`{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x@1.0.0"], "comand": "typo"}}}}`)
	code := Run([]string{"mcpc", "validate", "--oneline", "--clean-env", "--agent-dir", dir, "--appsettings", "-"}, in, &stdout, &stderr)
	if code != ExitOK || !strings.Contains(stdout.String(), "-:1:80: warning") || !strings.Contains(stderr.String(), "1 server") {
		t.Errorf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

// Without a file here, the host still reads its default agent dir and the
// Mcp section of its environment: those are sources, on every command that
// reads this machine's deployment. lint checks a repository's deployments
// (its DIR and below, docs/decisions/0037), never the runner's home: there
// only the environment given to it is a source.
func TestDefaultAgentDirAndEnvironmentAreSources(t *testing.T) {
	inDir(t, t.TempDir())
	home := t.TempDir()
	write(t, home, ".volcanic/agent/settings.json", `{"mcpServers": {"notes": {"command": "notes-mcp"}}}`)
	environ = func() []string { return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")} }
	for _, args := range [][]string{{"plan"}, {"validate"}, {"explain", "notes"}} {
		if code, stdout, stderr := run(t, args...); code == ExitUsage || !strings.Contains(stdout+stderr, "notes") && !strings.Contains(stderr, "1 server,") {
			t.Errorf("%s with ~/.volcanic/agent: exit %d\n%s%s", args[0], code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"plan"}, {"validate"}, {"lint"}} {
		args = append(args, "--clean-env", "--env", "Mcp__Servers__github__Command=github-mcp")
		if code, stdout, stderr := run(t, args...); code == ExitUsage || !strings.Contains(stdout+stderr, "github") && !strings.Contains(stderr, "1 server,") {
			t.Errorf("%s with Mcp__Servers__github__Command: exit %d\n%s%s", args[0], code, stdout, stderr)
		}
	}
}

// The servers page shows what mcpc lint reports, not only the compiler: a
// finding of a policy (npx without -y) and of mcpc.cue's target (a command
// not on its PATH) on the row of its server, with its suggestion.
func TestUIShowsLintFindings(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "fixtures", "rule-npx-without-yes"))
	if err != nil {
		t.Fatal(err)
	}
	inDir(t, dir) // read only: the page edits nothing here
	page, err := uiPage(t)
	if err != nil {
		t.Fatalf("ui: %v", err)
	}
	i := strings.Index(page, `data-server="playwright-mcp"`)
	if i < 0 {
		t.Fatalf("no row of playwright-mcp:\n%s", page)
	}
	row := page[i:]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, "[npx-without-yes]") || !strings.Contains(row, `class="suggestion"`) {
		t.Errorf("the row lacks the lint finding:\n%s", row)
	}
}
