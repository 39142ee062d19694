package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// hostile is what an agent (servers.json, a config it may edit) or a
// server (its stderr, tool descriptions, version) writes to drive the
// operator's terminal: clear the screen, set the window title (OSC),
// return to the start of the line to overwrite it, and the 8-bit CSI.
const hostile = "\x1b[2J\x1b]0;pwned\x07\rFAKE\u009b2J"

// hostileShown is hostile as human-readable output shows it.
const hostileShown = `\x1b[2J\x1b]0;pwned\x07\rFAKE\u009b2J`

// rawControl returns the byte offset and the character of the first thing
// in s that is not text for a terminal: a C0 control other than the
// newline, DEL, a C1 control, a bidi control, or a byte that is not UTF-8;
// -1 when there is none.
func rawControl(s string) (int, rune) {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"),
			r < 0x20 && r != '\n', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return i, r
		}
	}
	return -1, 0
}

// checkEscaped fails unless out holds each of wants and no raw control
// character.
func checkEscaped(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
	if i, r := rawControl(out); i >= 0 {
		t.Errorf("%s holds a raw %U at byte %d:\n%q", what, r, i, out)
	}
}

// mcpc config list shows the names and env keys of mcp_config.json
// escaped: the entry with a hostile name is skipped, and listed.
func TestConfigListEscapesControls(t *testing.T) {
	cfg := map[string]any{"mcp_servers": []map[string]any{
		{"name": "ok", "transport": "stdio", "command": "npx", "env": map[string]string{"KEY" + hostile: "v"}, "enabled": true},
		{"name": "evil" + hostile, "transport": "stdio", "command": "npx", "enabled": true},
	}}
	b, _ := json.Marshal(cfg)
	p := write(t, t.TempDir(), "mcp_config.json", string(b))
	code, stdout, stderr := run(t, "config", "list", "--config", p)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	checkEscaped(t, "config list", stdout+stderr, "KEY"+hostileShown, "evil"+hostileShown)
}

// mcpc remote list shows what the agent wrote to servers.json escaped:
// the names, positions and reasons of the entries it skips.
func TestRemoteListEscapesControls(t *testing.T) {
	ws := t.TempDir()
	entries := []map[string]any{
		{"name": "evil" + hostile, "url": "https://notes.example.com/mcp", "transport": "auto", "tools": nil, "auth": "headers", "sealed": "x"},
		{"name": "notes", "url": "https://notes.example.com/mcp" + hostile, "transport": "auto", "tools": []string{"t" + hostile}, "auth": "headers", "sealed": "x"},
	}
	b, _ := json.Marshal(map[string]any{"version": 1, "servers": entries})
	write(t, ws, remote.RelPath, string(b))
	code, stdout, stderr := run(t, append([]string{"remote", "list"}, remoteArgs(ws, "chat-1")...)...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	checkEscaped(t, "remote list", stdout+stderr, "evil"+hostileShown+": name must be")
}

// mcpc explain shows the values of the sources escaped: a value is shown
// as JSON, whose escapes cover C0 but not C1 or the bidi controls.
func TestExplainEscapesControls(t *testing.T) {
	dir, app := deployment(t, map[string][]string{"srv": {"-name", hostile + "\u202e"}}, map[string]string{"srv": `{"Command": "npx` + jsonText(hostile) + `"}`})
	code, stdout, stderr := run(t, "explain", "srv", "--clean-env", "--agent-dir", dir, "--appsettings", app)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	const asJSON = `\u001b[2J\u001b]0;pwned\u0007\rFAKE\u009b2J`
	checkEscaped(t, "explain", stdout+stderr, `"npx`+asJSON+`"`, `"`+asJSON+`\u202e"`)
}

// jsonText is s as the inside of a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// mcpc tools shows what servers answer escaped: tool names, the reason a
// server failed (its stderr), and, for a craftbot config, descriptions.
func TestToolsEscapesControls(t *testing.T) {
	tool := `{"name": "t` + jsonText(hostile) + `", "description": "d` + jsonText(hostile) + `", "inputSchema": {"type": "object"}}`
	dir, app := deployment(t, map[string][]string{
		"srv":  {"-tools", "echo", "-tool-json", tool},
		"down": {"-stderr", "gone" + hostile, "-exit-at-start", "1"},
	}, nil)
	code, stdout, stderr := run(t, "tools", "--clean-env", "--agent-dir", dir, "--appsettings", app)
	if code != ExitProblems {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	checkEscaped(t, "tools", stdout+stderr, "t"+hostileShown, "gone"+hostileShown)

	action := `{"name": "search", "description": "d` + jsonText(hostile) + `", "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "description": "q` + jsonText(hostile) + `"}}}}`
	servers := []map[string]any{{"name": "fs", "transport": "stdio", "command": testServer, "args": []string{"-tools", "echo", "-tool-json", action}}}
	b, _ := json.Marshal(map[string]any{"mcp_servers": servers})
	cfg := write(t, t.TempDir(), "mcp_config.json", string(b))
	code, stdout, stderr = run(t, "tools", "--clean-env", "--profile", "craftbot", "--config", cfg)
	if code != ExitOK {
		t.Fatalf("craftbot: exit %d\n%s%s", code, stdout, stderr)
	}
	checkEscaped(t, "tools --profile craftbot", stdout+stderr, "d"+hostileShown, "q (string): q"+hostileShown)
}

// mcpc run logs what servers write to stderr escaped, and mcpc status
// shows what they answer escaped: server name and version, tool names,
// stderr tail, the reason a server failed.
func TestRunLogAndStatusEscapeControls(t *testing.T) {
	marker := leakMarker(t)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	tool := `{"name": "t` + jsonText(hostile) + `", "description": "d", "inputSchema": {"type": "object"}}`
	plan := compilePlan(t, map[string]map[string]any{
		"srv":  {"Command": testServer, "Args": []string{"-tools", "echo", "-tool-json", tool, "-stderr", "line" + hostile, "-name", "n" + hostile, "-version", "v" + hostile}},
		"down": {"Command": testServer, "Args": []string{"-stderr", "gone" + hostile, "-exit-at-start", "1"}},
	})
	ws := filepath.Join(t.TempDir(), "chat")
	cs, wait := runStdio(t, "--plan", plan, "--workspace", ws, "--clean-env", "--env", "PATH="+os.Getenv("PATH"), "--env", marker)
	if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo %q", got)
	}
	code, stdout, stderr := run(t, "status", "--workspace", ws)
	if code != ExitOK {
		t.Fatalf("status: exit %d\n%s%s", code, stdout, stderr)
	}
	checkEscaped(t, "status", stdout+stderr, "gone"+hostileShown)
	code, stdout, stderr = run(t, "status", "--workspace", ws, "srv")
	if code != ExitOK {
		t.Fatalf("status srv: exit %d\n%s%s", code, stdout, stderr)
	}
	checkEscaped(t, "status srv", stdout+stderr, "server: n"+hostileShown+" v"+hostileShown, "    line"+hostileShown+"\n")
	code, log := wait()
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, log)
	}
	checkEscaped(t, "the run log", log, "srv stderr: line"+hostileShown+"\n", "gone"+hostileShown)
}

