package gateway

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime"
)

// testBin is the test MCP server (fixtures/servers/testserver), built once.
var testBin string

func TestMain(m *testing.M) {
	runSelfServer() // when a test started this binary as a server
	testservers.Main(m, func(bin string) { testBin = bin })
}

// Canary secrets: one plain, one only reachable through ${env:…}.
const (
	canaryToken = "CANARY-gh-5e1f0a77"
	canaryRef   = "CANARY-ref-0b9d2c41"
)

// processGone reports whether pid no longer runs: no such process, or a
// zombie waiting for a parent that is not us.
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

var readPid = testservers.ReadPid

func text(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil {
		t.Fatal("nil result")
	}
	return testservers.TextOf(res)
}

func callErr(t testing.TB, err error, kind runtime.CallErrorKind) *runtime.CallError {
	t.Helper()
	var ce *runtime.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want a *CallError of kind %s", err, err, kind)
	}
	if ce.Kind != kind {
		t.Fatalf("error kind %s (%v), want %s", ce.Kind, ce, kind)
	}
	return ce
}
