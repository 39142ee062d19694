package policies

import "testing"

// npx's own options come before its package; -y after the package is the
// package's argument. -p names the package to install, -c a command line.
func TestNpxPackage(t *testing.T) {
	for _, c := range []struct {
		args []string
		pkg  int
		yes  bool
	}{
		{[]string{"@playwright/mcp@latest"}, 0, false},
		{[]string{"-y", "@playwright/mcp@latest"}, -1, true},
		{[]string{"--yes", "x"}, -1, true},
		{[]string{"--yes=true", "x"}, -1, true},
		{[]string{"--quiet", "x", "-y"}, 1, false},
		{[]string{"-p", "@scope/pkg@1.0.0", "pkg-cmd"}, 1, false},
		{[]string{"--package=@scope/pkg@1.0.0", "pkg-cmd"}, 0, false},
		{[]string{"-c", "tsc --version"}, -1, false},
		{[]string{"--", "x"}, 1, false},
		{nil, -1, false},
	} {
		pkg, yes := npxPackage(c.args)
		if pkg != c.pkg || yes != c.yes {
			t.Errorf("%q: package at %d, yes %v; want %d, %v", c.args, pkg, yes, c.pkg, c.yes)
		}
	}
	for cmd, want := range map[string]string{"npx": "npx", "/usr/bin/npx": "npx", `C:\Program Files\nodejs\npx.cmd`: "npx", "NPX.EXE": "npx", "npx-like": "npx-like"} {
		if got := launcherName(cmd); got != want {
			t.Errorf("launcherName(%q) = %q, want %q", cmd, got, want)
		}
	}
}
