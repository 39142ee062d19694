package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// exampleConfig copies the example catalog into a temporary CraftBot
// directory with mode 0640 and returns its path.
func exampleConfig(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testservers.Root(), "examples/craftbot/app/config/mcp_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := write(t, t.TempDir(), "app/config/mcp_config.json", string(data))
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

// entrySpan returns the byte range an edit of name may change in data: the
// entry; for a removal with the separator before it; for a new entry the
// end of the last one.
func entrySpan(t *testing.T, data []byte, op craftbot.Op, name string) (int, int) {
	t.Helper()
	cfg, _, err := craftbot.Check("x", data, craftbot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(cfg.Entries)
	if op == craftbot.OpAdd || op == craftbot.OpAddJSON {
		return cfg.Entries[n-1].End, cfg.Entries[n-1].End
	}
	for i, e := range cfg.Entries {
		if e.Name == name {
			if op == craftbot.OpRemove && i > 0 {
				return cfg.Entries[i-1].End, e.End
			}
			return e.Start, e.End
		}
	}
	t.Fatalf("no server %s", name)
	return 0, 0
}

// Each edit of mcpc config, on the example catalog, changes the file only
// inside the edited entry (a diff of the bytes before and after), keeps its
// mode, leaves no temporary file, and the result validates.
func TestConfigEditsChangeOnlyTheEntry(t *testing.T) {
	p := exampleConfig(t)
	edits := []struct {
		args []string
		op   craftbot.Op
		name string
		out  string
	}{
		{[]string{"add", "clock", "--transport", "stdio", "--", "uvx", "mcp-server-time", "--local-timezone=UTC"}, craftbot.OpAdd, "clock", "added server clock (stdio, enabled)"},
		{[]string{"add-json", "wiki", `{"transport": "websocket", "url": "wss://wiki.example.com/ws", "enabled": false}`}, craftbot.OpAddJSON, "wiki", "added server wiki (websocket, disabled)"},
		{[]string{"enable", "github"}, craftbot.OpEnable, "github", "enabled server github"},
		{[]string{"disable", "playwright"}, craftbot.OpDisable, "playwright", "disabled server playwright"},
		{[]string{"env", "github", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_value_0123456789"}, craftbot.OpEnv, "github", "set env GITHUB_PERSONAL_ACCESS_TOKEN of server github"},
		{[]string{"env", "filesystem", "ROOT", "/srv"}, craftbot.OpEnv, "filesystem", "set env ROOT of server filesystem"},
		{[]string{"remove", "sentry"}, craftbot.OpRemove, "sentry", "removed server sentry"},
		{[]string{"remove", "clock"}, craftbot.OpRemove, "clock", "removed server clock"},
	}
	for _, ed := range edits {
		before, _ := os.ReadFile(p)
		code, stdout, stderr := run(t, append([]string{"config", "--config", p, "--target-os", "linux"}, ed.args...)...)
		if code != ExitOK || !strings.Contains(stdout, ed.out) {
			t.Fatalf("%v: exit %d\n%s%s", ed.args, code, stdout, stderr)
		}
		after, _ := os.ReadFile(p)
		lo, hi := entrySpan(t, before, ed.op, ed.name)
		tail := len(before) - hi
		if !bytes.Equal(after[:lo], before[:lo]) || !bytes.Equal(after[len(after)-tail:], before[hi:]) {
			t.Errorf("%v changed bytes outside the entry (%d..%d)", ed.args, lo, hi)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
			t.Errorf("%v: mode %v", ed.args, fi.Mode().Perm())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	code, stdout, stderr := run(t, "validate", "--clean-env", "--profile", "craftbot", "--config", p, "--target-os", "linux")
	if code != ExitOK {
		t.Errorf("the edited file does not validate: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "config", "list", "--config", p, "--target-os", "linux")
	if code != ExitOK || !strings.Contains(stdout, "github") || strings.Contains(stdout, "playwright") || strings.Contains(stdout, "ghp_value") {
		t.Errorf("list after the edits: exit %d\n%s", code, stdout)
	}
}

// A refused edit exits 1 with the diagnostic that refuses it and leaves the
// file byte for byte; an edit that names nothing the file has exits 2.
func TestConfigRefusedEditsLeaveTheFile(t *testing.T) {
	p := exampleConfig(t)
	orig, _ := os.ReadFile(p)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"add", "time", "--", "npx", "x"}, ExitProblems, "[cb-duplicate-name]"},
		{[]string{"add", `bad"name`, "--", "npx"}, ExitProblems, "[cb-name-invalid]"},
		{[]string{"add-json", "r", `{"transport": "sse"}`}, ExitProblems, "[cb-missing-url]"},
		{[]string{"add-json", "r", `{"transport": "sse", "url": "https://x", "headers": {"A": "b"}}`}, ExitProblems, "[cb-edit-drops]"},
		{[]string{"add-json", "r", `{"transport": "sse",`}, ExitProblems, "<add-json JSON>:1:"},
		{[]string{"env", "sentry", "TOKEN", "x"}, ExitProblems, "[cb-field-ignored]"},
		{[]string{"add", "x", "--transport", "sse", "--", "npx"}, ExitUsage, "add-json"},
		{[]string{"add", "x"}, ExitUsage, "after --"},
		{[]string{"remove", "nope"}, ExitUsage, `no server "nope"`},
		{[]string{"enable", "nope"}, ExitUsage, `no server "nope"`},
		{[]string{"env", "github", "BAD-KEY", "x"}, ExitUsage, "not a variable name"},
		{[]string{"env", "github"}, ExitUsage, "env needs NAME KEY"},
		{[]string{"env", "github", "GITHUB_PERSONAL_ACCESS_TOKEN"}, ExitUsage, "no value on standard input"},
		{[]string{"list", "extra"}, ExitUsage, "no arguments"},
		{[]string{"frobnicate"}, ExitUsage, "unknown command"},
	}
	for _, c := range cases {
		code, stdout, stderr := run(t, append([]string{"config", "--config", p}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr lacks %q:\n%s%s", c.args, code, c.code, c.want, stdout, stderr)
		}
		if c.code == ExitProblems && !strings.Contains(stderr, p+" is left untouched") {
			t.Errorf("%v: stderr does not say the file is untouched:\n%s", c.args, stderr)
		}
		if now, _ := os.ReadFile(p); !bytes.Equal(now, orig) {
			t.Fatalf("%v changed the file", c.args)
		}
	}
	missing := filepath.Join(t.TempDir(), "mcp_config.json")
	code, _, stderr := run(t, "config", "enable", "x", "--config", missing)
	if code != ExitUsage || !strings.Contains(stderr, "does not exist") {
		t.Errorf("missing file: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("an edit created the file")
	}
}

// Secrets set with env are never echoed: not when set (from an argument or
// standard input), not when the edit is refused, not by list; values
// already in the file do not show either, weak ones included.
func TestConfigSecretsNeverPrinted(t *testing.T) {
	const arg, piped, weak, inFile = "CANARY-arg-7d1c9e", "CANARY-stdin-55aa01", "hunter", "ghp_CANARYinfile0123456789"
	p := write(t, t.TempDir(), "mcp_config.json", `{
  "mcp_servers": [
    {"name": "db", "transport": "stdio", "command": "npx", "env": {"PASSWORD": "`+weak+`", "TOKEN": "`+inFile+`"}, "enabled": true},
    {"name": "broken", "transport": "stdio", "env": {"TOKEN": "`+inFile+`"}},
    {"name": "sentry", "transport": "sse", "url": "https://sentry.example.com/sse", "enabled": false, "api_key": "`+inFile+`"}
  ]
}
`)
	var out strings.Builder
	do := func(stdin string, args ...string) int {
		code, stdout, stderr := runIn(t, stdin, append([]string{"config", "--config", p, "--target-os", "linux"}, args...)...)
		out.WriteString(stdout + stderr)
		return code
	}
	if code := do("", "env", "db", "API_KEY", arg); code != ExitOK {
		t.Fatalf("env from an argument: exit %d\n%s", code, out.String())
	}
	if code := do(piped+"\n", "env", "db", "STDIN_KEY"); code != ExitOK {
		t.Fatalf("env from stdin: exit %d\n%s", code, out.String())
	}
	refused := [][]string{
		{"env", "sentry", "TOKEN", arg},
		{"env", "broken", "TOKEN", arg},
		{"env", "db", "BAD KEY", arg},
		{"env", "nope", "K", arg},
		{"add-json", "x", `{"transport": "sse", "env": {"T": "` + arg + `"}}`},
		{"add-json", "x", `{"transport": "stdio" "env": {"T": "` + arg + `"}}`},
		{"add-json", "x", `{"transport": "stdio", "command": "npx", "env": {"T": "` + arg + `", "T": "x"}}`},
	}
	for _, args := range refused {
		if code := do("", args...); code == ExitOK {
			t.Errorf("%v was accepted", args)
		}
	}
	do("", "list", "--all")
	do("", "enable", "db")
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), `"API_KEY": "`+arg+`"`) || !strings.Contains(string(data), `"STDIN_KEY": "`+piped+`"`) {
		t.Fatalf("the values were not written:\n%s", data)
	}
	for _, c := range []string{arg, piped, weak, inFile} {
		if strings.Contains(out.String(), c) {
			t.Errorf("the canary %q appears in the output:\n%s", c, out.String())
		}
	}
	if !strings.Contains(out.String(), "[REDACTED]") {
		t.Errorf("no excerpt shows a hidden value:\n%s", out.String())
	}
}

// Eight mcpc processes adding a server each to the same file at the same
// time: every entry is there at the end (the lock makes them take turns).
func TestConfigConcurrentAddsAllLand(t *testing.T) {
	bin := testservers.Mcpc(t)
	p := exampleConfig(t)
	const n = 8
	var wg sync.WaitGroup
	outs := make([][]byte, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "config", "add", fmt.Sprintf("added-%d", i), "--config", p, "--target-os", "linux", "--", "npx", "-y", fmt.Sprintf("server-%d", i))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Errorf("process %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	data, _ := os.ReadFile(p)
	cfg, ds, err := craftbot.Check(p, data, craftbot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Rule != craftbot.RuleTargetOS && d.Rule != craftbot.RuleURLInsecure { // the example's own marks
			t.Errorf("after the concurrent adds: %v", d)
		}
	}
	for i := 0; i < n; i++ {
		if e := cfg.Lookup(fmt.Sprintf("added-%d", i)); e == nil || e.Args[1] != fmt.Sprintf("server-%d", i) {
			t.Errorf("server added-%d is lost", i)
		}
	}
}

// A config file that is a symbolic link stays one: the edit replaces the
// file it points to, and locks in the link's directory, the config's own:
// nothing is created beside the target (here the target's directory could
// not even hold a lock file of that name), and nothing is left anywhere.
func TestConfigEditKeepsALink(t *testing.T) {
	target := exampleConfig(t)
	link := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if err := os.Mkdir(filepath.Join(filepath.Dir(target), ".mcp_config.json.lock"), 0o700); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := run(t, "config", "disable", "filesystem", "--config", link); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	cfg := mustCheck(t, target)
	if e := cfg.Lookup("filesystem"); e == nil || e.Enabled {
		t.Error("the target was not edited")
	}
	if got := dirNames(t, filepath.Dir(target)); got != ".mcp_config.json.lock mcp_config.json" {
		t.Errorf("beside the target: %s", got)
	}
	if got := dirNames(t, filepath.Dir(link)); got != "mcp_config.json" {
		t.Errorf("beside the link: %s", got)
	}
}

// dirNames lists the names in dir, sorted, separated by spaces.
func dirNames(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// An edit leaves nothing beside the file (no lock file for git to show),
// and a file nobody may write is refused, exit 2, and left as it is: the
// rename would replace it all the same (and root may write anything).
func TestConfigEditLeavesNothingAndRefusesAReadOnlyFile(t *testing.T) {
	p := exampleConfig(t)
	if code, stdout, stderr := run(t, "config", "disable", "filesystem", "--config", p); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if got := dirNames(t, filepath.Dir(p)); got != "mcp_config.json" {
		t.Errorf("after an edit the directory holds %s", got)
	}
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(p)
	code, stdout, stderr := run(t, "config", "enable", "filesystem", "--config", p)
	if code != ExitUsage || !strings.Contains(stderr, p+" is read-only (mode 0444): make it writable to edit it") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, orig) {
		t.Error("a read-only file was edited")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode %04o", fi.Mode().Perm())
	}
	if got := dirNames(t, filepath.Dir(p)); got != "mcp_config.json" {
		t.Errorf("after a refused edit the directory holds %s", got)
	}
}

func mustCheck(t *testing.T, p string) *craftbot.Config {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := craftbot.Check(p, data, craftbot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Every reader of mcp_config.json says the same of its byte order marks:
// CraftBot's json.load refuses a file with one, so one or two are an error
// at 1:1 for validate and list alike (positions count after the first,
// which mcpc drops), and every edit refuses the file (exit 1, file
// untouched), never an internal error.
func TestConfigReadersAgreeOnByteOrderMarks(t *testing.T) {
	const body = `{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "x", "env": {"K": "v"}}]}`
	edits := [][]string{
		{"disable", "a"}, {"enable", "a"}, {"remove", "a"}, {"env", "a", "K", "w"},
		{"add-json", "b", `{"transport": "stdio", "command": "y"}`}, {"add", "c", "--", "z"},
	}
	for marks := 0; marks <= 2; marks++ {
		content := strings.Repeat("\uFEFF", marks) + body
		p := write(t, t.TempDir(), "mcp_config.json", content)
		want := ExitOK
		if marks > 0 {
			want = ExitProblems
		}
		for _, args := range [][]string{{"validate", "--profile", "craftbot"}, {"config", "list"}} {
			code, stdout, stderr := run(t, append(args, "--config", p)...)
			if code != want {
				t.Errorf("%d marks, %v: exit %d, want %d\n%s%s", marks, args, code, want, stdout, stderr)
			}
			if want == ExitProblems && !strings.Contains(stdout+stderr, p+":1:1: error: ") {
				t.Errorf("%d marks, %v: no syntax error at 1:1:\n%s%s", marks, args, stdout, stderr)
			}
		}
		for _, args := range edits {
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := run(t, append([]string{"config", args[0], "--config", p}, args[1:]...)...)
			now, _ := os.ReadFile(p)
			switch {
			case code != want:
				t.Errorf("%d marks, %v: exit %d, want %d\n%s%s", marks, args, code, want, stdout, stderr)
			case want == ExitProblems && (!bytes.Equal(now, []byte(content)) || !strings.Contains(stderr, "has errors")):
				t.Errorf("%d marks, %v: not refused for the file's errors, or the file changed:\n%s%s", marks, args, stderr, now)
			case want == ExitOK && !bytes.HasPrefix(now, []byte(strings.Repeat("\uFEFF", marks)+"{")):
				t.Errorf("%d marks, %v: the byte order mark was not kept: %q", marks, args, now)
			}
		}
	}
}
