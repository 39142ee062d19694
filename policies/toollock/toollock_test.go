package toollock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/schema"
)

func TestBuildEncodeReadRoundTrip(t *testing.T) {
	l, err := Build([]Observed{{Server: "s", Command: "npx", Args: []string{"-y", "@scope/pkg@1.2.3"}, ServerName: "n", ServerVersion: "1",
		Tools: []ObservedTool{{Name: "b", VisibleName: "p_b", Description: "d", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"z": 1, "a": 2}}},
			{Name: "a", Description: "", InputSchema: map[string]any{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if l.Servers[0].Package != "@scope/pkg@1.2.3" || l.Servers[0].Tools[1].VisibleName != nil {
		t.Errorf("lock %+v", l.Servers[0])
	}
	out, _ := Encode(l)
	v, _ := schema.New()
	f, ds := Read("l.json", out, v)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if ds := f.Check(l, nil); len(ds) != 0 {
		t.Errorf("a lock differs from itself: %v", ds)
	}
}

func TestSchemaSumIgnoresKeyOrder(t *testing.T) {
	a, _ := SchemaSum(map[string]any{"type": "object", "required": []any{"x"}, "properties": map[string]any{"x": map[string]any{"type": "string"}}})
	b, _ := SchemaSum([]byte(`{"properties":{"x":{"type":"string"}},"required":["x"],"type":"object"}`))
	_ = b // a raw byte slice marshals as base64: compare with a decoded map instead
	c, _ := SchemaSum(map[string]any{"properties": map[string]any{"x": map[string]any{"type": "string"}}, "type": "object", "required": []any{"x"}})
	if a != c {
		t.Errorf("key order changes the hash")
	}
}

func TestPackageOf(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-github@2025.9.1"}, "@modelcontextprotocol/server-github@2025.9.1"},
		{"/usr/bin/uvx", []string{"mcp-server-time", "--local-timezone=UTC"}, "mcp-server-time"},
		{"pipx", []string{"run", "--spec", "x", "pkg"}, "x"},
		{"node", []string{"server.js"}, ""},
	} {
		if got := PackageOf(c.cmd, c.args); got != c.want {
			t.Errorf("PackageOf(%s %v) = %q, want %q", c.cmd, c.args, got, c.want)
		}
	}
}

// FuzzRead: a lock file never panics the reader, and every problem is
// positioned inside it.
func FuzzRead(f *testing.F) {
	matches, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "*", "mcpc.lock.json"))
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil {
			f.Add(b)
		}
	}
	v, err := schema.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, ds := Read("l.json", data, v)
		if (file == nil) == (len(ds) == 0) {
			t.Fatalf("file %v with %d diagnostics", file != nil, len(ds))
		}
		lines := strings.Split(string(data), "\n")
		for _, d := range ds {
			if d.File != "l.json" || d.Line < 1 || d.Line > len(lines) || d.Column < 1 || d.Column > utf8.RuneCountInString(lines[d.Line-1])+1 {
				t.Fatalf("diagnostic outside the input: %+v", d)
			}
		}
		if file != nil {
			file.Check(file.Lock, nil)
		}
	})
}
