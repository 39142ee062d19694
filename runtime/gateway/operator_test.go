package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/clocktest"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

// Every failed retry of a remote server is logged with its own next
// delay (1, 2, 4 … minutes): the log said "after 60s" once, and the
// later, longer waits silently.
func TestRemoteRetryLogStatesTheNextDelay(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	ws := t.TempDir()
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	srv.Down.Store(true)
	addRemote(t, ws, "c", remote.Server{Name: "down", URL: srv.URL, Transport: "http", Tools: []string{"echo"}}, remote.Headers{})
	clock := clocktest.New()
	var logs logRecorder
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{
		Env: testEnv(marker, "MCP_ENCRYPTION_SECRET="+remoteSecret), Clock: clock, Log: logs.log,
		Remote: &runtime.RemoteOptions{Dial: patientDial},
	})
	chat, _ := h.Chat("c", ws)
	ctx := t.Context()
	for _, delay := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute} {
		if _, err := chat.Tools(ctx); err != nil {
			t.Fatal(err)
		}
		want := "remote server down (" + srv.URL + ") is unavailable: 503 (Service Unavailable); the first listing after " + fmt.Sprintf("%ds", int64(delay/time.Second)) + " tries it again"
		if !strings.Contains(logs.text(), want) {
			t.Fatalf("no line %q in the log:\n%s", want, logs.text())
		}
		clock.Advance(delay)
	}
	if n := strings.Count(logs.text(), "is unavailable"); n != 3 {
		t.Errorf("%d lines for 3 failures:\n%s", n, logs.text())
	}
}

const adminTokenForTest = "admin-token-0123456789"

// GET /chats/{id}/servers/{name} is /mcp <name>: command line without env
// values, env names, version, tools, last error, stderr tail, redacted;
// admin rules as for /status.
func TestGatewayServerDetail(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := filepath.Join(t.TempDir(), "chats")
	s := testServer("srv", "-tools", "echo", "-stderr", "starting with "+canaryToken)
	s.Env = map[string]*string{"SECRET": ptr("${env:API_TOKEN}")}
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker, "API_TOKEN="+canaryToken)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root, AdminToken: adminTokenForTest})
	base, client := httpGateway(t, gw)
	cs := connectHTTP(t, client, base+"/chats/alpha/mcp")
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}

	code, body := do(t, client, "GET", base+"/chats/alpha/servers/srv", adminTokenForTest)
	if code != http.StatusOK {
		t.Fatalf("detail: %d %s", code, body)
	}
	var d runtime.ServerDetail
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if d.Name != "srv" || d.State != "running" || !strings.Contains(d.CommandLine, testBin) || !slices.Contains(d.EnvNames, "SECRET") ||
		d.ServerVersion == "" || !slices.Equal(d.ToolNames, []string{"echo"}) || len(d.StderrTail) == 0 {
		t.Errorf("detail %+v", d)
	}
	if strings.Contains(body, canaryToken) || !strings.Contains(body, "[REDACTED]") {
		t.Errorf("the secret in the stderr tail is not redacted: %s", body)
	}
	for _, c := range []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/chats/alpha/servers/srv", "", http.StatusUnauthorized},
		{"GET", "/chats/alpha/servers/nope", adminTokenForTest, http.StatusNotFound},
		{"GET", "/chats/beta/servers/srv", adminTokenForTest, http.StatusNotFound},
		{"GET", "/chats/alpha/servers/srv/restart", adminTokenForTest, http.StatusMethodNotAllowed},
		{"GET", "/chats/alpha/servers/a/b", adminTokenForTest, http.StatusNotFound},
		{"GET", "/chats/al%2Fpha/servers/srv", adminTokenForTest, http.StatusBadRequest},
		{"POST", "/chats/alpha/servers/srv/restart", adminTokenForTest, http.StatusOK},
	} {
		if code, body := do(t, client, c.method, base+c.path, c.token); code != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.want)
		}
	}
}

// A playwright server whose browser died answers with an error that
// names no lost state, and its next call opens an empty browser: the
// agent is told the browser state was lost. Other servers' error results,
// and playwright's other errors, pass as they are.
func TestPlaywrightBrowserDeathNamesLostState(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	pw := testServer("playwright", "-tools", "error-result")
	other := testServer("other", "-tools", "error-result")
	other.ToolPrefix = "o_"
	h := newTestHost(t, testPlan(pw, other), runtime.HostOptions{Env: testEnv(marker)})
	chat, _ := h.Chat("c", t.TempDir())
	// What @playwright/mcp 0.0.82 answers once chromium is killed.
	closed := "### Error\nError: browserBackend.callTool: Target page, context or browser has been closed\nBrowser logs:\n\n<launching> /usr/bin/chromium --headless\n[pid=1][err] dbus noise"
	call := func(tool, text string) string {
		res, err := chat.Call(t.Context(), tool, map[string]any{"text": text})
		if err != nil || !res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		return resultText(res)
	}
	if got, want := call("error-result", closed), "The browser of MCP server playwright closed or died (Error: browserBackend.callTool: Target page, context or browser has been closed). The next call starts a new browser; browser state was lost."; got != want {
		t.Errorf("playwright:\n%s\nwant\n%s", got, want)
	}
	if got := call("error-result", "### Error\nError: Ref e5 not found"); got != "### Error\nError: Ref e5 not found" {
		t.Errorf("playwright's other error changed: %q", got)
	}
	if got := call("o_error-result", closed); got != closed {
		t.Errorf("another server's error changed: %q", got)
	}
}
