package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mcpc tools --profile craftbot: the config's env values reach the server
// exactly and appear in no output (text, json, progress, diagnostics, the
// lock), also when the server prints them; --lock and --check work.
func TestToolsCraftbotSecretsAndLock(t *testing.T) {
	const canary = `CANARY-cbtools-"x"-${env:HOME}-4d1a`
	dir := t.TempDir()
	envOut := filepath.Join(dir, "env.json")
	config := func(tools string) string {
		servers := []map[string]any{
			{"name": "fs", "transport": "stdio", "command": testServer, "args": []string{"-tools", tools, "-env-out", envOut},
				"env": map[string]string{"API_TOKEN": canary, "EMPTY": ""}},
			{"name": "leaky", "transport": "stdio", "command": testServer, "args": []string{"-stderr-env", "API_TOKEN", "-exit-at-start", "1"},
				"env": map[string]string{"API_TOKEN": canary}},
			{"name": "ws", "transport": "websocket", "url": "ws://127.0.0.1:1/ws"}, // nothing listens on port 1
		}
		b, _ := json.MarshalIndent(map[string]any{"mcp_servers": servers}, "", "  ")
		return write(t, dir, "mcp_config.json", string(b))
	}
	cfg := config("echo,search")
	src := []string{"--clean-env", "--profile", "craftbot", "--config", cfg}
	var out strings.Builder
	for _, format := range []string{"text", "json"} {
		code, stdout, stderr := run(t, append([]string{"tools", "--format", format}, src...)...)
		out.WriteString(stdout + stderr)
		if code != ExitProblems || !strings.Contains(stdout, "mcp_fs_search") || !strings.Contains(stderr, "websocket ws://127.0.0.1:1/ws: ") {
			t.Errorf("--format %s: exit %d\n%s%s", format, code, stdout, stderr)
		}
	}
	if !strings.Contains(out.String(), "API_TOKEN=[REDACTED]") {
		t.Errorf("the failing server's stderr is not shown redacted:\n%s", out.String())
	}
	b, err := os.ReadFile(envOut)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	json.Unmarshal(b, &env)
	if !slices.Contains(env, "API_TOKEN="+canary) || !slices.Contains(env, "EMPTY=") {
		t.Errorf("the server's env: %q", env)
	}

	// The lock: not written while a server fails; written without them.
	lock := filepath.Join(dir, "mcpc.lock.json")
	code, stdout, stderr := run(t, append([]string{"tools", "--quiet", "--lock", lock}, src...)...)
	out.WriteString(stdout + stderr)
	if _, err := os.Stat(lock); code != ExitProblems || err == nil || !strings.Contains(stderr, "the lock was not written") {
		t.Errorf("lock with failed servers: exit %d, %v\n%s", code, err, stderr)
	}
	okCfg := func(tools string) {
		servers := []map[string]any{{"name": "fs", "transport": "stdio", "command": testServer, "args": []string{"-tools", tools},
			"env": map[string]string{"API_TOKEN": canary}}}
		b, _ := json.Marshal(map[string]any{"mcp_servers": servers})
		write(t, dir, "mcp_config.json", string(b))
	}
	okCfg("echo,search")
	if code, stdout, stderr := run(t, append([]string{"tools", "--quiet", "--lock", lock}, src...)...); code != ExitOK {
		t.Fatalf("lock: exit %d\n%s%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(lock)
	out.Write(data)
	if !strings.Contains(string(data), `"visibleName": "mcp_fs_search"`) {
		t.Errorf("lock:\n%s", data)
	}
	if code, _, stderr := run(t, append([]string{"tools", "--quiet", "--lock", lock, "--check"}, src...)...); code != ExitOK {
		t.Errorf("check of the same tools: exit %d\n%s", code, stderr)
	}
	okCfg("echo")
	code, stdout, stderr = run(t, append([]string{"tools", "--quiet", "--lock", lock, "--check"}, src...)...)
	out.WriteString(stdout + stderr)
	if code != ExitProblems || !strings.Contains(stderr, `tool "search" was removed`) {
		t.Errorf("check of a removed tool: exit %d\n%s", code, stderr)
	}
	if strings.Contains(out.String(), canary) || strings.Contains(out.String(), "cbtools") {
		t.Errorf("the canary appears in the output:\n%s", out.String())
	}
}

// mcpc tools --profile craftbot shows each action's input schema exactly
// as CraftBot's adapter builds it: in JSON the map itself, in text one line
// per property; a tool the host does not register has no action.
func TestToolsCraftbotShowsTheHostsMap(t *testing.T) {
	dir := t.TempDir()
	tool := `{"name": "edit", "description": "", "inputSchema": {"type": "object", "required": ["path", "ghost"], "properties": {
		"path": {"type": "string", "description": "where"}, "n": {"anyOf": [{"type": "integer"}], "default": 3},
		"edits": {"type": "array", "items": {"type": "object", "properties": {"old": {"type": "string"}}}},
		"opts": {"type": "object", "properties": {"x": {}}}, "mode": {"enum": ["a", "b"]}}}}`
	bad := `{"name": "bad", "description": "d", "inputSchema": {"type": "object", "properties": {"p": "string"}}}`
	servers := []map[string]any{{"name": "fs", "description": "File tools", "transport": "stdio", "command": testServer,
		"args": []string{"-tools", "", "-tool-json", tool, "-tool-json", bad}}}
	b, _ := json.Marshal(map[string]any{"mcp_servers": servers})
	cfg := write(t, dir, "mcp_config.json", string(b))
	src := []string{"tools", "--quiet", "--clean-env", "--profile", "craftbot", "--config", cfg}
	code, stdout, stderr := run(t, append(src, "--format", "json")...)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || code != ExitProblems || len(rows) != 2 {
		t.Fatalf("exit %d %v\n%s%s", code, err, stdout, stderr)
	}
	in, _ := json.Marshal(rows[1]["input"])
	want := `{"edits":{"items":{"properties":{"old":{"type":"string"}},"type":"object"},"type":"array"},"mode":{"enum":["a","b"],"type":"string"},` +
		`"n":{"example":3,"type":"string"},"opts":{"description":"Nested object","type":"object"},"path":{"description":"where","required":true,"type":"string"}}`
	if string(in) != want || rows[1]["description"] != "[MCP:fs] edit from File tools" || rows[0]["action"] != nil || rows[0]["rule"] != "cb-action-schema" {
		t.Errorf("rows %v\ninput %s\nwant  %s", rows, in, want)
	}
	_, stdout, _ = run(t, append(src, "--format", "text")...)
	for _, line := range []string{
		"(not registered)  (set mcp_fs; server fs, tool bad)",
		`  - edits (array); items {"properties":{"old":{"type":"string"}},"type":"object"}`,
		`  - mode (string); one of ["a","b"]`,
		"  - n (string); example 3",
		"  - opts (object): Nested object",
		"  - path (string, required): where",
	} {
		if !strings.Contains(stdout, line+"\n") {
			t.Errorf("text lacks %q:\n%s", line, stdout)
		}
	}
}
