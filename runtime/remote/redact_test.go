package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

// longCanary is a secret longer than any cut mcpc makes in a message.
var longCanary = "CANARY-long-" + strings.Repeat("x7Qz", 100)

// A server whose answer quotes a key longer than the 300 bytes a reason
// keeps of an SDK message: the message is redacted before it is cut, so no
// part of the key shows.
func TestReasonRedactsBeforeCutting(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// Not JSON-RPC: the SDK's error quotes the version tag whole.
		fmt.Fprintf(w, `{"jsonrpc":%q,"id":1,"result":{}}`, r.Header.Get("X-Key"))
	}))
	defer srv.Close()
	_, err := Probe(context.Background(), Server{Name: "s", URL: srv.URL, Transport: "http", Auth: "headers"}, Headers{"X-Key": longCanary}, patient)
	var f *Failure
	if !errors.As(err, &f) || !strings.HasPrefix(f.Reason, "protocol error: ") {
		t.Fatalf("%v", err)
	}
	if testservers.LeaksPart(f.Reason, longCanary) || !strings.Contains(f.Reason, "[REDACTED]") {
		t.Errorf("reason %q", f.Reason)
	}
}

// Results are redacted string by string: a key the text holds in
// JSON-escaped form (Go's or JavaScript's) is caught, which redacting the
// encoded result as text misses (it escapes the text again).
func TestResultRedactedPerString(t *testing.T) {
	srv := remotetest.Start(t, remotetest.Options{Transport: "http"})
	key := `CANARY-"q"<9f8e>`
	c, err := Dial(context.Background(), Server{Name: "s", URL: srv.URL, Transport: "http", Auth: "headers"}, Headers{"X-Key": key}, patient)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	goEscaped, _ := json.Marshal(key)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(key)
	jsEscaped := strings.TrimSpace(buf.String())
	for _, in := range []string{"key " + key, string(goEscaped), jsEscaped, `{"k":` + string(goEscaped) + `}`} {
		res, err := c.Call(context.Background(), "echo", map[string]any{"text": in}, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		got := resultText(res)
		if strings.Contains(string(b), "CANARY") || !strings.Contains(got, "[REDACTED]") {
			t.Errorf("echo %s: %s", in, b)
		}
	}
}

func resultText(r *mcp.CallToolResult) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// bigServer answers the MCP handshake over Streamable HTTP with
// instructions of n bytes.
func bigServer(t *testing.T, n int) string {
	// The answer's JSON is made once, without fmt's quoting: "i" needs
	// none, and %q of 16 MiB on every answer cost more than the client.
	instructions := []byte(`"` + strings.Repeat("i", n) + `"`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"},"instructions":`, req.ID)
			w.Write(instructions)
			io.WriteString(w, `}}`)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, req.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// An answer that is not an event stream is read whole by the SDK: one
// larger than MaxBody fails the connection instead of filling memory.
func TestAnswerSizeLimit(t *testing.T) {
	_, err := Probe(context.Background(), Server{Name: "s", URL: bigServer(t, MaxBody+1), Transport: "http", Auth: "headers"}, Headers{}, patient)
	if err == nil || err.Error() != "the server's answer is larger than 16 MiB" {
		t.Errorf("%v", err)
	}
	// Just under the limit is fine.
	if _, err := Probe(context.Background(), Server{Name: "s", URL: bigServer(t, MaxBody-1024), Transport: "http", Auth: "headers"}, Headers{}, patient); err != nil {
		t.Errorf("under the limit: %v", err)
	}
}
