package craftbot

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/diagtest"
)

var fuzzOps = []Op{OpAdd, OpAddJSON, OpRemove, OpEnable, OpDisable, OpEnv}

// FuzzEdit makes every edit on random files: Apply never panics; an edit
// it accepts gives a file the host loads, with no error the file did not
// have (but for a removal, after which a later entry of the name counts),
// in which the edited entry loads as asked, every other entry keeps its bytes, and nothing outside the
// edited entry (and its separator) changed, a byte order mark included;
// otherwise it is refused with diagnostics positioned inside the content
// they name, or is an *EditError. A half-made edit is never returned. An
// edit is refused as "has errors" exactly when Check, the reader of mcpc
// validate, config list and ui, finds that the host loads nothing from the
// file: every reader says the same of a file (two byte order marks, say).
//
//	go test ./craftbot -run XXX -fuzz FuzzEdit -fuzztime 1m
func FuzzEdit(f *testing.F) {
	for _, s := range []string{prettyConfig, `{"mcp_servers":[{"name":"a","transport":"stdio","command":"x","env":{"K":"v"}}]}`,
		`{}`, `{"auto_connect": false, "mcp_servers": []}`, "\xef\xbb\xbf{\r\n \"mcp_servers\": [\r\n  {\"name\": \"a\", \"transport\": \"sse\", \"url\": \"u\"}\r\n ]\r\n}",
		"\ufeff\ufeff{\"mcp_servers\": [{\"name\": \"a\", \"transport\": \"stdio\", \"command\": \"x\"}]}",
		"\ufeff \ufeff{\"mcp_servers\": [{\"name\": \"a\", \"command\": \"x\", \"env\": {\"K\": \"\ufeff\"}}]}",
		`{"mcp_servers": [1, {"name": "a", "transport": "stdio", "command": "c", "name": "b"}, {"name": "a", "transport": "stdio", "command": "d"}]}`,
		`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "c", "env": {"K": 1, "K": ""}, "enabled": "no"}]}`} {
		f.Add([]byte(s), "a", "K", "v")
	}
	f.Add([]byte(prettyConfig), "new", `{"transport": "sse", "url": "https://x", "env": {}}`, "")
	f.Add([]byte(prettyConfig), "filesystem", "npx -y x", "")
	f.Fuzz(func(t *testing.T, data []byte, name, arg, value string) {
		cfg, _, err := Check("mcp_config.json", data, Options{TargetOS: "linux"})
		if err != nil {
			t.Fatal(err)
		}
		fileErrors := cfg.LoadsNothing != ""
		for _, op := range fuzzOps {
			ed := Edit{Op: op, Name: name, Key: arg, Value: value, JSON: arg, Command: strings.Fields(arg)}
			checkEdit(t, data, ed, fileErrors)
		}
	})
}

// checkEdit makes ed on data and checks what FuzzEdit promises.
func checkEdit(t *testing.T, data []byte, ed Edit, fileErrors bool) {
	t.Helper()
	ch, err := Apply("mcp_config.json", data, ed, Options{TargetOS: "linux"})
	if err != nil {
		var ee *EditError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: not an EditError: %v", ed.Op, err)
		}
		if fileErrors {
			t.Fatalf("%s: the file has errors, yet the edit was not refused for them: %v", ed.Op, err)
		}
		return
	}
	if refusedForErrors := strings.HasSuffix(ch.Refused, "fix them first"); refusedForErrors != fileErrors {
		t.Fatalf("%s: Check finds errors: %v; refused as a file with errors: %v (%s)", ed.Op, fileErrors, refusedForErrors, ch.Refused)
	}
	if ch.Refused != "" {
		if len(ch.Diagnostics) == 0 {
			t.Fatalf("%s: refused without a diagnostic: %s", ed.Op, ch.Refused)
		}
		if text := Text(ch.Data); utf8.Valid(text) {
			diagtest.CheckPositions(t, ch.Diagnostics, map[string][]string{ch.File: diagtest.Lines(text)})
		}
		return
	}
	if ch.Unchanged {
		if !bytes.Equal(ch.Data, data) {
			t.Fatalf("%s: unchanged, but other data", ed.Op)
		}
		return
	}
	if bytes.HasPrefix(data, bom) != bytes.HasPrefix(ch.Data, bom) {
		t.Fatalf("%s: the byte order mark was not kept", ed.Op)
	}
	before, beforeDs, _ := Check("old", data, Options{TargetOS: "linux"})
	after, ds, _ := Check("new", ch.Data, Options{TargetOS: "linux"})
	if after.LoadsNothing != "" {
		t.Fatalf("%s: after an accepted edit the host loads nothing: %s\n%s", ed.Op, after.LoadsNothing, ch.Data)
	}
	if ed.Op != OpRemove {
		had := map[string]int{}
		for _, d := range diag.Errors(beforeDs) {
			had[d.Rule]++
		}
		for _, d := range diag.Errors(ds) {
			if had[d.Rule]--; had[d.Rule] < 0 {
				t.Fatalf("%s: an accepted edit brings an error: %v\n%s", ed.Op, d, ch.Data)
			}
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
		t.Fatalf("%s: %d untouched entries before, %d after", ed.Op, len(was), len(is))
	}
	for i := range was {
		if !bytes.Equal(was[i], is[i]) {
			t.Fatalf("%s: untouched entry %d changed:\n%s\n%s", ed.Op, i, was[i], is[i])
		}
	}
	// Nothing outside the list of servers changed.
	list := before.Root.Get(FieldServers)
	shift := len(data) - len(Text(data))
	if !keptOutside(data, ch.Data, int(list.Start)+shift, int(list.End)+shift) {
		t.Fatalf("%s: bytes outside mcp_servers changed:\n%s\n%s", ed.Op, data, ch.Data)
	}
}
