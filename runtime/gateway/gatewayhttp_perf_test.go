package gateway

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
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}}`
	read := func() {
		r := httptest.NewRequest(http.MethodPost, "/chats/c/mcp", strings.NewReader(body))
		got, ok := readRequestBody(httptest.NewRecorder(), r, 0, noWriteError)
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
	for _, size := range []int{0, 1, 511, 512, 513, bodyPrealloc - 1, bodyPrealloc, 3*bodyPrealloc + 7} {
		body := strings.Repeat("x", size)
		for _, declared := range []bool{true, false} {
			r := httptest.NewRequest(http.MethodPost, "/chats/c/mcp", strings.NewReader(body))
			if !declared {
				r.ContentLength = -1
			}
			got, ok := readRequestBody(httptest.NewRecorder(), r, 0, noWriteError)
			if !ok || string(got) != body {
				t.Errorf("size %d, declared %v: read %d bytes, %v", size, declared, len(got), ok)
			}
		}
	}
}

func noWriteError(http.ResponseWriter, int, string) {}
