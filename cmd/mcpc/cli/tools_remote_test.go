package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

// mcpc tools --workspace DIR --scope SCOPE also connects the chat's remote
// servers and lists their allowed tools after the stdio tools, named as a
// chat names them; an unreachable server is server-start-failed at its
// entry, an entry of another scope is remote-sealed.
func TestToolsWithRemoteServers(t *testing.T) {
	leakMarker(t)
	ws := t.TempDir()
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: keyCanary})
	locked := remotetest.Start(t, remotetest.Options{Transport: "sse", Token: keyCanary})
	add := func(scope string, args ...string) {
		t.Helper()
		if code, _, stderr := run(t, append(append([]string{"remote", "add"}, args...), remoteArgs(ws, scope)...)...); code != ExitOK {
			t.Fatalf("remote add %v: exit %d\n%s", args, code, stderr)
		}
	}
	add("chat-1", "notes", notes.URL, "--bearer", keyCanary, "--tools", "echo,whoami,nope")
	add("chat-1", "locked", locked.URL, "--no-key", "--force")
	add("chat-2", "other", notes.URL, "--bearer", keyCanary)
	// A stdio tool named like a remote one: the stdio tool wins.
	dir, app := deployment(t, map[string][]string{"srv": {"-tools", "echo"}}, map[string]string{"srv": `{"ToolPrefix": "notes__"}`})
	args := []string{"tools", "--appsettings", app, "--agent-dir", dir, "--clean-env", "--env", "MCP_ENCRYPTION_SECRET=" + remoteSecret,
		"--workspace", ws, "--scope", "chat-1"}

	code, stdout, stderr := run(t, append(args, "--format", "json")...)
	if code != ExitProblems {
		t.Errorf("exit %d, want 1 (a remote server did not list its tools)\n%s", code, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%v %v %v %v", r["server"], r["tool"], r["name"], r["rule"]))
	}
	want := []string{
		"srv echo notes__echo <nil>",
		"notes echo <nil> tool-name-collision",
		"notes whoami notes__whoami <nil>",
		"locked <nil> <nil> server-start-failed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(rows) == 4 && rows[3]["message"] != "401 (Unauthorized)" {
		t.Errorf("locked: %v", rows[3])
	}
	p := regexp.QuoteMeta(remote.Path(ws))
	for _, re := range []string{
		p + `:\d+:\d+: error: remote server "locked" did not list its tools: 401 \(Unauthorized\) \[server-start-failed\]`,
		p + `:\d+:\d+: error: server "other": the sealed part does not open .* for scope "chat-1"`,
		p + `:\d+:\d+: warning: remote server "notes" does not offer the allowlisted tool "nope" \[remote-tool-missing\]`,
		p + `:\d+:\d+: warning: tool "echo" of remote server "notes" is skipped: the name "notes__echo" is already used by another tool \[tool-name-collision\]`,
		`  notes \(remote\): connected · 2 tools\n`,
		`1 server, 2 remote servers, 2 tools visible: `,
	} {
		if !regexp.MustCompile(re).MatchString(stderr) {
			t.Errorf("stderr lacks %s:\n%s", re, stderr)
		}
	}
	if strings.Contains(stdout+stderr, keyCanary) || strings.Contains(stdout+stderr, remoteSecret) {
		t.Errorf("output leaks a key:\n%s%s", stdout, stderr)
	}

	// The table, and without the secret nothing opens.
	code, stdout, _ = run(t, args...)
	if code != ExitProblems || !regexp.MustCompile(`notes\s+whoami\s+notes__whoami`).MatchString(stdout) || !regexp.MustCompile(`locked\s+-\s+-\s+\[server-start-failed\] 401 \(Unauthorized\)`).MatchString(stdout) {
		t.Errorf("text: exit %d\n%s", code, stdout)
	}
	noSecret := []string{"tools", "--appsettings", app, "--agent-dir", dir, "--clean-env", "--workspace", ws, "--scope", "chat-1", "--quiet"}
	code, stdout, stderr = run(t, noSecret...)
	if code != ExitProblems || strings.Count(stderr, "the host environment has no MCP_ENCRYPTION_SECRET") != 3 || strings.Contains(stdout, "notes__whoami") {
		t.Errorf("no secret: exit %d\n%s%s", code, stdout, stderr)
	}
	if notes.Calls("whoami") != 0 {
		t.Error("tools called a tool")
	}
}

func TestToolsRemoteUsage(t *testing.T) {
	dir, app := deployment(t, map[string][]string{"srv": {"-tools", "echo"}}, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workspace", dir}, "--workspace needs --scope"},
		{[]string{"--scope", "s"}, "--scope goes with --workspace"},
		{[]string{"--workspace", dir + "/missing", "--scope", "s"}, "missing"},
	} {
		code, _, stderr := run(t, append([]string{"tools", "--appsettings", app, "--agent-dir", dir, "--clean-env", "--quiet"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d\n%s", tc.args, code, stderr)
		}
	}
	// A workspace without servers.json: the stdio tools, and a note.
	code, stdout, stderr := run(t, "tools", "--appsettings", app, "--agent-dir", dir, "--clean-env", "--workspace", dir, "--scope", "s")
	if code != ExitOK || !strings.Contains(stdout, "srv") || !strings.Contains(stderr, "remote: no "+remote.Path(dir)) || !strings.Contains(stderr, "1 server, 0 remote servers, 1 tools visible") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}
