package runtime

import (
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"testing"
)

// A request body is read into one buffer of about its size: a small call
// costs a few hundred bytes here, not a 32 KiB chunk per request (issue
// 13: the largest allocation of a proxied call over HTTP that is the
// gateway's own).
func TestReadBodyAllocatesItsSize(t *testing.T) {
	g := NewGateway(newTestHost(t, testPlan(), HostOptions{}), GatewayOptions{})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}}`
	read := func() {
		r := httptest.NewRequest(http.MethodPost, "/chats/c/mcp", strings.NewReader(body))
		got, ok := g.readBody(httptest.NewRecorder(), r)
		if !ok || string(got) != body {
			t.Fatalf("read %q, %v", got, ok)
		}
	}
	read()
	const n = 100
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range n {
		read()
	}
	goruntime.ReadMemStats(&after)
	// The test's request and recorder take about 5 KiB of their own; a
	// 32 KiB chunk would be far above the bound.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 16<<10 {
		t.Errorf("reading a %d-byte body allocates %d bytes", len(body), per)
	}
}

// A body of undeclared length, or longer than the buffer made before it
// arrives, is read whole all the same.
func TestReadBodyGrows(t *testing.T) {
	t.Parallel()
	g := NewGateway(newTestHost(t, testPlan(), HostOptions{}), GatewayOptions{})
	for _, size := range []int{0, 1, 511, 512, 513, bodyPrealloc - 1, bodyPrealloc, 3*bodyPrealloc + 7} {
		body := strings.Repeat("x", size)
		for _, declared := range []bool{true, false} {
			r := httptest.NewRequest(http.MethodPost, "/chats/c/mcp", strings.NewReader(body))
			if !declared {
				r.ContentLength = -1
			}
			got, ok := g.readBody(httptest.NewRecorder(), r)
			if !ok || string(got) != body {
				t.Errorf("size %d, declared %v: read %d bytes, %v", size, declared, len(got), ok)
			}
		}
	}
}

// A message POSTed to a session is decoded once, without the 32 KiB
// buffer of the go-sdk's decoder: the go-sdk's Streamable HTTP handler
// decoded every body at least twice that way (issue 13), about 64 KiB of
// garbage for each response or notification a client posts, more for a
// call.
func TestHTTPMessageDecodedOnce(t *testing.T) {
	marker := noLeaks(t)
	h := newTestHost(t, testPlan(testServer("srv", "-tools", "echo")), HostOptions{Env: testEnv(marker)})
	gw := NewGateway(h, GatewayOptions{WorkspaceRoot: t.TempDir()})
	base, client := httpGateway(t, gw)
	cs := connectHTTP(t, client, base+"/chats/d/mcp")
	// A response to no call of the server: accepted (202) and dropped, with
	// no work of the server's that allocates.
	body := `{"jsonrpc":"2.0","id":"none","result":{}}`
	post := func() {
		r := httptest.NewRequest(http.MethodPost, "/chats/d/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Session-Id", cs.ID())
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		gw.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted {
			t.Fatalf("POST of a response: %d %s", w.Code, w.Body)
		}
	}
	post()
	const n = 100
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range n {
		post()
	}
	goruntime.ReadMemStats(&after)
	// The test's request and recorder take about 5 KiB of their own; the
	// whole POST about 7 KiB here, the go-sdk's handler's about 73 KiB.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 24<<10 {
		t.Errorf("a %d-byte POST allocates %d bytes", len(body), per)
	}
}
