package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

var toolNames = testservers.ToolNames

func callResult(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	b, _ := json.Marshal(res)
	return res, string(b)
}

// From `mcpc remote add` to a tool call through `mcpc run --stdio`: the
// chat's remote tools beside its stdio tools, the key redacted (also when a
// stdio server echoes it), an unreachable server reported with its reason,
// a dropped connection re-made by the next call, and `mcpc remote tools`
// taking effect while the chat runs.
func TestRunStdioRemoteServers(t *testing.T) {
	marker := leakMarker(t)
	ws := t.TempDir()
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: keyCanary})
	locked := remotetest.Start(t, remotetest.Options{Transport: "http", Token: keyCanary})
	var outputs []string
	code, stdout, stderr := run(t, append([]string{"remote", "add", "notes", notes.URL, "--bearer", keyCanary}, remoteArgs(ws, "chat-42")...)...)
	if code != ExitOK {
		t.Fatalf("remote add notes: exit %d\n%s%s", code, stdout, stderr)
	}
	outputs = append(outputs, stdout, stderr)
	// A wrong token: the server answers 401; saved with --force.
	code, stdout, stderr = run(t, append([]string{"remote", "add", "locked", locked.URL, "--bearer", "wrong-" + keyCanary, "--force"}, remoteArgs(ws, "chat-42")...)...)
	if code != ExitOK || !strings.Contains(stderr, "locked: unavailable: 401 (Unauthorized)") {
		t.Fatalf("remote add locked: exit %d\n%s%s", code, stdout, stderr)
	}
	outputs = append(outputs, stdout, stderr)
	plan := compilePlan(t, map[string]map[string]any{
		"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}, "ToolPrefix": "s_"},
	})
	handshakes := notes.Initialized.Load() // the probe of remote add
	cs, wait := runStdio(t, "--plan", plan, "--workspace", ws, "--scope", "chat-42", "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--env", "MCP_ENCRYPTION_SECRET="+remoteSecret)

	if got, want := toolNames(t, cs), []string{"notes__drop", "notes__echo", "notes__fail", "notes__slow", "notes__whoami", "s_echo"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	if got := callText(t, cs, "notes__echo", map[string]any{"text": "hello"}); got != "hello" {
		t.Errorf("notes__echo: %q", got)
	}
	// The server echoes the Authorization header it got.
	_, out := callResult(t, cs, "notes__whoami", nil)
	outputs = append(outputs, out)
	if !strings.Contains(out, "you sent: Authorization: [REDACTED]") {
		t.Errorf("notes__whoami: %s", out)
	}
	// A stdio server that echoes the remote key.
	if got := callText(t, cs, "s_echo", map[string]any{"text": "key=" + keyCanary}); got != "key=[REDACTED]" {
		t.Errorf("s_echo: %q", got)
	}
	// The connection drops during a call: an error result, not retried; the
	// next call reconnects.
	res, out := callResult(t, cs, "notes__drop", nil)
	if !res.IsError || !strings.Contains(out, "the next call reconnects") {
		t.Errorf("notes__drop: %s", out)
	}
	if got := callText(t, cs, "notes__echo", map[string]any{"text": "again"}); got != "again" {
		t.Errorf("after the drop: %q", got)
	}
	if n := notes.Initialized.Load() - handshakes; n != 2 || notes.Calls("drop") != 1 {
		t.Errorf("%d handshakes, %d drop calls: want the first connect and one reconnect, one call", n, notes.Calls("drop"))
	}
	// `mcpc remote tools` while the chat runs: the next listing has it.
	code, stdout, stderr = run(t, append([]string{"remote", "tools", "notes", "echo"}, remoteArgs(ws, "chat-42")...)...)
	if code != ExitOK {
		t.Fatalf("remote tools: exit %d\n%s", code, stderr)
	}
	outputs = append(outputs, stdout, stderr)
	if got, want := toolNames(t, cs), []string{"notes__echo", "s_echo"}; !slices.Equal(got, want) {
		t.Errorf("after remote tools: %v, want %v", got, want)
	}

	code, stderr = wait()
	outputs = append(outputs, stderr)
	if code != ExitOK {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		`remote servers of ` + remote.Path(ws) + `, session scope "chat-42": connecting`,
		"chat stdio: remote server notes (" + notes.URL + ") connected · 5 tools over Streamable HTTP",
		"chat stdio: remote server locked (" + locked.URL + ") is unavailable: 401 (Unauthorized); the first listing after 60s tries it again",
		"chat stdio: remote server notes: the connection failed during the call",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for i, out := range outputs {
		for _, c := range []string{keyCanary, remoteSecret} {
			if strings.Contains(out, c) {
				t.Errorf("output %d leaks %s:\n%s", i, c, out)
			}
		}
	}
}

// Without --scope the stdio chat uses no remote servers, and says so.
func TestRunStdioWithoutScope(t *testing.T) {
	marker := leakMarker(t)
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	if code, _, stderr := run(t, append([]string{"remote", "add", "notes", srv.URL, "--no-key"}, remoteArgs(ws, "chat-42")...)...); code != ExitOK {
		t.Fatalf("remote add: exit %d\n%s", code, stderr)
	}
	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}}})
	requests := srv.Requests.Load()
	cs, wait := runStdio(t, "--plan", plan, "--workspace", ws, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--env", "MCP_ENCRYPTION_SECRET="+remoteSecret)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("tools %v", got)
	}
	code, stderr := wait()
	if code != ExitOK || !strings.Contains(stderr, "the remote servers of "+remote.Path(ws)+" are not used: give --scope SCOPE") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if srv.Requests.Load() != requests {
		t.Error("the remote server was contacted")
	}
}

