package mcpc_test

// Golden cases: every folder fixtures/<case>/ is one deployment; the test
// runs `mcpc validate` (and `mcpc plan` when validate finds no error) on it,
// in-process, and compares with golden/<case>.txt and golden/<case>.plan.json.
// `go test . -update` rewrites the goldens; read the diff before committing.
//
// A case folder may hold: appsettings*.json (layered in name order),
// host.env (an --env-file), agent/settings.json, a file "args" with extra
// command-line arguments (shell-style), and a file "explain" with server
// names whose `mcpc explain` output goes to golden/<case>.explain.txt.
// A case with a file "cmd" runs that command line instead (see goldenCase). Every case runs with
// --clean-env and --agent-dir <case>/agent, so nothing of the machine leaks
// in. A case with a file mcp_config.json is a craftbot deployment: it runs
// with --clean-env --profile craftbot --config <case>/mcp_config.json and,
// unless its "args" give another, --target-os linux.

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/shlex"

	"github.com/mcpc-dev/mcpc/cmd/mcpc/cli"
	"github.com/mcpc-dev/mcpc/internal/golden"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// TestMain puts the Go test MCP server on PATH as mcpc-testserver, so that
// cases of `mcpc tools` start it by name.
func TestMain(m *testing.M) {
	flag.Parse()
	testservers.Main(m, func(bin string) {
		os.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	})
}

type goldenCase struct {
	name string
	dir  string
	args []string
	// command replaces "validate" (and the plan step) when the case has a
	// file "cmd": a whole mcpc command line, shell-style, with $CASE for the
	// case's folder.
	command []string
}

func loadCases(t *testing.T) []goldenCase {
	t.Helper()
	entries, err := os.ReadDir("fixtures")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "servers" {
			continue
		}
		dir := filepath.Join("fixtures", e.Name())
		// A case without agent/ has no settings.json: its agent dir is the
		// case's own (an --agent-dir that does not exist is an error).
		agent := filepath.Join(dir, "agent")
		if _, err := os.Stat(agent); err != nil {
			agent = dir
		}
		args := []string{"--clean-env", "--agent-dir", agent}
		craftbotConfig := filepath.Join(dir, "mcp_config.json")
		if _, err := os.Stat(craftbotConfig); err == nil {
			args = []string{"--clean-env", "--profile", "craftbot", "--config", craftbotConfig}
			if extra, _ := os.ReadFile(filepath.Join(dir, "args")); !strings.Contains(string(extra), "--target-os") {
				args = append(args, "--target-os", "linux")
			}
		}
		// appsettings.json first, then the others (appsettings.Production.json …)
		// in name order, as a .NET host layers them.
		files, _ := filepath.Glob(filepath.Join(dir, "appsettings*.json"))
		sort.Slice(files, func(i, j int) bool {
			bi, bj := filepath.Base(files[i]) == "appsettings.json", filepath.Base(files[j]) == "appsettings.json"
			if bi != bj {
				return bi
			}
			return files[i] < files[j]
		})
		for _, f := range files {
			args = append(args, "--appsettings", f)
		}
		if _, err := os.Stat(filepath.Join(dir, "host.env")); err == nil {
			args = append(args, "--env-file", filepath.Join(dir, "host.env"))
		}
		if extra, err := os.ReadFile(filepath.Join(dir, "args")); err == nil {
			words, err := shlex.Split(strings.ReplaceAll(string(extra), "$CASE", dir))
			if err != nil {
				t.Fatalf("%s/args: %v", dir, err)
			}
			args = append(args, words...)
		}
		gc := goldenCase{name: e.Name(), dir: dir, args: args}
		if cmd, err := os.ReadFile(filepath.Join(dir, "cmd")); err == nil {
			words, err := shlex.Split(strings.ReplaceAll(string(cmd), "$CASE", dir))
			if err != nil || len(words) == 0 {
				t.Fatalf("%s/cmd: %v", dir, err)
			}
			gc.command = words
		}
		cases = append(cases, gc)
	}
	return cases
}

// run runs mcpc in-process and returns exit code, stdout and stderr.
func run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := cli.Run(append([]string{"mcpc"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestGolden(t *testing.T) {
	cases := loadCases(t)
	ran := 0
	report := crossCheckCUE(t)
	defer func() { report(ran == len(cases)) }()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ran++
			if c.command != nil {
				code, stdout, stderr := run(c.command...)
				golden.Compare(t, filepath.Join("golden", c.name+".txt"),
					"$ mcpc "+strings.Join(c.command, " ")+"\nexit "+strconv.Itoa(code)+"\n"+stdout+"--- stderr\n"+stderr)
				return
			}
			code, stdout, stderr := run(append([]string{"validate"}, c.args...)...)
			var got strings.Builder
			got.WriteString("$ mcpc validate " + strings.Join(c.args, " ") + "\n")
			got.WriteString("exit " + strconv.Itoa(code) + "\n")
			got.WriteString(stdout)
			got.WriteString("--- stderr\n" + stderr)
			golden.Compare(t, filepath.Join("golden", c.name+".txt"), got.String())

			planFile := filepath.Join("golden", c.name+".plan.json")
			pcode, pout, perr := run(append([]string{"plan"}, c.args...)...)
			if code == cli.ExitProblems && pout != "" {
				// A host that runs the rest of its servers (craftbot) has a
				// plan beside errors about one of them: it says what runs.
				if pcode != cli.ExitProblems || !strings.Contains(perr, "the plan is written") {
					t.Errorf("plan beside errors: exit %d, stderr %q, want exit 1 and the plan written", pcode, perr)
				}
				golden.Compare(t, planFile, pout)
				return
			}
			if code == cli.ExitProblems {
				if pcode != cli.ExitProblems {
					t.Errorf("plan with errors: exit %d, want exit 1 and no plan", pcode)
				}
				if _, err := os.Stat(planFile); err == nil {
					if *golden.Update {
						os.Remove(planFile)
					} else {
						t.Errorf("%s exists but the case has errors", planFile)
					}
				}
				return
			}
			if pcode != cli.ExitOK {
				t.Fatalf("plan: exit %d: %s", pcode, perr)
			}
			golden.Compare(t, planFile, pout)
			// explain, for the names listed in the case's "explain" file.
			if names, err := os.ReadFile(filepath.Join(c.dir, "explain")); err == nil {
				var out strings.Builder
				for _, name := range strings.Fields(string(names)) {
					ecode, eout, eerr := run(append([]string{"explain", name}, c.args...)...)
					out.WriteString("$ mcpc explain " + name + "\nexit " + strconv.Itoa(ecode) + "\n" + eout + eerr)
				}
				golden.Compare(t, filepath.Join("golden", c.name+".explain.txt"), out.String())
			}
			// Byte-identical for the same input.
			if _, again, _ := run(append([]string{"plan"}, c.args...)...); again != pout {
				t.Errorf("plan output differs between two runs")
			}
		})
	}
}
