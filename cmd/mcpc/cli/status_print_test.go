package cli

import (
	"bytes"
	"testing"

	"github.com/mcpc-dev/mcpc/runtime"
)

// The /mcp view names the host variables a server's env refers to that are
// not set, and counts processes in plain English.
func TestPrintStatusUnsetEnv(t *testing.T) {
	st := runtime.HostStatus{Processes: 2, Chats: []runtime.ChatStatus{}, Servers: []runtime.DiscoveryStatus{
		{Name: "notes", State: "ok", Tools: 1, UnsetEnv: []string{"ALSO_NOPE", "NOPE"}},
		{Name: "plain", State: "ok", Tools: 2},
	}}
	var b bytes.Buffer
	printStatus(&b, st, "")
	want := "servers (discovery, shared by the chats): 2 processes running\n" +
		"  notes: ok · 1 tool · host variables not set (given empty): ALSO_NOPE, NOPE\n" +
		"  plain: ok · 2 tools\n" +
		"no chats yet\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
