package craftbot

import (
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/diagtest"
	"github.com/mcpc-dev/mcpc/internal/node"
)

func mustParse(src string) *node.Node {
	n, d := node.ParseJSON("t.json", []byte(src), false)
	if d != nil {
		panic(d.Message)
	}
	return n
}

// FuzzConfig: Check never panics, every diagnostic is positioned inside the
// file, every entry's span lies inside the data, and a file that parses
// loads exactly the entries without a skip reason.
//
//	go test ./craftbot -run XXX -fuzz FuzzConfig -fuzztime 1m
func FuzzConfig(f *testing.F) {
	for _, s := range []string{
		`{"auto_connect": true, "mcp_servers": [{"name": "fs", "transport": "stdio", "command": "npx", "args": ["-y", "x"], "env": {"T": ""}, "enabled": true}]}`,
		`{"mcp_servers": [{"name": "s", "transport": "sse", "url": "https://x/sse", "command": "c"}, {"name": "s", "transport": "websocket"}]}`,
		`{"mcp_servers": [1, null, "x", {"name": "a b", "transport": "http", "enabled": "yes", "name": "c"}]}`,
		`{"mcp_servers": {"a": 1}, "auto_connect": 2, "x": []}`,
		`{"mcp_servers": [{"name": "m", "transport": "stdio", "command": "/Applications/M.app/Contents/MacOS/m", "args": ["C:\\x"]}]}`,
		"\xef\xbb\xbf{\"mcp_servers\": []}",
		`[`, ``, `{"mcp_servers": [{"env": {"A": "\u0000"}}]}`,
	} {
		f.Add([]byte(s), "linux")
	}
	f.Add([]byte(`{"mcp_servers": [{"name": "w", "transport": "stdio", "command": "/usr/bin/x"}]}`), "windows")
	f.Fuzz(func(t *testing.T, data []byte, goos string) {
		if !ValidTargetOS(goos) {
			goos = ""
		}
		cfg, ds, err := Check("mcp_config.json", data, Options{TargetOS: goos})
		if err != nil {
			t.Fatal(err)
		}
		text := data
		if len(text) >= 3 && string(text[:3]) == "\xef\xbb\xbf" {
			text = text[3:]
		}
		if utf8.Valid(text) {
			diagtest.CheckPositions(t, ds, map[string][]string{"mcp_config.json": diagtest.Lines(text)})
		}
		for _, e := range cfg.Entries {
			if e.Start < 0 || e.End > len(data) || e.Start >= e.End {
				t.Fatalf("entry %d span %d..%d outside %d bytes", e.Index, e.Start, e.End, len(data))
			}
			if e.Skip == "" && e.Node.Kind != node.Object {
				t.Fatalf("entry %d is not an object but loads", e.Index)
			}
		}
		for _, d := range ds {
			if d.Severity == diag.Error && len(cfg.Entries) > 0 && cfg.Root != nil && cfg.Root.Kind == node.Object &&
				d.Rule != "type-mismatch" && d.Rule != "json-syntax" {
				t.Fatalf("an entry's problem is an error, not a skip: %+v", d)
			}
		}
		for _, s := range SecretSpans(data) {
			if s.Start < 0 || s.End > len(data) || s.Start > s.End {
				t.Fatalf("secret span %v outside %d bytes", s, len(data))
			}
		}
	})
}
