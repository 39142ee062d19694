package versionpacks

import (
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// check runs the pack on one mcp_config.json.
func check(t *testing.T, text string) []diag.Diagnostic {
	t.Helper()
	cfg, _, err := craftbot.Check("mcp_config.json", []byte(text), craftbot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Craftbot605efb4.Check(&compile.Result{Model: cfg})
}

// What 605efb4's loader does (config.py): an element that is not an object
// fails the whole load, wherever it stands; a named entry whose transport
// is a list or an object too (an unhashable value in a set test); an entry
// without a name is skipped before its transport is read, and a transport
// of another kind (null, a number) is skipped as invalid.
func TestLoadFails(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string // the positions reported, line:column
	}{
		{`{"mcp_servers": ["notes"]}`, []string{"1:18"}},
		{`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "x"}, null, 3, []]}`, []string{"1:71", "1:77", "1:80"}},
		{`{"mcp_servers": [{"name": "a", "transport": ["stdio"], "command": "x"}]}`, []string{"1:45"}},
		{`{"mcp_servers": [{"name": "a", "transport": {"kind": "stdio"}, "command": "x"}]}`, []string{"1:45"}},
		{`{"mcp_servers": [{"transport": ["stdio"], "command": "x"}]}`, nil},
		{`{"mcp_servers": [{"name": "a", "transport": null, "command": "x"}, {"name": "b", "transport": 5, "command": "x"}]}`, nil},
		{`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "x"}]}`, nil},
	} {
		var got []string
		for _, d := range check(t, c.text) {
			if d.Rule != rules.Craftbot605efb4LoadFails.ID || d.Severity != diag.Error || !strings.Contains(d.Message, "loads no MCP server") || !strings.Contains(d.Message, "every other entry and its credentials are lost") {
				t.Errorf("%s: %+v", c.text, d)
				continue
			}
			got = append(got, d.Pos().String()[len("mcp_config.json:"):])
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: reported at %v, want %v", c.text, got, c.want)
		}
	}
}

// sse posts to the url with every "/sse" replaced, host names too; the
// message shows where. websocket never connects. Both are errors for an
// enabled server and info for a disabled one; stdio is not theirs.
func TestRemoteTransports(t *testing.T) {
	ds := check(t, `{"mcp_servers": [
  {"name": "s", "transport": "sse", "url": "https://sse.example.com/sse/x/sse", "enabled": true},
  {"name": "w", "transport": "websocket", "url": "wss://w.example.com/ws", "enabled": false},
  {"name": "f", "transport": "stdio", "command": "npx", "enabled": true}]}`)
	if len(ds) != 2 {
		t.Fatalf("%d findings, want 2: %+v", len(ds), ds)
	}
	if d := ds[0]; d.Rule != rules.Craftbot605efb4SSE.ID || d.Severity != diag.Error || d.Line != 2 ||
		!strings.Contains(d.Message, `"https://message.example.com/message/x/message"`) {
		t.Errorf("sse: %+v", d)
	}
	if d := ds[1]; d.Rule != rules.Craftbot605efb4Websocket.ID || d.Severity != diag.Info || d.Line != 3 {
		t.Errorf("websocket: %+v", d)
	}
}
