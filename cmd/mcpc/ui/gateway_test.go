package ui

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// The secrets of the gateway tests: the admin token, and a host secret a
// server prints on its stderr (the gateway redacts it).
const (
	adminToken   = "admin-CANARY-0123456789abcdef"
	stderrCanary = "STDERRCANARY-a1b2c3d4e5f6"
)

// testGateway is a real gateway (mcpc run --http's) in-process, serving a
// plan of one server, "srv", the Go test server, which prints the host
// secret on its stderr at start.
type testGateway struct {
	base   string
	client *http.Client
}

func startGateway(t *testing.T) *testGateway {
	t.Helper()
	patient := int(testservers.Patient / time.Second)
	secretRef := "${env:HOST_SECRET}"
	p := &plan.Plan{PlanVersion: plan.Version, Profile: plan.ProfileVolcanic, Servers: []plan.Server{{
		Name: "srv", Command: testBin, Args: []string{"-stderr", "srv is up", "-stderr-env", "SRV_SECRET"}, Cwd: "${workspace}",
		Enabled: true, Env: map[string]*string{"SRV_SECRET": &secretRef}, Transport: "stdio",
		StartupTimeoutSeconds: patient, CallTimeoutSeconds: patient, IdleTimeoutSeconds: 1800, StderrLevel: "Warning",
	}}}
	h, err := runtime.NewHost(p, runtime.HostOptions{Env: runtime.EnvFromList([]string{"PATH=" + os.Getenv("PATH"), "HOST_SECRET=" + stderrCanary}, nil),
		Secrets: []string{adminToken}})
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.NewGateway(h, gateway.GatewayOptions{Version: "test", WorkspaceRoot: t.TempDir(), AdminToken: adminToken})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gw}
	go srv.Serve(ln)
	tr := &http.Transport{}
	t.Cleanup(func() {
		gw.Close()
		srv.Close()
		h.Close()
		tr.CloseIdleConnections()
	})
	return &testGateway{base: "http://" + ln.Addr().String(), client: &http.Client{Transport: tr}}
}

// call connects to chat id as an MCP client and calls the server's echo
// tool, which starts its process in that chat.
func (g *testGateway) call(t *testing.T, chat string) {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: g.base + "/chats/" + chat + "/mcp", HTTPClient: g.client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := testservers.ToolNames(t, cs)
	if len(names) != 1 {
		t.Fatalf("tools: %v", names)
	}
	if got := testservers.CallText(t, cs, names[0], map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo: %q", got)
	}
}

// admin is the client mcpc ui uses, with the admin token.
func (g *testGateway) admin() *gateway.AdminClient {
	return &gateway.AdminClient{Where: g.base, Base: g.base, Token: adminToken, Client: g.client}
}

// stderrSeen waits until the gateway's server detail shows the server's
// stderr line about the secret (it is read from the pipe on its own).
func (g *testGateway) stderrSeen(t *testing.T, chat string) {
	t.Helper()
	testservers.WaitUntil(t, "the server's stderr reaches the gateway", func() bool {
		d, err := g.admin().Server(context.Background(), chat, "srv")
		return err == nil && strings.Contains(strings.Join(d.StderrTail, "\n"), "SRV_SECRET=")
	})
}

// The gateway page shows each chat's servers with their state, tool count,
// starts and stderr tail (redacted by the gateway); Restart and Reset call
// the admin endpoints with the token, which no page holds.
func TestGatewayPage(t *testing.T) {
	g := startGateway(t)
	g.call(t, "c1")
	g.stderrSeen(t, "c1")
	p := startUI(t, Options{Profile: compile.ProfileVolcanic, Compile: compile.Options{CleanEnv: true, AgentDir: t.TempDir()}, Gateway: g.admin()})
	code, _, body := p.get("/gateway")
	if code != http.StatusOK {
		t.Fatalf("%d\n%s", code, body)
	}
	row := rowOf(t, body[strings.Index(body, `data-chat="c1"`):], "srv")
	for _, w := range []string{`data-live="chat:c1:srv:state">running<`, `data-live="chat:c1:srv:tools">1<`, `data-live="chat:c1:srv:starts">1<`, "srv is up", "SRV_SECRET=[REDACTED]", `value="c1"`} {
		if !strings.Contains(row, w) {
			t.Errorf("the row lacks %q:\n%s", w, row)
		}
	}
	csrf := csrfRE.FindStringSubmatch(body)[1]
	code, hdr, body := p.post("/gateway/restart", url.Values{"csrf": {csrf}, "chat": {"c1"}, "name": {"srv"}})
	if code != http.StatusSeeOther {
		t.Fatalf("restart: %d\n%s", code, body)
	}
	st, err := g.admin().Server(context.Background(), "c1", "srv")
	if err != nil || st.State == "running" {
		t.Errorf("after restart: %v %+v", err, st.ServerStatus)
	}
	if _, _, body := p.get(hdr.Get("Location")); !strings.Contains(body, "restarted server srv in chat c1") {
		t.Errorf("no notice of the restart:\n%s", body)
	}
	g.call(t, "c1")
	if st, _ := g.admin().Server(context.Background(), "c1", "srv"); st.Starts != 2 {
		t.Errorf("the call after the restart did not start the server again: %d starts", st.Starts)
	}
	if code, _, _ := p.post("/gateway/reset", url.Values{"csrf": {csrf}, "chat": {"c1"}}); code != http.StatusSeeOther {
		t.Errorf("reset: %d", code)
	}
	// The gateway refuses: the page says why.
	code, _, body = p.post("/gateway/restart", url.Values{"csrf": {csrf}, "chat": {"c1"}, "name": {"nosuch"}})
	if code != http.StatusBadGateway || !strings.Contains(body, "restart refused") || !strings.Contains(body, "nosuch") {
		t.Errorf("restart of an unknown server: %d\n%s", code, body)
	}
	if code, _, _ := p.postWith("/gateway/restart", url.Values{"csrf": {csrf}, "chat": {"c1"}, "name": {"srv"}}, "Origin", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("a foreign page's restart: %d", code)
	}
	if !strings.Contains(p.seen.String(), "log: restarted server srv in chat c1") {
		t.Errorf("no log line of the restart")
	}
	p.seen.noSecret(t, adminToken, stderrCanary)
}

// A gateway that is not there, or refuses the token, is said on the page.
func TestGatewayUnreachable(t *testing.T) {
	g := startGateway(t)
	bad := g.admin()
	bad.Token = "wrong-token-0123456789"
	p := startUI(t, Options{Profile: compile.ProfileVolcanic, Compile: compile.Options{CleanEnv: true, AgentDir: t.TempDir()}, Gateway: bad})
	code, _, body := p.get("/gateway")
	if code != http.StatusBadGateway || !strings.Contains(body, "401") {
		t.Errorf("a wrong token: %d\n%s", code, body)
	}
	p.seen.noSecret(t, "wrong-token-0123456789")
}
