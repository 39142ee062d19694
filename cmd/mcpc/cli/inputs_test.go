//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// badInputCommands are command lines that read the file $BAD through each
// of mcpc's file flags (and settings.json, servers.json through their
// directories). $DIR is a directory holding a valid plan, appsettings and
// workspace.
var badInputCommands = [][]string{
	{"validate", "--clean-env", "--agent-dir", "$DIR/agent", "--appsettings", "$BAD"},
	{"validate", "--clean-env", "--agent-dir", "$DIR/agent", "--env-file", "$BAD"},
	{"validate", "--clean-env", "--agent-dir", "$DIR/agent", "--deny-list", "$BAD"},
	{"validate", "--clean-env", "--agent-dir", "$BADDIR"},
	{"validate", "--clean-env", "--agent-dir", "$DIR/agent", "--workspace", "$BADWS"},
	{"plan", "--clean-env", "--agent-dir", "$DIR/agent", "--appsettings", "$BAD"},
	{"explain", "x", "--clean-env", "--agent-dir", "$DIR/agent", "--env-file", "$BAD"},
	{"tools", "--clean-env", "--plan", "$BAD"},
	{"tools", "--clean-env", "--plan", "$DIR/plan.json", "--env-file", "$BAD"},
	{"tools", "--clean-env", "--plan", "$DIR/plan.json", "--deny-list", "$BAD"},
	{"tools", "--clean-env", "--agent-dir", "$DIR/agent", "--lock", "$BAD", "--check"},
	{"run", "--clean-env", "--plan", "$BAD", "--stdio", "--workspace", "$DIR/ws"},
	{"run", "--clean-env", "--plan", "$DIR/plan.json", "--stdio", "--workspace", "$DIR/ws", "--env-file", "$BAD"},
	{"run", "--clean-env", "--plan", "$DIR/plan.json", "--stdio", "--workspace", "$DIR/ws", "--deny-list", "$BAD"},
	{"remote", "list", "--clean-env", "--workspace", "$BADWS", "--scope", "s"},
}

// checkBadInput runs every command line on bad, a file that must be refused
// with exit 2 and a message naming it and saying why (want(file)).
func checkBadInput(t *testing.T, dir, bad string, want func(file string) string) {
	t.Helper()
	badDir := filepath.Join(t.TempDir(), "agent")
	os.MkdirAll(badDir, 0o755)
	badWS := t.TempDir()
	os.MkdirAll(filepath.Join(badWS, ".volcanic", "mcp"), 0o755)
	for dst, name := range map[string]string{filepath.Join(badDir, "settings.json"): "settings.json", filepath.Join(badWS, ".volcanic", "mcp", "servers.json"): "servers.json"} {
		if os.Link(bad, dst) == nil {
			continue
		}
		// Across file systems: another pipe, else a symbolic link.
		fi, _ := os.Stat(bad)
		if fi.Mode()&os.ModeNamedPipe != 0 && syscall.Mkfifo(dst, 0o600) == nil {
			continue
		}
		if err := os.Symlink(bad, dst); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, cmd := range badInputCommands {
		args := make([]string, len(cmd))
		named := bad
		for i, a := range cmd {
			a = strings.ReplaceAll(a, "$DIR", dir)
			a = strings.ReplaceAll(a, "$BADDIR", badDir)
			a = strings.ReplaceAll(a, "$BADWS", badWS)
			a = strings.ReplaceAll(a, "$BAD", bad)
			args[i] = a
		}
		switch {
		case strings.Contains(strings.Join(cmd, " "), "$BADDIR"):
			named = filepath.Join(badDir, "settings.json")
		case strings.Contains(strings.Join(cmd, " "), "$BADWS"):
			named = filepath.Join(badWS, ".volcanic", "mcp", "servers.json")
		}
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, named) {
			t.Errorf("mcpc %s: exit %d, want %d naming %s; stderr:\n%s", strings.Join(args, " "), code, ExitUsage, named, stderr)
			continue
		}
		if w := want(named); !strings.Contains(stderr, w) {
			t.Errorf("mcpc %s: stderr does not say %q:\n%s", strings.Join(args, " "), w, stderr)
		}
	}
}

// inputsDir holds a valid deployment without servers and its plan.
func inputsDir(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, "agent/settings.json", `{"mcpServers": {}}`)
	os.MkdirAll(filepath.Join(dir, "ws"), 0o755)
	code, _, stderr := run(t, "plan", "--clean-env", "--agent-dir", filepath.Join(dir, "agent"), "-o", filepath.Join(dir, "plan.json"))
	if code != ExitOK {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	return dir
}

// A file over 16 MiB is refused unread, whichever flag names it.
func TestEveryInputFileIsCappedAt16MiB(t *testing.T) {
	dir := inputsDir(t)
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 16<<20+1); err != nil {
		t.Fatal(err)
	}
	checkBadInput(t, dir, big, func(file string) string {
		if filepath.Base(file) == "servers.json" {
			return "larger than 1 MiB" // its own, smaller cap
		}
		return "larger than 16 MiB"
	})
}

// A named pipe is refused without waiting for a writer (the test
// returning at all shows that), and so is a device.
func TestEveryInputFileMustBeARegularFile(t *testing.T) {
	dir := inputsDir(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	checkBadInput(t, dir, fifo, func(string) string { return "a named pipe, not a regular file" })
	checkBadInput(t, dir, "/dev/zero", func(file string) string {
		if filepath.Base(file) == "servers.json" {
			return "is a symbolic link" // servers.json can only be a link to it
		}
		return "a character device, not a regular file"
	})
}

// Every JSON input may start with a UTF-8 byte order mark: a plan, a lock,
// a deny-list, servers.json (the compiler's own inputs: compile's tests).
func TestEveryJSONInputAcceptsAByteOrderMark(t *testing.T) {
	dir := inputsDir(t)
	const bom = "\uFEFF"
	withBOM := func(name string) string {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), filepath.Base(name))
		os.WriteFile(out, append([]byte(bom), data...), 0o644)
		return out
	}
	plan := withBOM(filepath.Join(dir, "plan.json"))
	agent := filepath.Join(dir, "agent")
	lock := filepath.Join(t.TempDir(), "lock.json")
	if code, _, stderr := run(t, "tools", "--quiet", "--clean-env", "--agent-dir", agent, "--lock", lock); code != ExitOK {
		t.Fatalf("tools --lock: exit %d: %s", code, stderr)
	}
	lock = withBOM(lock)
	deny := write(t, t.TempDir(), "deny.json", bom+`{"names": ["MY_KEY"]}`)
	ws := t.TempDir()
	write(t, ws, ".volcanic/mcp/servers.json", bom+`{"version": 1, "servers": []}`)
	for _, args := range [][]string{
		{"tools", "--quiet", "--clean-env", "--plan", plan},
		{"run", "--clean-env", "--plan", plan, "--stdio", "--workspace", filepath.Join(dir, "ws")},
		{"tools", "--quiet", "--clean-env", "--agent-dir", agent, "--lock", lock, "--check"},
		{"validate", "--clean-env", "--agent-dir", agent, "--deny-list", deny},
		{"validate", "--clean-env", "--agent-dir", agent, "--workspace", ws},
		{"remote", "list", "--clean-env", "--workspace", ws, "--scope", "s"},
	} {
		if code, _, stderr := run(t, args...); code != ExitOK {
			t.Errorf("mcpc %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
}
