package craftbot

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/diag"
)

var fuzzOps = []Op{OpAdd, OpAddJSON, OpRemove, OpEnable, OpDisable, OpEnv}

// FuzzEdit makes random edits on random files: Apply never panics; an edit
// it accepts gives a file without errors in which the edited entry loads
// as asked, every other entry keeps its bytes, and nothing outside the
// edited entry (and its separator) changed; otherwise it is refused with
// diagnostics or is an *EditError. A half-made edit is never returned.
//
//	go test ./craftbot -run XXX -fuzz FuzzEdit -fuzztime 1m
func FuzzEdit(f *testing.F) {
	for _, s := range []string{prettyConfig, `{"mcp_servers":[{"name":"a","transport":"stdio","command":"x","env":{"K":"v"}}]}`,
		`{}`, `{"auto_connect": false, "mcp_servers": []}`, "\xef\xbb\xbf{\r\n \"mcp_servers\": [\r\n  {\"name\": \"a\", \"transport\": \"sse\", \"url\": \"u\"}\r\n ]\r\n}",
		`{"mcp_servers": [1, {"name": "a", "transport": "stdio", "command": "c", "name": "b"}, {"name": "a", "transport": "stdio", "command": "d"}]}`,
		`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "c", "env": {"K": 1, "K": ""}, "enabled": "no"}]}`} {
		for i := range fuzzOps {
			f.Add([]byte(s), uint8(i), "a", "K", "v")
		}
	}
	f.Add([]byte(prettyConfig), uint8(1), "new", `{"transport": "sse", "url": "https://x", "env": {}}`, "")
	f.Add([]byte(prettyConfig), uint8(0), "filesystem", "npx -y x", "")
	f.Fuzz(func(t *testing.T, data []byte, op uint8, name, arg, value string) {
		ed := Edit{Op: fuzzOps[int(op)%len(fuzzOps)], Name: name, Key: arg, Value: value, JSON: arg, Command: strings.Fields(arg)}
		ch, err := Apply("mcp_config.json", data, ed, Options{TargetOS: "linux"})
		if err != nil {
			var ee *EditError
			if !errors.As(err, &ee) {
				t.Fatalf("not an EditError: %v", err)
			}
			return
		}
		if ch.Refused != "" {
			if len(ch.Diagnostics) == 0 {
				t.Fatalf("refused without a diagnostic: %s", ch.Refused)
			}
			return
		}
		if ch.Unchanged {
			if !bytes.Equal(ch.Data, data) {
				t.Fatal("unchanged, but other data")
			}
			return
		}
		before, _, _ := Check("old", data, Options{})
		after, ds, _ := Check("new", ch.Data, Options{TargetOS: "linux"})
		for _, d := range ds {
			if d.Severity == diag.Error {
				t.Fatalf("an accepted edit leaves an error: %v\n%s", d, ch.Data)
			}
		}
		if ed.Op != OpRemove && ed.Op != OpDisable {
			if e := after.Lookup(ed.Name); e == nil {
				t.Fatalf("%s %q: the entry does not load after the edit\n%s", ed.Op, ed.Name, ch.Data)
			}
		}
		if len(before.Entries) == 0 {
			return
		}
		// The entries not edited keep their bytes, in order.
		touched := func(cfg *Config, i int) bool {
			switch ed.Op {
			case OpAdd, OpAddJSON:
				return cfg == after && i == len(after.Entries)-1
			case OpRemove:
				return cfg == before && cfg.Entries[i].Name == ed.Name
			}
			return i == ch.Entry.Index
		}
		var was, is [][]byte
		for i, e := range before.Entries {
			if !touched(before, i) {
				was = append(was, data[e.Start:e.End])
			}
		}
		for i, e := range after.Entries {
			if !touched(after, i) {
				is = append(is, ch.Data[e.Start:e.End])
			}
		}
		if len(was) != len(is) {
			t.Fatalf("%d untouched entries before, %d after", len(was), len(is))
		}
		for i := range was {
			if !bytes.Equal(was[i], is[i]) {
				t.Fatalf("untouched entry %d changed:\n%s\n%s", i, was[i], is[i])
			}
		}
		// Nothing outside the list of servers changed.
		list := before.Root.Get(FieldServers)
		shift := len(data) - len(bytes.TrimPrefix(data, bom))
		if !keptOutside(data, ch.Data, int(list.Start)+shift, int(list.End)+shift) {
			t.Fatalf("bytes outside mcp_servers changed:\n%s\n%s", data, ch.Data)
		}
	})
}
