package ui

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// cbConfig is the mcp_config.json of the craftbot gateway's plan, as the
// page lists it: fs runs, nowhere cannot start (its command is no file).
const cbConfig = `{
  "auto_connect": true,
  "mcp_servers": [
    {"name": "fs", "description": "echoes what it is given", "transport": "stdio", "command": "mcp-test", "args": [], "env": {"FS_SECRET": "` + stderrCanary + `"}, "enabled": true},
    {"name": "nowhere", "transport": "stdio", "command": "/nonexistent/mcp-server", "args": [], "enabled": true}
  ]
}
`

// startCraftbotGateway is a real craftbot gateway (mcpc run --profile
// craftbot --http's): fs, the Go test server, prints its env value on
// stderr at start (the gateway redacts it); nowhere fails to start.
func startCraftbotGateway(t *testing.T) *testGateway {
	t.Helper()
	patient := int(testservers.Patient / time.Second)
	auto := true
	ref := plan.ConfigRef("FS_SECRET")
	p := &plan.Plan{PlanVersion: plan.Version, Profile: plan.ProfileCraftbot, AutoConnect: &auto, Servers: []plan.Server{
		{Name: "fs", Transport: "stdio", Command: testBin, Args: []string{"-stderr", "fs is up", "-stderr-env", "FS_SECRET"}, Enabled: true,
			Env: map[string]*string{"FS_SECRET": &ref}, StartupTimeoutSeconds: patient, CallTimeoutSeconds: patient},
		{Name: "nowhere", Transport: "stdio", Command: "/nonexistent/mcp-server", Args: []string{}, Enabled: true,
			Env: map[string]*string{}, StartupTimeoutSeconds: patient},
	}}
	cb, err := gateway.NewCraftbot(p, runtime.CraftbotOptions{Env: runtime.EnvFromList([]string{"PATH=" + os.Getenv("PATH")}, nil),
		Workspace: t.TempDir(), Secrets: []string{adminToken},
		Config: func(server, key string) (string, bool) { return stderrCanary, server == "fs" && key == "FS_SECRET" }})
	if err != nil {
		t.Fatal(err)
	}
	cb.Start()
	if err := cb.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: cb.Handler(gateway.CraftbotHTTPOptions{AdminToken: adminToken, MCPToken: "mcp-" + adminToken})}
	go srv.Serve(ln)
	tr := &http.Transport{}
	t.Cleanup(func() {
		srv.Close()
		cb.Close()
		tr.CloseIdleConnections()
	})
	g := &testGateway{base: "http://" + ln.Addr().String(), client: &http.Client{Transport: tr}}
	testservers.WaitUntil(t, "fs's stderr reaches the gateway", func() bool {
		st, err := cb.Status(), error(nil)
		for _, s := range st.Servers {
			if s.Name == "fs" && strings.Contains(strings.Join(s.StderrTail, "\n"), "FS_SECRET=") {
				return err == nil
			}
		}
		return false
	})
	return g
}

