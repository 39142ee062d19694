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
// file, every entry's span lies inside the data, a non-object never loads,
// and an error is about a file the host loads nothing from or about an
// entry the host starts.
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
		// An error is about the whole file (the host loads nothing from
		// it) or about an entry the host starts.
		for _, d := range ds {
			if d.Severity == diag.Error && cfg.LoadsNothing == "" && (d.Rule == "type-mismatch" || d.Rule == "json-syntax") {
				t.Fatalf("a file error, yet the host loads the file: %+v", d)
			}
		}
		if cfg.LoadsNothing == "" && utf8.Valid(text) {
			ix := node.NewLineIndex("mcp_config.json", text)
			for _, e := range cfg.Entries {
				if e.Node.Kind != node.Object || e.Enabled || e.starts {
					continue
				}
				if errs := diag.Errors(entryDiagnostics(ix, e.Node, ds)); len(errs) > 0 {
					t.Fatalf("entry %d does not start, yet has an error: %+v", e.Index, errs[0])
				}
			}
		}
		for _, s := range SecretSpans(data) {
			if s.Start < 0 || s.End > len(data) || s.Start > s.End {
				t.Fatalf("secret span %v outside %d bytes", s, len(data))
			}
		}
	})
}
