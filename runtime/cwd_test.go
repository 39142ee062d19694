package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cwd that is missing, or is a file, is named in the failure; Go's exec
// error alone would read as a missing binary.
func TestMissingCwdNamed(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := testServer("missing", "-tools", "echo")
	missing.Cwd = filepath.Join(dir, "nosuch")
	notDir := testServer("notdir", "-tools", "echo")
	notDir.Cwd = file
	h := newTestHost(t, testPlan(missing, notDir), HostOptions{Env: testEnv(marker)})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	if _, err := c.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"missing": "its working directory (cwd) \"" + missing.Cwd + "\" does not exist",
		"notdir":  "its working directory (cwd) \"" + file + "\" is not a directory",
	}
	for _, s := range h.Status().Servers {
		if !strings.Contains(s.State, want[s.Name]) {
			t.Errorf("%s: state %q, want it to say %q", s.Name, s.State, want[s.Name])
		}
	}
}
