package cli

import (
	"os"
	"slices"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"
)

// A deployment with one error and one warning, for the color tests.
func colorDeployment(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	app := write(t, dir, "appsettings.json", `{"Mcp": {"Servers": {"a": {"Command": "x", "comand": "y", "StartupTimeoutSeconds": "sixty"}}}}`)
	return []string{"validate", "--clean-env", "--agent-dir", dir, "--appsettings", app}
}

// Into a pipe (here a buffer) auto prints what never prints, byte for
// byte; always colors even there.
func TestColorFlag(t *testing.T) {
	args := colorDeployment(t)
	code, plain, _ := run(t, args...)
	if code != ExitProblems || strings.Contains(plain, "\x1b") || !strings.Contains(plain, "error:") {
		t.Fatalf("default: exit %d\n%q", code, plain)
	}
	for _, mode := range []string{"auto", "never"} {
		if _, out, _ := run(t, append(args, "--color="+mode)...); out != plain {
			t.Errorf("--color=%s into a pipe differs from the default:\n%q\n%q", mode, out, plain)
		}
	}
	_, colored, _ := run(t, append(args, "--color", "always")...)
	for _, want := range []string{"\x1b[1;31merror\x1b[0m", "\x1b[1;33mwarning\x1b[0m", "\x1b[1;32m^\x1b[0m"} {
		if !strings.Contains(colored, want) {
			t.Errorf("--color always lacks %q:\n%q", want, colored)
		}
	}
	// NO_COLOR does not overrule an explicit --color=always (no-color.org).
	environ = func() []string { return []string{"NO_COLOR=1"} }
	defer func() { environ = os.Environ }()
	if _, out, _ := run(t, append(args, "--color=always")...); out != colored {
		t.Errorf("NO_COLOR turned off --color=always")
	}
	code, _, stderr := run(t, append(args, "--color=yes")...)
	if code != ExitUsage || !strings.Contains(stderr, `--color "yes": expected auto, always or never`) {
		t.Errorf("--color=yes: exit %d, %s", code, stderr)
	}
}

// Every command that acts takes --color, subcommands included.
func TestEveryCommandTakesColor(t *testing.T) {
	app := newApp(nil, nil, nil)
	addColorFlag(app.Commands)
	var missing []string
	var check func(cmds []*ucli.Command)
	check = func(cmds []*ucli.Command) {
		for _, c := range cmds {
			check(c.Subcommands)
			if c.Action == nil {
				continue
			}
			found := false
			for _, f := range c.Flags {
				found = found || slices.Contains(f.Names(), "color")
			}
			if !found {
				missing = append(missing, c.Name)
			}
		}
	}
	check(app.Commands)
	if len(missing) > 0 {
		t.Errorf("commands without --color: %v", missing)
	}
}
