package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime"
)

// postJSON sends body to url with the admin token (none when "").
func postJSON(t *testing.T, client *http.Client, url, token, body string) (int, string) {
	t.Helper()
	return send(t, client, http.MethodPost, url, token, strings.NewReader(body))
}

// GET /chats/{id}/tools lists a chat's tools as its agent sees them, and
// POST /chats/{id}/tools/call calls one: results, tool errors and unknown
// tools and a server's JSON-RPC error answered in the admin writer (redacted), with the admin rules of
// /status; the AdminClient reads both.
func TestChatToolsEndpoints(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	root := filepath.Join(t.TempDir(), "chats")
	s := testServer("srv", "-tools", "echo,fail")
	s.Env = map[string]*string{"SECRET": ptr("${env:API_TOKEN}")}
	h := newTestHost(t, testPlan(s), runtime.HostOptions{Env: testEnv(marker, "API_TOKEN="+canaryToken)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: root, AdminToken: adminTokenForTest})
	base, client := httpGateway(t, gw)
	if code, body := do(t, client, "GET", base+"/chats/alpha/tools", adminTokenForTest); code != http.StatusNotFound {
		t.Errorf("the tools of a chat not used yet: %d %s", code, body)
	}
	cs := connectHTTP(t, client, base+"/chats/alpha/mcp")
	agent, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	admin := &AdminClient{Where: base, Base: base, Token: adminTokenForTest, Client: client}
	tools, err := admin.Tools(context.Background(), "alpha")
	if err != nil || len(tools) != len(agent.Tools) {
		t.Fatalf("tools: %v %+v", err, tools)
	}
	for i, at := range tools {
		want, _ := json.Marshal(agent.Tools[i].InputSchema)
		got, _ := json.Marshal(at.InputSchema)
		if at.Name != agent.Tools[i].Name || at.Description != agent.Tools[i].Description || !bytes.Equal(got, want) || at.Server != "srv" {
			t.Errorf("tool %d: %+v, the agent's %+v", i, at, agent.Tools[i])
		}
	}
	res, err := admin.CallTool(context.Background(), "alpha", "echo", json.RawMessage(`{"text": "the key is `+canaryToken+`"}`))
	if err != nil || res.Result == nil || res.Result.IsError || len(res.Result.Content) != 1 ||
		res.Result.Content[0].(*mcp.TextContent).Text != "the key is [REDACTED]" {
		t.Errorf("echo: %v %+v", err, res)
	}
	if res, err := admin.CallTool(context.Background(), "alpha", "fail", nil); err != nil || res.Result != nil || !strings.HasPrefix(res.Error, "MCP server srv: tool fail:") {
		t.Errorf("fail: %v %+v", err, res)
	}
	if res, err := admin.CallTool(context.Background(), "alpha", "nosuch", nil); err != nil || res.Error != `unknown tool "nosuch"` {
		t.Errorf("an unknown tool: %v %+v", err, res)
	}
	for _, c := range []struct {
		method, path, token, body string
		want                      int
	}{
		{"GET", "/chats/alpha/tools", "", "", http.StatusUnauthorized},
		{"POST", "/chats/alpha/tools/call", "", `{"name": "echo"}`, http.StatusUnauthorized},
		{"POST", "/chats/alpha/tools/call", "wrong-" + adminTokenForTest, `{"name": "echo"}`, http.StatusUnauthorized},
		{"GET", "/chats/alpha/tools/call", adminTokenForTest, "", http.StatusMethodNotAllowed},
		{"POST", "/chats/alpha/tools", adminTokenForTest, "", http.StatusMethodNotAllowed},
		{"POST", "/chats/alpha/tools/call", adminTokenForTest, `{"text": 1}`, http.StatusBadRequest},
		{"POST", "/chats/beta/tools/call", adminTokenForTest, `{"name": "echo"}`, http.StatusNotFound},
		{"GET", "/chats/al%2Fpha/tools", adminTokenForTest, "", http.StatusBadRequest},
	} {
		if code, body := postJSON(t, client, base+c.path, c.token, c.body); c.method == "POST" && code != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.want)
		} else if c.method == "GET" {
			if code, body := do(t, client, "GET", base+c.path, c.token); code != c.want {
				t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.want)
			}
		}
	}
}

// A craftbot gateway's POST /servers/{name}/restart stops the server's
// process (the next use starts it again), and its GET /tools and POST
// /tools/call are the shared chat's actions; all need the admin token.
func TestCraftbotAdminEndpoints(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	cb := newTestCraftbot(t, cbPlan(true, cbStdio("fs", "-tools", "echo")), marker, runtime.CraftbotOptions{})
	cb.Start()
	if err := cb.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	base, client := httpGatewayHandler(t, cb.Handler(CraftbotHTTPOptions{AdminToken: adminTokenForTest}))
	admin := &AdminClient{Where: base, Base: base, Token: adminTokenForTest, Client: client}
	tools, err := admin.Tools(context.Background(), "")
	if err != nil || len(tools) != 1 || tools[0].Name != "mcp_fs_echo" || !strings.HasPrefix(tools[0].Description, "[MCP:fs]") || tools[0].Tool != "echo" {
		t.Fatalf("tools: %v %+v", err, tools)
	}
	if res, err := admin.CallTool(context.Background(), "", "mcp_fs_echo", json.RawMessage(`{"text": "hi"}`)); err != nil || res.Result == nil ||
		res.Result.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Errorf("call: %v %+v", err, res)
	}
	starts := func() int {
		for _, s := range cb.Status().Servers {
			if s.Name == "fs" {
				return s.Starts
			}
		}
		return -1
	}
	if err := admin.RestartCraftbot(context.Background(), "fs"); err != nil {
		t.Fatal(err)
	}
	if st := cb.Status().Servers[0].State; st == "running" {
		t.Errorf("fs after the restart: %s", st)
	}
	if _, err := admin.CallTool(context.Background(), "", "mcp_fs_echo", json.RawMessage(`{"text": "again"}`)); err != nil || starts() != 2 {
		t.Errorf("the call after the restart: %v, %d starts", err, starts())
	}
	var ae *AdminError
	if err := admin.RestartCraftbot(context.Background(), "nosuch"); err == nil || !errors.As(err, &ae) || ae.Code != http.StatusNotFound {
		t.Errorf("restart of an unknown server: %v", err)
	}
	for _, c := range []struct{ method, path string }{{"POST", "/servers/fs/restart"}, {"GET", "/tools"}, {"POST", "/tools/call"}} {
		if code, body := do(t, client, c.method, base+c.path, ""); code != http.StatusUnauthorized {
			t.Errorf("%s %s without the token: %d %s", c.method, c.path, code, body)
		}
	}
	if code, _ := do(t, client, "GET", base+"/servers/fs/restart", adminTokenForTest); code != http.StatusMethodNotAllowed {
		t.Errorf("GET restart: %d", code)
	}
}