// An error message is escaped too, whatever it quotes (here the path of
// the socket given).
func TestErrorMessageEscapesControls(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s"+hostile+".sock")
	code, stdout, stderr := run(t, "status", "--socket", sock)
	if code != ExitUsage {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	checkEscaped(t, "the error", stdout+stderr, "s"+hostileShown+".sock")
}

// The same for a craftbot plan: its run log and its status.
func TestRunCraftbotLogAndStatusEscapeControls(t *testing.T) {
	marker := leakMarker(t)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir := t.TempDir()
	servers := []map[string]any{
		{"name": "fs", "transport": "stdio", "command": testServer, "args": []string{"-tools", "echo", "-stderr", "line" + hostile}, "enabled": true},
		{"name": "broken", "transport": "stdio", "command": testServer, "args": []string{"-stderr", "gone" + hostile, "-exit-at-start", "4"}, "enabled": true},
	}
	b, _ := json.Marshal(map[string]any{"auto_connect": true, "mcp_servers": servers})
	cfg := write(t, dir, "app/config/mcp_config.json", string(b))
	planFile := filepath.Join(dir, "craftbot-plan.json")
	if code, _, stderr := run(t, "plan", "--profile", "craftbot", "--clean-env", "--config", cfg, "-o", planFile); code != ExitOK {
		t.Fatalf("mcpc plan: exit %d\n%s", code, stderr)
	}
	ws := filepath.Join(dir, "ws")
	cs, wait := runStdio(t, "--plan", planFile, "--workspace", ws, "--clean-env", "--env", marker)
	if got := callText(t, cs, "mcp_fs_echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo %q", got)
	}
	var stdout, stderr string
	testservers.WaitUntil(t, "the status says broken failed", func() bool {
		var code int
		code, stdout, stderr = run(t, "status", "--workspace", ws)
		return code != ExitOK || strings.Contains(stdout, "broken (stdio): failed")
	})
	checkEscaped(t, "status", stdout+stderr, "broken (stdio): failed: exited (4): gone"+hostileShown)
	code, log := wait()
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, log)
	}
	checkEscaped(t, "the run log", log, "fs stderr: line"+hostileShown+"\n", "broken stderr: gone"+hostileShown+"\n")
}

// mcpc diff shows the names and values of the plans escaped.
func TestDiffEscapesControls(t *testing.T) {
	old := compilePlan(t, map[string]map[string]any{"srv": {"Command": "npx"}})
	new := compilePlan(t, map[string]map[string]any{"srv": {"Command": "npx", "Args": []string{"a" + hostile}}, "s" + hostile: {"Command": "npx"}})
	code, stdout, stderr := run(t, "diff", old, new)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	checkEscaped(t, "diff", stdout+stderr, "+ s"+hostileShown+": added", `\u009b2J"]`)
}
