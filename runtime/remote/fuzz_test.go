package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// FuzzServersJSON: any servers.json is read without a panic; every
// diagnostic is complete and positioned inside the input; opening with a
// key never panics; and an edit of a usable file gives a file that reads
// back with the edit made and every other entry kept.
// go test ./remote -fuzz FuzzServersJSON
func FuzzServersJSON(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "*remote*", "ws", ".volcanic", "mcp", "servers.json"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	ok := `{"name": "notes", "url": "https://mcp.example.com/mcp", "transport": "auto", "tools": null, "auth": "headers", "sealed": "` + validSealed + `"}`
	for _, s := range []string{
		entryJSON(ok),
		entryJSON(ok + ",\n" + ok),
		entryJSON(strings.Replace(ok, `null`, `["a", "a", "", 1]`, 1)),
		"{\"version\": 1, \"servers\": []}",
		"{\"version\": 1, \"servers\": [ ]  , \"x\": {\"y\": [1, {\"z\": null}]}}",
		"{\"version\": 1.5, \"servers\": [\"\\u00e9\", null, {}]}",
		"\xef\xbb\xbf{}",
		"{\"version\": 1, \"servers\": [{\"name\": \"\xff\"}]}",
		"",
		"[",
	} {
		f.Add([]byte(s))
	}
	key := mustKey(f, "fuzz-secret")
	f.Fuzz(func(t *testing.T, data []byte) {
		file := Parse("s.json", data)
		lines := strings.Split(string(data), "\n")
		for _, d := range file.Diagnostics {
			if d.File != "s.json" || d.Line < 1 || d.Line > len(lines) {
				t.Fatalf("position outside the input: %+v", d)
			}
			if n := utf8.RuneCountInString(lines[d.Line-1]); d.Column < 1 || d.Column > n+1 {
				t.Fatalf("column %d outside 1..%d: %+v", d.Column, n+1, d)
			}
			if d.Rule == "" || d.Message == "" || d.Severity != diag.Error && d.Severity != diag.Warning {
				t.Fatalf("incomplete diagnostic %+v", d)
			}
		}
		if file.Problem != "" {
			if len(file.Entries) != 0 {
				t.Fatal("entries of an unusable file")
			}
			if _, err := file.WithEntry(srv("x"), validSealed); err == nil {
				t.Fatal("an unusable file was edited")
			}
			return
		}
		CheckSealed(file, key, "scope", "X")
		src := file.Sources(nil)
		for _, d := range file.Diagnostics {
			if _, col, ok := src.Line(d.File, d.Line, d.Column); !ok || col < 1 {
				t.Fatalf("no excerpt for %+v", d)
			}
		}
		// Add an entry, then remove it again: the other entries keep
		// their bytes.
		out, err := file.WithEntry(srv("fuzz-added"), validSealed)
		if err != nil {
			t.Fatalf("WithEntry: %v", err)
		}
		g := Parse("s.json", out)
		if g.Problem != "" {
			t.Fatalf("the edit broke the file: %s\n%q\n%q", g.Problem, data, out)
		}
		if found := g.Find("fuzz-added"); len(found) != 1 || !found[0].Valid() {
			t.Fatalf("the added entry is not there: %q", out)
		}
		for _, e := range file.Entries {
			if e.Name == "fuzz-added" {
				continue
			}
			raw := string(data[e.start:e.end])
			if !strings.Contains(string(out), raw) {
				t.Fatalf("entry %d not kept: %q", e.Index, raw)
			}
		}
		back, _, err := g.Without("fuzz-added")
		if err != nil {
			t.Fatal(err)
		}
		h := Parse("s.json", back)
		if h.Problem != "" || len(h.Find("fuzz-added")) != 0 {
			t.Fatalf("remove: %q %q", h.Problem, back)
		}
	})
}