// craftbotConsoleUI serves cbConfig's file with the craftbot gateway
// attached.
func craftbotConsoleUI(t *testing.T, g *testGateway) (*uiPage, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.WriteFile(file, []byte(cbConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return startUI(t, Options{Profile: craftbot.Profile.Name(), Config: file, Craftbot: craftbot.Options{TargetOS: "linux"}, Gateway: g.admin()}), file
}

// A craftbot gateway's console: one table of servers (no chats), each with
// its state, actions, starts, last error and redacted stderr tail, and a
// Restart that restarts it; the summary counts what runs; GET /state says
// the same for the page's script; the servers page shows the gateway's
// state beside the verdict, in a cell of its own.
func TestCraftbotConsole(t *testing.T) {
	g := startCraftbotGateway(t)
	p, _ := craftbotConsoleUI(t, g)
	code, _, body := p.get("/gateway")
	if code != http.StatusOK {
		t.Fatalf("%d\n%s", code, body)
	}
	if !strings.Contains(body, "craftbot plan: 1 of 2 servers running, 1 actions served, auto_connect on") || strings.Contains(body, "Chats") ||
		strings.Contains(body, "processes running") {
		t.Errorf("the summary, or a chats section on a craftbot console:\n%s", body)
	}
	fs, nowhere := rowOf(t, body, "fs"), rowOf(t, body, "nowhere")
	for _, w := range []string{`data-live="cb:fs:state">running<`, `data-live="cb:fs:tools">1<`, `data-live="cb:fs:starts">1<`, "fs is up", "FS_SECRET=[REDACTED]", `button class="restart"`} {
		if !strings.Contains(fs, w) {
			t.Errorf("fs lacks %q:\n%s", w, fs)
		}
	}
	if !strings.Contains(nowhere, `class="tone-error" data-live="cb:nowhere:state">failed`) || !strings.Contains(nowhere, "/nonexistent/mcp-server") {
		t.Errorf("nowhere:\n%s", nowhere)
	}
	var st map[string]string
	_, _, raw := p.get("/state")
	if err := json.Unmarshal([]byte(raw), &st); err != nil || st["cb:fs:state"] != "running" || st["rt:fs"] != "running · 1 actions" ||
		!strings.HasPrefix(st["cb:nowhere:state"], "failed") {
		t.Errorf("GET /state: %v %s", err, raw)
	}
	_, _, body = p.get("/")
	row := rowOf(t, body, "fs")
	if !strings.Contains(row, `<span class="verdict-text">CraftBot starts it at startup</span>`) || !strings.Contains(row, `data-live="rt:fs">running · 1 actions</span>`) {
		t.Errorf("the verdict and the gateway's state of fs:\n%s", row)
	}

	csrf := csrfRE.FindStringSubmatch(body)[1]
	code, hdr, body := p.post("/gateway/restart", url.Values{"csrf": {csrf}, "name": {"fs"}})
	if code != http.StatusSeeOther {
		t.Fatalf("restart: %d\n%s", code, body)
	}
	if _, _, body := p.get(hdr.Get("Location")); !strings.Contains(body, "restarted server fs: the next call starts it again") {
		t.Errorf("no notice of the restart:\n%s", body)
	}
	_, _, raw = p.get("/state")
	if err := json.Unmarshal([]byte(raw), &st); err != nil || st["cb:fs:state"] == "running" {
		t.Errorf("after the restart: %v %s", err, raw)
	}
	code, _, body = p.post("/gateway/restart", url.Values{"csrf": {csrf}, "name": {"nosuch"}})
	if code != http.StatusBadGateway || !strings.Contains(body, "restart refused") {
		t.Errorf("restart of an unknown server: %d\n%s", code, body)
	}
	p.seen.noSecret(t, adminToken, stderrCanary)
}

// The tools page lists the actions as the agent sees them (name,
// "[MCP:server]" description, a form from the input schema) and calls one
// through the gateway: the result on the page, a secret in it redacted; a
// form that does not make arguments, and a tool the agent does not have,
// are said.
func TestCraftbotTools(t *testing.T) {
	g := startCraftbotGateway(t)
	p, _ := craftbotConsoleUI(t, g)
	code, _, body := p.get("/gateway/tools")
	if code != http.StatusOK {
		t.Fatalf("%d\n%s", code, body)
	}
	for _, w := range []string{`data-tool="mcp_fs_echo"`, "[MCP:fs]", `name="arg.text"`, `<small>string</small>`, "Input schema"} {
		if !strings.Contains(body, w) {
			t.Errorf("the tools page lacks %q:\n%s", w, body)
		}
	}
	csrf := csrfRE.FindStringSubmatch(body)[1]
	call := func(form url.Values) (int, string) {
		form.Set("csrf", csrf)
		code, _, body := p.post("/gateway/call", form)
		return code, body
	}
	code, body = call(url.Values{"tool": {"mcp_fs_echo"}, "arg.text": {"hello from the page"}})
	if code != http.StatusOK || !strings.Contains(body, `<pre class="content">hello from the page</pre>`) || !strings.Contains(body, "✓ mcp_fs_echo") {
		t.Errorf("the call: %d\n%s", code, body)
	}
	code, body = call(url.Values{"tool": {"mcp_fs_echo"}, "arg.text": {"the secret " + stderrCanary}})
	if code != http.StatusOK || !strings.Contains(body, "the secret [REDACTED]") {
		t.Errorf("a result with a secret: %d\n%s", code, body)
	}
	code, body = call(url.Values{"tool": {"mcp_fs_echo"}, "arguments": {`{"text": 1`}})
	if code != http.StatusBadRequest || !strings.Contains(body, "the arguments are not a JSON object") {
		t.Errorf("bad JSON arguments: %d\n%s", code, body)
	}
	code, body = call(url.Values{"tool": {"mcp_nosuch"}})
	if code != http.StatusBadRequest || !strings.Contains(body, `the chat&#39;s agent sees no tool &#34;mcp_nosuch&#34;`) {
		t.Errorf("an unknown tool: %d\n%s", code, body)
	}
	p.seen.noSecret(t, adminToken, stderrCanary)
}

// A volcanic gateway's tools are a chat's: the page lists the chats, shows
// the first one's tools, and calls one in the chat asked for.
func TestVolcanicTools(t *testing.T) {
	g := startGateway(t)
	p := startUI(t, Options{Profile: compile.ProfileVolcanic, Compile: compile.Options{CleanEnv: true, AgentDir: t.TempDir()}, Gateway: g.admin()})
	if code, _, body := p.get("/gateway/tools"); code != http.StatusOK || !strings.Contains(body, `id="no-chats"`) {
		t.Errorf("no chat yet: %d\n%s", code, body)
	}
	g.call(t, "c1")
	code, _, body := p.get("/gateway/tools?chat=c1")
	if code != http.StatusOK || !strings.Contains(body, `data-tool="echo"`) || !strings.Contains(body, `name="chat" value="c1"`) {
		t.Fatalf("chat c1's tools: %d\n%s", code, body)
	}
	csrf := csrfRE.FindStringSubmatch(body)[1]
	code, _, body = p.post("/gateway/call", url.Values{"csrf": {csrf}, "chat": {"c1"}, "tool": {"echo"}, "arg.text": {"hi c1"}})
	if code != http.StatusOK || !strings.Contains(body, `<pre class="content">hi c1</pre>`) {
		t.Errorf("the call in c1: %d\n%s", code, body)
	}
	for _, c := range []struct {
		form    url.Values
		headers []string
	}{
		{url.Values{"csrf": {csrf}, "chat": {"c1"}, "tool": {"echo"}, "arg.text": {"x"}}, []string{"Origin", "http://evil.example"}},
		{url.Values{"csrf": {strings.Repeat("0", 64)}, "chat": {"c1"}, "tool": {"echo"}, "arg.text": {"x"}}, []string{"Origin", p.base}},
	} {
		if code, _, _ := p.postWith("/gateway/call", c.form, c.headers...); code != http.StatusForbidden {
			t.Errorf("a call from another page, or without the session's CSRF token: %d", code)
		}
	}
	if code, _, body := p.get("/gateway/tools?chat=c9"); code != http.StatusBadGateway || !strings.Contains(body, `no chat &#34;c9&#34;`) {
		t.Errorf("an unknown chat: %d\n%s", code, body)
	}
	p.seen.noSecret(t, adminToken, stderrCanary)
}

// The fields of a tool's form follow its schema: the required first, each
// control by type, enum values offered; the arguments are converted back
// by type, empty fields left out.
func TestToolFields(t *testing.T) {
	var schema any
	if err := json.Unmarshal([]byte(`{"type": "object", "required": ["path"], "properties": {
		"path": {"type": "string", "description": "where"}, "depth": {"type": "integer"}, "all": {"type": "boolean"},
		"mode": {"type": "string", "enum": ["fast", "slow"]}, "tags": {"type": "array"}}}`), &schema); err != nil {
		t.Fatal(err)
	}
	fs := toolFields(schema)
	var got []string
	for _, f := range fs {
		got = append(got, f.Name+":"+f.Kind)
	}
	if want := "path:text all:bool depth:number mode:enum tags:json"; strings.Join(got, " ") != want {
		t.Errorf("fields %q, want %q", strings.Join(got, " "), want)
	}
	args, err := callArguments(map[string][]string{"arg.path": {"/tmp"}, "arg.depth": {"2"}, "arg.all": {"true"}, "arg.mode": {""}, "arg.tags": {`["a"]`}}, fs)
	if err != nil || string(args) != `{"all":true,"depth":2,"path":"/tmp","tags":["a"]}` {
		t.Errorf("arguments %s, %v", args, err)
	}
	if _, err := callArguments(map[string][]string{"arg.depth": {"2.5"}}, fs); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("2.5 as an integer: %v", err)
	}
}
