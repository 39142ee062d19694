package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/runtime"
)

// GET /status answers, in both profiles, through the one status writer:
// every string of the encoded answer redacted, whatever field holds it,
// and Cache-Control: no-store, so that no cache keeps a copy. The craftbot
// gateway's writer used to do neither: a secret the runtime knows showed
// in a field its status does not redact itself (here a server's name and
// its default action set), and the answer could be cached.
func TestStatusRedactedAndNotCachedInBothProfiles(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	const secret = "srvCANARY5d1e8a7b3c"
	cb := newTestCraftbot(t, cbPlan(false, cbStdio(secret, "-tools", "echo")), marker, runtime.CraftbotOptions{Secrets: []string{secret}})
	cbSrv := httptest.NewServer(cb.Handler(CraftbotHTTPOptions{}))
	t.Cleanup(cbSrv.Close)

	h := newTestHost(t, testPlan(testServer("srv")), runtime.HostOptions{Env: testEnv(marker), Secrets: []string{secret}})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir()})
	base, client := httpGateway(t, gw)

	for _, c := range []struct {
		profile, url string
		client       *http.Client
	}{{"craftbot", cbSrv.URL, cbSrv.Client()}, {"volcanic", base, client}} {
		for _, path := range []string{"/status", "/nowhere"} {
			code, header, body := rawMCP(t, c.client, "GET", c.url+path, "")
			if path == "/status" && (code != http.StatusOK || !strings.Contains(body, `"servers"`)) {
				t.Fatalf("%s: GET %s: %d %s", c.profile, path, code, body)
			}
			if strings.Contains(body, secret) {
				t.Errorf("%s: GET %s shows the secret:\n%s", c.profile, path, body)
			}
			if got := header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("%s: GET %s: Cache-Control %q, want no-store", c.profile, path, got)
			}
		}
	}
}