// mcpc run --http: each chat's scope is its id, so an entry sealed for
// chat a and copied into chat b's workspace is skipped there; GET /status
// shows each chat's remote servers by name, url without query, state and
// header names.
func TestRunHTTPRemoteScopes(t *testing.T) {
	marker, bin := processTest(t)
	root := t.TempDir()
	wsA, wsB := filepath.Join(root, "a"), filepath.Join(root, "b")
	os.Mkdir(wsA, 0o700)
	notes := remotetest.Start(t, remotetest.Options{Transport: "http", Token: keyCanary})
	locked := remotetest.Start(t, remotetest.Options{Transport: "sse", Token: keyCanary})
	if code, _, stderr := run(t, append([]string{"remote", "add", "notes", notes.URL + "?k=q", "--bearer", keyCanary, "--tools", "echo,whoami"}, remoteArgs(wsA, "a")...)...); code != ExitOK {
		t.Fatalf("remote add: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, append([]string{"remote", "add", "locked", locked.URL, "--no-key", "--force"}, remoteArgs(wsA, "a")...)...); code != ExitOK {
		t.Fatalf("remote add locked: exit %d\n%s", code, stderr)
	}
	data, err := os.ReadFile(remote.Path(wsA))
	if err != nil {
		t.Fatal(err)
	}
	write(t, wsB, ".volcanic/mcp/servers.json", string(data))
	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer, "Args": []string{"-tools", "echo"}}})
	cmd, base, stderr := startRunHTTP(t, bin, "--plan", plan, "--workspace-root", root, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", marker, "--env", "MCP_ENCRYPTION_SECRET="+remoteSecret)
	tr := &http.Transport{}
	client := cmd.client(tr)
	sessions := map[string]*mcp.ClientSession{}
	for _, id := range []string{"a", "b"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: base + "/chats/" + id + "/mcp", HTTPClient: client}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions[id] = cs
	}
	if got := toolNames(t, sessions["a"]); !slices.Equal(got, []string{"echo", "notes__echo", "notes__whoami"}) {
		t.Errorf("chat a: %v", got)
	}
	if got := callText(t, sessions["a"], "notes__whoami", nil); got != "you sent: Authorization: [REDACTED]" {
		t.Errorf("chat a whoami: %q", got)
	}
	if got := toolNames(t, sessions["b"]); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("chat b: %v", got)
	}
	resp, err := (&http.Client{Transport: bearer(tr, cmd.adminToken)}).Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st struct {
		Chats []struct {
			ID     string `json:"id"`
			Remote struct {
				Scope   string `json:"scope"`
				Servers []struct {
					Name, URL, Transport, State string
					HeaderNames                 []string `json:"headerNames"`
				} `json:"servers"`
				Skipped []struct{ Name, Reason string } `json:"skipped"`
			} `json:"remote"`
		} `json:"chats"`
	}
	if err := json.Unmarshal(body, &st); err != nil || len(st.Chats) != 2 {
		t.Fatalf("status: %v\n%s", err, body)
	}
	a, b := st.Chats[0].Remote, st.Chats[1].Remote
	if a.Scope != "a" || len(a.Servers) != 2 ||
		a.Servers[0].Name != "notes" || a.Servers[0].URL != notes.URL || a.Servers[0].State != "connected · 2 tools" || strings.Join(a.Servers[0].HeaderNames, ",") != "Authorization" ||
		a.Servers[1].Name != "locked" || a.Servers[1].Transport != "auto" || a.Servers[1].State != "unavailable: 401 (Unauthorized)" {
		t.Errorf("chat a:\n%s", body)
	}
	if b.Scope != "b" || len(b.Servers) != 0 || len(b.Skipped) != 2 || b.Skipped[0].Reason != remote.NotOpenReason {
		t.Errorf("chat b:\n%s", body)
	}
	for _, cs := range sessions {
		cs.Close()
	}
	tr.CloseIdleConnections()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
	for what, out := range map[string]string{"status": string(body), "stderr": stderr.String()} {
		if strings.Contains(out, keyCanary) || strings.Contains(out, remoteSecret) || strings.Contains(out, "k=q") {
			t.Errorf("%s leaks:\n%s", what, out)
		}
	}
	if n := notes.Initialized.Load(); n != 2 {
		t.Errorf("notes: %d handshakes, want 2 (the probe of remote add, chat a); chat b never connects", n)
	}
}
