package cli

import (
	"os"
	"strings"
	"testing"
)

// The completion protocol in-process: commands, and a command's
// subcommands (which interspersed used to drop the request for).
// urfave/cli reads the words typed from os.Args, so the test sets it.
func TestCompletionCandidates(t *testing.T) {
	defer func(saved []string) { os.Args = saved }(os.Args)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{completionFlag}, []string{"validate", "plan", "version", "completion"}},
		{[]string{"remote", completionFlag}, []string{"list", "add", "remove", "tools"}},
		{[]string{"config", completionFlag}, []string{"add-json", "enable", "env"}},
	} {
		os.Args = append([]string{"mcpc"}, c.args...)
		code, out, stderr := run(t, c.args...)
		lines := strings.Split(out, "\n")
		for _, w := range c.want {
			found := false
			for _, l := range lines {
				found = found || l == w
			}
			if !found {
				t.Errorf("mcpc %s: exit %d, no %q in\n%s%s", strings.Join(c.args, " "), code, w, out, stderr)
			}
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "complete -o bashdefault -o default -o nospace -F _mcpc_bash_autocomplete mcpc\n",
		"zsh":  "compdef _mcpc mcpc",
		"fish": "complete -c mcpc -n '__fish_seen_subcommand_from validate' -f -l appsettings",
	} {
		code, out, stderr := run(t, "completion", shell)
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, %s\n%s", shell, code, stderr, out)
		}
	}
	// fish lists the commands, not the hidden ones.
	if _, out, _ := run(t, "completion", "fish"); !strings.Contains(out, "-a 'validate'") || strings.Contains(out, "-a 'guard'") {
		t.Errorf("fish: commands wrong:\n%s", out)
	}
	for _, args := range [][]string{{"completion"}, {"completion", "powershell"}, {"completion", "bash", "zsh"}} {
		if code, _, stderr := run(t, args...); code != ExitUsage || !strings.Contains(stderr, "bash, zsh") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}
