package gateway

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/runtime"
)

// What the gateway's Streamable HTTP transport answers to bodies that are
// not JSON-RPC (400, the session goes on), a body over the cap (413), a
// session it does not know (404), DELETE (204, then 404), and a request
// that reached the loopback listener under another host name (403, DNS
// rebinding).
func TestGatewayHTTPBadRequests(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), runtime.HostOptions{Env: testEnv(noLeaks(t))})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: filepath.Join(t.TempDir(), "chats")})
	base, client := httpGateway(t, gw)
	url := base + "/chats/a/mcp"
	sid := openSession(t, client, url, "2025-11-25")
	session := []string{sessionHeader, sid, "Mcp-Protocol-Version", "2025-11-25"}

	for _, body := range []string{
		`{`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`, `"ping"`, `{"jsonrpc":"2.0","id":1,"method":"ping"} x`,
		strings.Repeat("[", 5000),
	} {
		code, _, text := rawMCP(t, client, "POST", url, body, session...)
		if code != http.StatusBadRequest || !strings.Contains(text, "malformed payload") {
			t.Errorf("body %.40q: %d %q, want 400 malformed payload", body, code, text)
		}
	}
	if code, _, text := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, session...); code != http.StatusOK || !strings.Contains(text, `"result":{}`) {
		t.Fatalf("ping after the bad bodies: %d %q", code, text)
	}

	big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", maxBodyBytes) + `"}}}`
	if code, _, _ := rawMCP(t, client, "POST", url, big, session...); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over %d bytes: %d, want 413", maxBodyBytes, code)
	}

	for _, method := range []string{"POST", "GET", "DELETE"} {
		body := ""
		if method == "POST" {
			body = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
		}
		if code, _, text := rawMCP(t, client, method, url, body, sessionHeader, "no-such-session"); code != http.StatusNotFound {
			t.Errorf("%s with an unknown session: %d %q, want 404", method, code, text)
		}
	}

	rebound, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":4,"method":"ping"}`))
	rebound.Host = "evil.example"
	rebound.Header.Set("Content-Type", "application/json")
	rebound.Header.Set("Accept", "application/json, text/event-stream")
	rebound.Header.Set(sessionHeader, sid)
	resp, err := client.Do(rebound)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a loopback request for host evil.example: %d, want 403", resp.StatusCode)
	}

	if code, _, text := rawMCP(t, client, "DELETE", url, "", session...); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %q", code, text)
	}
	if code, _, _ := rawMCP(t, client, "POST", url, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, session...); code != http.StatusNotFound {
		t.Errorf("POST after DELETE: %d, want 404", code)
	}
	gatewayQuiet(t, gw)
	if sessions := gw.pool.Len(); sessions != 0 {
		t.Errorf("%d sessions counted after DELETE", sessions)
	}
}
