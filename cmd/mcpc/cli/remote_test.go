package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
	"github.com/mcpc-dev/mcpc/runtime/remoteset"
)

const (
	remoteSecret = "CANARY-host-secret-4b1d"
	keyCanary    = "CANARY-key-77aa01"
	headerCanary = "CANARY-hdr-3c3c3c"
)

// runIn runs mcpc with stdin.
func runIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"mcpc"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// remoteArgs are the flags every `mcpc remote` call of a test needs.
func remoteArgs(ws, scope string, extra ...string) []string {
	return append([]string{"--workspace", ws, "--scope", scope, "--clean-env", "--env", "MCP_ENCRYPTION_SECRET=" + remoteSecret}, extra...)
}

func serversJSON(t *testing.T, ws string) string {
	t.Helper()
	b, err := os.ReadFile(remote.Path(ws))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// entryText returns the line of servers.json holding the entry named name.
func entryText(t *testing.T, ws, name string) string {
	t.Helper()
	for _, l := range strings.Split(serversJSON(t, ws), "\n") {
		if strings.Contains(l, `"name": "`+name+`"`) {
			return strings.TrimSuffix(strings.TrimSpace(l), ",")
		}
	}
	t.Fatalf("no entry %s in\n%s", name, serversJSON(t, ws))
	return ""
}

// From `mcpc remote add` to a tool call, the way `mcpc run` makes it:
// every command, real Streamable HTTP and SSE servers, and no key, header
// value or host secret in any output.
func TestRemoteCommandsEndToEnd(t *testing.T) {
	ws := t.TempDir()
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: keyCanary})
	wiki := remotetest.Start(t, remotetest.Options{Transport: "sse"})
	var outputs []string
	record := func(code int, stdout, stderr string) (int, string, string) {
		outputs = append(outputs, stdout, stderr)
		return code, stdout, stderr
	}

	// The server is tried first: without the token it answers 401, and
	// nothing is saved.
	code, _, stderr := record(run(t, append([]string{"remote", "add", "notes", notes.URL, "--no-key"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitProblems || !strings.Contains(stderr, "notes: unavailable: 401 (Unauthorized)") || !strings.Contains(stderr, "nothing was saved") {
		t.Fatalf("add without key: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(remote.Path(ws)); err == nil {
		t.Fatal("a failed add wrote servers.json")
	}
	// The key on standard input: a bare token.
	code, stdout, stderr := record(runIn(t, keyCanary+"\n", append([]string{"remote", "add", "notes", notes.URL + "?team=blue"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitOK || !strings.Contains(stdout, "added remote server notes ("+notes.URL+", auto, headers: Authorization)") || !strings.Contains(stderr, "connected over Streamable HTTP · 5 tools") {
		t.Fatalf("add notes: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = record(run(t, append([]string{"remote", "add", "wiki", wiki.URL, "--transport", "sse", "--header", "X-Team: " + headerCanary, "--tools", "echo,whoami,nope"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitOK || !strings.Contains(stderr, "connected over SSE") || !strings.Contains(stderr, `does not offer the allowlisted tool "nope"`) {
		t.Fatalf("add wiki: exit %d\n%s%s", code, stdout, stderr)
	}
	// An unreachable server is saved only with --force.
	refused := remotetest.Refused(t)
	code, _, _ = record(run(t, append([]string{"remote", "add", "down", refused, "--no-key"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitProblems || strings.Contains(serversJSON(t, ws), `"down"`) {
		t.Fatalf("add down without --force: exit %d", code)
	}
	code, _, stderr = record(run(t, append([]string{"remote", "add", "down", refused, "--no-key", "--force"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitOK || !strings.Contains(stderr, "down: unavailable: connection refused") {
		t.Fatalf("add --force: exit %d\n%s", code, stderr)
	}

	code, stdout, stderr = record(run(t, append([]string{"remote", "list"}, remoteArgs(ws, "chat-1")...)...))
	for _, want := range []string{
		"notes  " + notes.URL + "  auto (http)  connected · 5 tools\n",
		"wiki   " + wiki.URL + "  sse          connected · 2 tools\n",
		"down   " + refused + "  auto         unavailable: connection refused\n",
		"\nnotes\n  headers:   Authorization\n  allowlist: all tools\n  tools:     notes__drop, notes__echo, notes__fail, notes__slow, notes__whoami\n",
		"\nwiki\n  headers:   X-Team\n  allowlist: echo, whoami, nope\n  not offered by the server: nope\n  tools:     wiki__echo, wiki__whoami\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, stdout)
		}
	}
	if code != ExitOK || strings.Contains(stdout, "team=blue") {
		t.Errorf("list: exit %d\n%s%s", code, stdout, stderr)
	}

	code, stdout, _ = record(run(t, append([]string{"remote", "tools", "wiki"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitOK || !strings.Contains(stdout, "wiki offers 5 tools; allowlist: echo, whoami, nope\n    drop\n  * echo\n") || !strings.Contains(stdout, "  ! nope (allowlisted, not offered)") {
		t.Errorf("tools wiki: exit %d\n%s", code, stdout)
	}
	notesBefore, downBefore := entryText(t, ws, "notes"), entryText(t, ws, "down")
	// An allowlist naming a tool the server does not offer is saved, with
	// the warning remote add gives.
	code, stdout, stderr = record(run(t, append([]string{"remote", "tools", "wiki", "echo,nosuch"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitOK || stdout != "wiki: allowlist set to echo, nosuch\n" || stderr != "warning: the server does not offer the allowlisted tool \"nosuch\"\n" {
		t.Errorf("set tools with one not offered: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = record(run(t, append([]string{"remote", "tools", "wiki", "echo,whoami,slow"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitOK || stdout != "wiki: allowlist set to echo, whoami, slow\n" || stderr != "" {
		t.Fatalf("set tools: exit %d\n%s%s", code, stdout, stderr)
	}
	if entryText(t, ws, "notes") != notesBefore || entryText(t, ws, "down") != downBefore || !strings.Contains(entryText(t, ws, "wiki"), `"tools": ["echo", "whoami", "slow"]`) {
		t.Errorf("tools changed other entries:\n%s", serversJSON(t, ws))
	}

	// The runtime side: what `mcpc run` embeds for a chat.
	m, err := remoteset.New(ws, "chat-1", remoteset.Options{Secret: remoteSecret}, remoteset.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Start()
	l, err := m.List(context.Background(), func(name string) bool { return name == "read" })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range l.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "notes__drop,notes__echo,notes__fail,notes__slow,notes__whoami,wiki__echo,wiki__slow,wiki__whoami" {
		t.Errorf("tools %v", names)
	}
	res, err := m.Call(context.Background(), "notes__echo", map[string]any{"text": "hello from the chat"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "hello from the chat") {
		t.Errorf("%s", b)
	}
	for _, name := range []string{"notes__whoami", "wiki__whoami"} {
		res, err := m.Call(context.Background(), name, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		outputs = append(outputs, string(b))
		if !strings.Contains(string(b), "[REDACTED]") {
			t.Errorf("%s: %s", name, b)
		}
	}
	_, err = m.Call(context.Background(), "notes__fail", map[string]any{"text": "x"})
	if err == nil {
		t.Fatal("fail succeeded")
	}
	outputs = append(outputs, err.Error(), l.PromptSection())

	// The same entries do not open in another chat.
	code, stdout, _ = record(run(t, append([]string{"remote", "list"}, remoteArgs(ws, "chat-2")...)...))
	if code != ExitOK || strings.Count(stdout, "does not open") != 3 {
		t.Errorf("list in another scope: exit %d\n%s", code, stdout)
	}
	code, _, stderr = record(run(t, append([]string{"remote", "tools", "notes", "all"}, remoteArgs(ws, "chat-2")...)...))
	if code != ExitProblems || !strings.Contains(stderr, "does not open") || entryText(t, ws, "notes") != notesBefore {
		t.Errorf("tools in another scope: exit %d\n%s", code, stderr)
	}

	wikiBefore := entryText(t, ws, "wiki")
	code, stdout, _ = record(run(t, append([]string{"remote", "remove", "down"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitOK || !strings.HasPrefix(stdout, "removed remote server down") || strings.Contains(serversJSON(t, ws), `"down"`) {
		t.Fatalf("remove: exit %d\n%s", code, stdout)
	}
	if entryText(t, ws, "notes") != notesBefore || entryText(t, ws, "wiki") != wikiBefore {
		t.Errorf("remove changed other entries")
	}
	code, _, stderr = record(run(t, append([]string{"remote", "remove", "down"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitUsage || !strings.Contains(stderr, `no remote server "down"`) || !strings.Contains(stderr, "servers: notes, wiki") {
		t.Errorf("remove again: exit %d\n%s", code, stderr)
	}
	// The same name replaces the entry, in place.
	code, stdout, _ = record(runIn(t, "Authorization: Bearer "+keyCanary+"\nX-Extra: "+headerCanary+"\n", append([]string{"remote", "add", "notes", notes.URL, "--tools", "echo"}, remoteArgs(ws, "chat-1")...)...))
	if code != ExitOK || !strings.HasPrefix(stdout, "replaced remote server notes") || entryText(t, ws, "wiki") != wikiBefore || strings.Count(serversJSON(t, ws), `"notes"`) != 1 {
		t.Errorf("replace: exit %d\n%s\n%s", code, stdout, serversJSON(t, ws))
	}

	// Validate sees the same.
	code, stdout, stderr = record(run(t, "validate", "--clean-env", "--agent-dir", ws, "--env", "MCP_ENCRYPTION_SECRET="+remoteSecret, "--workspace", ws, "--scope", "chat-1"))
	if code != ExitOK || !strings.Contains(stderr, `remote: 2 servers in `+remote.Path(ws)+`; sealed entries opened with MCP_ENCRYPTION_SECRET for scope "chat-1"`) {
		t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = record(run(t, "validate", "--clean-env", "--agent-dir", ws, "--env", "MCP_ENCRYPTION_SECRET="+remoteSecret, "--workspace", ws, "--scope", "chat-9", "--format", "json"))
	var ds []map[string]any
	if err := json.Unmarshal([]byte(stdout), &ds); err != nil || code != ExitProblems || len(ds) != 2 || ds[0]["rule"] != "remote-sealed" || ds[0]["line"] != float64(4) {
		t.Errorf("validate another scope: exit %d %v\n%s", code, err, stdout)
	}

	for i, out := range outputs {
		for _, c := range []string{keyCanary, headerCanary, remoteSecret, "CANARY"} {
			if strings.Contains(out, c) {
				t.Errorf("output %d leaks %s:\n%s", i, c, out)
			}
		}
	}
}

func TestRemoteNeedsTheHostSecret(t *testing.T) {
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	code, _, stderr := run(t, "remote", "add", "s", srv.URL, "--no-key", "--workspace", ws, "--scope", "c", "--clean-env")
	if code != ExitUsage || !strings.Contains(stderr, "MCP_ENCRYPTION_SECRET") || !strings.Contains(stderr, "TELEGRAM_BOT_TOKEN") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, ".volcanic")); err == nil {
		t.Error("something was written")
	}
	// The bot token is the fallback; the entry opens with it.
	code, _, stderr = run(t, "remote", "add", "s", srv.URL, "--no-key", "--workspace", ws, "--scope", "c", "--clean-env", "--env", "TELEGRAM_BOT_TOKEN=123:"+keyCanary)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	code, stdout, _ := run(t, "remote", "list", "--workspace", ws, "--scope", "c", "--clean-env", "--env", "TELEGRAM_BOT_TOKEN=123:"+keyCanary)
	if code != ExitOK || !strings.Contains(stdout, "connected · 5 tools") {
		t.Errorf("list: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = run(t, "remote", "list", "--workspace", ws, "--scope", "c", "--clean-env", "--env", "MCP_ENCRYPTION_SECRET=other", "--env", "TELEGRAM_BOT_TOKEN=123:"+keyCanary)
	if code != ExitOK || !strings.Contains(stdout, "does not open") {
		t.Errorf("MCP_ENCRYPTION_SECRET wins: exit %d\n%s", code, stdout)
	}
}

func TestRemoteUsageErrors(t *testing.T) {
	ws := t.TempDir()
	base := remoteArgs(ws, "c")
	for _, args := range [][]string{
		{"remote"},
		{"remote", "frobnicate"},
		append([]string{"remote", "add", "Bad_Name", "https://h.example/mcp", "--no-key"}, base...),
		append([]string{"remote", "add", "n", "https://user:" + keyCanary + "@h.example/mcp", "--no-key"}, base...),
		append([]string{"remote", "add", "n", "ftp://h.example/mcp", "--no-key"}, base...),
		append([]string{"remote", "add", "n", "https://h.example/mcp", "--no-key", "--transport", "ws"}, base...),
		append([]string{"remote", "add", "n", "https://h.example/mcp", "--no-key", "--bearer", keyCanary}, base...),
		append([]string{"remote", "add", "n", "https://h.example/mcp", "--bearer", "two words " + keyCanary}, base...),
		append([]string{"remote", "add", "n", "https://h.example/mcp", "--header", "Host: " + keyCanary}, base...),
		append([]string{"remote", "add", "n", "https://h.example/mcp", "--no-key", "--tools", "a,,b"}, base...),
		append([]string{"remote", "add", "n"}, base...),
		{"remote", "add", "n", "https://h.example/mcp", "--no-key", "--workspace", ws},
		{"remote", "list", "--scope", "c"},
		append([]string{"remote", "list", "--bearer", "x"}, base...),
		append([]string{"remote", "tools"}, base...),
		append([]string{"remote", "remove", "nope"}, base...),
		{"remote", "list", "--workspace", filepath.Join(ws, "missing"), "--scope", "c", "--clean-env"},
	} {
		code, stdout, stderr := runIn(t, keyCanary, args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, stderr)
		}
		if strings.Contains(stdout+stderr, "CANARY") {
			t.Errorf("%v leaks the key:\n%s%s", args, stdout, stderr)
		}
	}
	// A key that does not parse, from standard input.
	code, _, stderr := runIn(t, "not a token "+keyCanary, append([]string{"remote", "add", "n", "https://h.example/mcp"}, base...)...)
	if code != ExitUsage || strings.Contains(stderr, "CANARY") {
		t.Errorf("bad stdin key: exit %d\n%s", code, stderr)
	}
}

func TestRemoteHelpShowsExamples(t *testing.T) {
	for _, sub := range []string{"list", "add", "remove", "tools"} {
		code, stdout, _ := run(t, "remote", sub, "--help")
		if code != ExitOK || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "mcpc remote "+sub) {
			t.Errorf("remote %s --help: exit %d\n%s", sub, code, stdout)
		}
	}
	code, stdout, _ := run(t, "remote", "--help")
	if code != ExitOK || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "add") || !strings.Contains(stdout, "tools") {
		t.Errorf("remote --help: exit %d\n%s", code, stdout)
	}
	// Flags may come before or after the arguments.
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	code, _, stderr := run(t, append(append([]string{"remote"}, remoteArgs(ws, "c")...), "add", "--no-key", "s", srv.URL)...)
	if code != ExitOK {
		t.Errorf("flags first: exit %d\n%s", code, stderr)
	}
}

// A servers.json that cannot be used is reported with positions and never
// edited; an entry that does not open is never rewritten.
func TestRemoteLeavesBrokenFilesAlone(t *testing.T) {
	ws := t.TempDir()
	broken := "{\n  \"version\": 2,\n  \"servers\": []\n}\n"
	p := remote.Path(ws)
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte(broken), 0o600)
	for _, args := range [][]string{
		{"remote", "add", "n", "https://127.0.0.1:1/", "--no-key", "--force"},
		{"remote", "remove", "n"},
		{"remote", "tools", "n", "a"},
	} {
		code, _, stderr := run(t, append(args, remoteArgs(ws, "c")...)...)
		if code != ExitProblems || !strings.Contains(stderr, p+":2:14: error: servers.json: version must be 1") || !strings.Contains(stderr, "left untouched") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
		if serversJSON(t, ws) != broken {
			t.Fatalf("%v changed the file", args)
		}
	}
}

// mcpc remote without a known subcommand is a usage error that names the
// subcommands, whatever flags come with it.
func TestRemoteNeedsAKnownCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"remote"}, "remote needs a command: list, add, remove or tools"},
		{[]string{"remote", "--workspace", "x", "--scope", "s"}, "remote needs a command"},
		{[]string{"remote", "bogus", "--workspace", "x"}, `remote: unknown command "bogus": use list, add, remove or tools`},
		{[]string{"remote", "--workspace", "x", "bogus", "list"}, `unknown command "bogus"`},
	} {
		code, stdout, stderr := run(t, tc.args...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d\n%s%s", tc.args, code, stdout, stderr)
		}
	}
}

// mcpc remote add, remove and tools run at the same time (processes) take
// turns under the lock mcpc config takes: every one succeeds and the file
// holds what all of them did, nothing else, and nothing beside it.
func TestRemoteConcurrentEditsAllLand(t *testing.T) {
	bin := testservers.Mcpc(t)
	ws := t.TempDir()
	refused := remotetest.Refused(t)
	for _, name := range []string{"r0", "r1", "r2", "r3"} {
		if code, stdout, stderr := run(t, append([]string{"remote", "add", name, refused, "--no-key", "--force"}, remoteArgs(ws, "chat-1")...)...); code != ExitOK {
			t.Fatalf("add %s: exit %d\n%s%s", name, code, stdout, stderr)
		}
	}
	var edits [][]string
	for i := 0; i < 12; i++ {
		edits = append(edits, []string{"add", fmt.Sprintf("a%d", i), refused, "--no-key", "--force"})
	}
	edits = append(edits, []string{"remove", "r0"}, []string{"remove", "r1"}, []string{"tools", "r2", "x,y"}, []string{"tools", "r3", "z"})
	var wg sync.WaitGroup
	outs := make([][]byte, len(edits))
	errs := make([]error, len(edits))
	for i, e := range edits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, append(append([]string{"remote"}, e...), remoteArgs(ws, "chat-1")...)...)
			cmd.Stdin = strings.NewReader("")
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range edits {
		if errs[i] != nil {
			t.Errorf("%v: %v\n%s", edits[i], errs[i], outs[i])
		}
	}
	f, err := remote.Load(ws)
	if err != nil || f.Problem != "" {
		t.Fatalf("%v %v", err, f)
	}
	want := []string{"r2", "r3"}
	for i := 0; i < 12; i++ {
		want = append(want, fmt.Sprintf("a%d", i))
	}
	got := f.Names()
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("servers %v, want %v", got, want)
	}
	if e := f.Find("r2"); len(e) != 1 || strings.Join(e[0].Tools, ",") != "x,y" {
		t.Errorf("tools of r2: %+v", e)
	}
	if e := f.Find("r3"); len(e) != 1 || strings.Join(e[0].Tools, ",") != "z" {
		t.Errorf("tools of r3: %+v", e)
	}
	if got := dirNames(t, filepath.Dir(remote.Path(ws))); got != "servers.json" {
		t.Errorf("beside servers.json: %s", got)
	}
}
