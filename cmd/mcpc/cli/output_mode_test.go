package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// An output file (plan -o, import -o) is written with atomicfile.Replace,
// the project's one atomic write: a new file gets the command's mode, a
// file it replaces keeps its own, and no temporary file is left.
func TestOutputsKeepTheModeOfTheFileTheyReplace(t *testing.T) {
	dir := t.TempDir()
	settings := write(t, dir, "appsettings.json", `{"Mcp": {"Servers": {"a": {"Command": "x"}}}}`)
	src := write(t, dir, ".mcp.json", importSource)
	for _, tc := range []struct {
		name    string
		args    func(out string) []string
		newMode os.FileMode
	}{
		{"plan.json", func(out string) []string {
			return []string{"plan", "--clean-env", "--agent-dir", dir, "--appsettings", settings, "-o", out}
		}, 0o644},
		{"imported.json", func(out string) []string {
			return []string{"import", "--from", "claude-code", src, "--to", "volcanic", "-o", out}
		}, 0o600},
	} {
		out := filepath.Join(dir, tc.name)
		for _, want := range []os.FileMode{tc.newMode, 0o640} {
			if want != tc.newMode {
				if err := os.Chmod(out, want); err != nil {
					t.Fatal(err)
				}
			}
			if code, _, stderr := run(t, tc.args(out)...); code != ExitOK {
				t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != want {
				t.Errorf("%s: mode %04o, want %04o", tc.name, fi.Mode().Perm(), want)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "."+tc.name+"*")); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
}
