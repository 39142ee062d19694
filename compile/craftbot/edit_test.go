package craftbot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
)

// bom is the UTF-8 byte order mark, as Windows editors write it.
var bom = []byte("\ufeff")

const prettyConfig = `{
  "auto_connect": true,
  "mcp_servers": [
    {
      "name": "filesystem",
      "transport": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
      "env": {},
      "enabled": true
    },
    {
      "name": "sentry",
      "transport": "sse",
      "url": "https://sentry.example.com/mcp/sse",
      "enabled": false
    },
    {
      "name": "github",
      "transport": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": ""},
      "enabled": false
    }
  ]
}
`

// configStyles are one catalog written in several ways: the edits must
// keep each one's layout.
func configStyles(t *testing.T) map[string][]byte {
	example, err := os.ReadFile("../../examples/craftbot/app/config/mcp_config.json")
	if err != nil {
		t.Fatal(err)
	}
	minified := strings.Join(strings.Fields(strings.ReplaceAll(prettyConfig, ": ", ":")), "")
	return map[string][]byte{
		"pretty":   []byte(prettyConfig),
		"minified": []byte(minified),
		"crlf-bom": []byte("\xef\xbb\xbf" + strings.ReplaceAll(prettyConfig, "\n", "\r\n")),
		"tabs":     []byte(strings.ReplaceAll(prettyConfig, "  ", "\t")),
		"one-line": []byte(`{"auto_connect": true, "mcp_servers": [{"name": "filesystem", "transport": "stdio", "command": "npx", "enabled": true}, {"name": "sentry", "transport": "sse", "url": "https://s/sse", "enabled": false}, {"name": "github", "transport": "stdio", "command": "npx", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": ""}, "enabled": false}]}`),
		"example":  example,
	}
}

func apply(t *testing.T, data []byte, ed Edit) *Change {
	t.Helper()
	ch, err := Apply("mcp_config.json", data, ed, Options{TargetOS: "linux"})
	if err != nil {
		t.Fatalf("%s %s: %v", ed.Op, ed.Name, err)
	}
	return ch
}

// changed returns the region of old that new replaces: old[from:to] became
// something else, everything before and after is the same.
func changed(old, new []byte) (from, to int) {
	for from < len(old) && from < len(new) && old[from] == new[from] {
		from++
	}
	j := 0
	for j < len(old)-from && j < len(new)-from && old[len(old)-1-j] == new[len(new)-1-j] {
		j++
	}
	return from, len(old) - j
}

// keptOutside reports whether new keeps old's bytes before lo and from hi
// on: whatever changed, changed inside old[lo:hi].
func keptOutside(old, new []byte, lo, hi int) bool {
	tail := len(old) - hi
	return len(new) >= lo+tail && bytes.Equal(new[:lo], old[:lo]) && bytes.Equal(new[len(new)-tail:], old[hi:])
}

// allowed is the byte range of old that an edit of e may change: the entry
// itself; for a removal also the separator beside it; for an addition the
// end of the last entry up to the list's ].
func allowed(t *testing.T, old []byte, ed Edit) (int, int) {
	t.Helper()
	cfg, _, err := Check("x", old, Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := cfg.Root.Get(FieldServers).Elems
	shift := 0
	if bytes.HasPrefix(old, bom) {
		shift = len(bom)
	}
	switch ed.Op {
	case OpAdd, OpAddJSON:
		return int(list[len(list)-1].End) + shift, int(list[len(list)-1].End) + shift
	}
	for i, e := range cfg.Entries {
		if e.Name != ed.Name {
			continue
		}
		if ed.Op != OpRemove {
			return e.Start, e.End
		}
		from, to := e.Start, e.End
		if i > 0 {
			from = int(list[i-1].End) + shift
		}
		if i+1 < len(list) {
			to = int(list[i+1].Start) + shift
		}
		return from, to
	}
	t.Fatalf("no entry %s", ed.Name)
	return 0, 0
}

// Every edit, on every layout, changes bytes only inside the edited entry
// (and the separator an added or removed entry needs), the new file has no
// error, and the edited entry loads as asked.
func TestEditKeepsUntouchedBytes(t *testing.T) {
	edits := []Edit{
		{Op: OpAdd, Name: "mine", Command: []string{"uvx", "mcp-server-time", "--local-timezone=Europe/Paris"}},
		{Op: OpAddJSON, Name: "wiki", JSON: `{"transport": "websocket", "url": "wss://wiki.example.com/ws", "enabled": false, "description": "a <wiki> & more"}`},
		{Op: OpRemove, Name: "filesystem"},
		{Op: OpRemove, Name: "sentry"},
		{Op: OpRemove, Name: "github"},
		{Op: OpEnable, Name: "github"},
		{Op: OpDisable, Name: "filesystem"},
		{Op: OpEnv, Name: "github", Key: "GITHUB_PERSONAL_ACCESS_TOKEN", Value: "ghp_CANARY0123456789"},
		{Op: OpEnv, Name: "github", Key: "GITHUB_HOST", Value: "github.example.com"},
		{Op: OpEnv, Name: "filesystem", Key: "ROOT", Value: "/srv/data \"quoted\""},
	}
	for style, data := range configStyles(t) {
		for _, ed := range edits {
			t.Run(style+"/"+string(ed.Op)+"-"+ed.Name+"-"+ed.Key, func(t *testing.T) {
				ch := apply(t, data, ed)
				if bytes.HasPrefix(data, bom) {
					// CraftBot loads nothing from a file with a byte order mark.
					if !strings.HasSuffix(ch.Refused, "fix them first") {
						t.Fatalf("a file with a byte order mark edited: refused %q", ch.Refused)
					}
					return
				}
				if ch.Refused != "" || ch.Unchanged {
					t.Fatalf("refused %q unchanged %v: %v", ch.Refused, ch.Unchanged, ch.Diagnostics)
				}
				lo, hi := allowed(t, data, ed)
				if !keptOutside(data, ch.Data, lo, hi) {
					from, to := changed(data, ch.Data)
					t.Errorf("bytes changed outside the entry %d..%d:\nold %q\nnew %q", lo, hi, data[from:to], ch.Data[from:len(ch.Data)-(len(data)-to)])
				}
				if bytes.HasPrefix(data, bom) != bytes.HasPrefix(ch.Data, bom) {
					t.Error("the byte order mark was not kept")
				}
				cfg, ds, _ := Check("after", ch.Data, Options{})
				for _, d := range ds {
					if d.Severity == diag.Error {
						t.Fatalf("the new file has an error: %v\n%s", d, ch.Data)
					}
				}
				checkEdited(t, ed, cfg, ch)
			})
		}
	}
}

func checkEdited(t *testing.T, ed Edit, cfg *Config, ch *Change) {
	t.Helper()
	e := cfg.Lookup(ed.Name)
	if ed.Op == OpRemove {
		if e != nil || ch.Removed != 1 {
			t.Errorf("still there (%v), removed %d", e != nil, ch.Removed)
		}
		return
	}
	if e == nil {
		t.Fatalf("server %s does not load after the edit", ed.Name)
	}
	switch ed.Op {
	case OpAdd:
		if e.Command != ed.Command[0] || strings.Join(e.Args, " ") != strings.Join(ed.Command[1:], " ") || !e.Enabled || e.Transport != plan.TransportStdio {
			t.Errorf("added %+v", e)
		}
		if e.Index != len(cfg.Entries)-1 {
			t.Errorf("added at %d", e.Index)
		}
	case OpAddJSON:
		if e.Transport != plan.TransportWebsocket || e.URL != "wss://wiki.example.com/ws" || e.Enabled || e.Description != "a <wiki> & more" {
			t.Errorf("added %+v", e)
		}
	case OpEnable, OpDisable:
		if e.Enabled != (ed.Op == OpEnable) {
			t.Errorf("enabled %v", e.Enabled)
		}
	case OpEnv:
		found := false
		for _, v := range e.Env {
			if v.Key == ed.Key {
				found = v.Value == ed.Value
			}
		}
		if !found {
			t.Errorf("env %s not set: %+v", ed.Key, e.Env)
		}
	}
}

// A new entry copies the layout of the list's last entry: indentation,
// colon and separators; the first entry of an empty or absent list is
// indented one level below mcp_servers (or written on one line in a
// one-line file).
func TestAddWritesTheFilesLayout(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"pretty", prettyConfig, strings.Replace(prettyConfig, `      "enabled": false
    }
  ]`, `      "enabled": false
    },
    {
      "name": "time",
      "transport": "stdio",
      "command": "uvx",
      "args": ["mcp-server-time"],
      "enabled": true
    }
  ]`, 1)},
		{"minified", `{"mcp_servers":[{"name":"a","transport":"stdio","command":"x"}]}`,
			`{"mcp_servers":[{"name":"a","transport":"stdio","command":"x"},{"name":"time","transport":"stdio","command":"uvx","args":["mcp-server-time"],"enabled":true}]}`},
		{"empty list", "{\n    \"auto_connect\": false,\n    \"mcp_servers\": []\n}\n",
			"{\n    \"auto_connect\": false,\n    \"mcp_servers\": [\n        {\n            \"name\": \"time\",\n            \"transport\": \"stdio\",\n            \"command\": \"uvx\",\n            \"args\": [\"mcp-server-time\"],\n            \"enabled\": true\n        }\n    ]\n}\n"},
		{"no list", "{\n  \"auto_connect\": true\n}\n",
			"{\n  \"auto_connect\": true,\n  \"mcp_servers\": [\n    {\n      \"name\": \"time\",\n      \"transport\": \"stdio\",\n      \"command\": \"uvx\",\n      \"args\": [\"mcp-server-time\"],\n      \"enabled\": true\n    }\n  ]\n}\n"},
		{"empty object", `{}`, `{"mcp_servers": [{"name": "time", "transport": "stdio", "command": "uvx", "args": ["mcp-server-time"], "enabled": true}]}`},
		{"one line", `{"mcp_servers": [ {"name": "a", "transport": "stdio", "command": "x"} ]}`,
			`{"mcp_servers": [ {"name": "a", "transport": "stdio", "command": "x"}, {"name": "time", "transport": "stdio", "command": "uvx", "args": ["mcp-server-time"], "enabled": true} ]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := apply(t, []byte(c.in), Edit{Op: OpAdd, Name: "time", Command: []string{"uvx", "mcp-server-time"}})
			if ch.Refused != "" || string(ch.Data) != c.want {
				t.Errorf("refused %q, got\n%s\nwant\n%s", ch.Refused, ch.Data, c.want)
			}
		})
	}
}

// An edit after which the host would not load the entry as asked is
// refused with the diagnostics that say why, positioned in the content it
// would have written (or in the JSON given).
func TestEditRefusals(t *testing.T) {
	skipped := strings.Replace(prettyConfig, `"command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],`, `"args": ["-y", "@modelcontextprotocol/server-github"],`, 1)
	cases := []struct {
		name string
		data string
		ed   Edit
		rule string
		file string
	}{
		{"name taken", prettyConfig, Edit{Op: OpAdd, Name: "sentry", Command: []string{"npx"}}, RuleDuplicateName, "mcp_config.json" + AfterEdit},
		{"name invalid", prettyConfig, Edit{Op: OpAdd, Name: `a"b`, Command: []string{"npx"}}, RuleNameInvalid, "mcp_config.json" + AfterEdit},
		{"list command", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"command": ["npx", "-y", "x"]}`}, RuleCannotStart, "mcp_config.json" + AfterEdit},
		{"enabled says false", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"command": "npx", "enabled": "false"}`}, RuleFieldType, "mcp_config.json" + AfterEdit},
		{"sse without url", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "sse"}`}, RuleMissingURL, "mcp_config.json" + AfterEdit},
		{"unknown transport", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "http", "url": "https://x"}`}, RuleTransport, "mcp_config.json" + AfterEdit},
		{"unknown field", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "sse", "url": "https://x", "headers": {}}`}, RuleEditDrops, "mcp_config.json" + AfterEdit},
		{"ignored field", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "sse", "url": "https://x", "command": "npx"}`}, RuleFieldIgnored, "mcp_config.json" + AfterEdit},
		{"repeated key", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "sse", "url": "https://x", "url": "https://y"}`}, RuleDuplicateKey, "mcp_config.json" + AfterEdit},
		{"wrong type", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "sse", "url": "https://x", "enabled": "yes"}`}, RuleFieldType, "mcp_config.json" + AfterEdit},
		{"not JSON", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "sse",}`}, "", ArgFile},
		{"not an object", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `["sse"]`}, RuleEntryInvalid, ArgFile},
		{"other name", prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"name": "s", "transport": "sse", "url": "https://x"}`}, RuleNameInvalid, ArgFile},
		{"env on sse", prettyConfig, Edit{Op: OpEnv, Name: "sentry", Key: "TOKEN", Value: "x"}, RuleFieldIgnored, "mcp_config.json"},
		{"enable a skipped entry", skipped, Edit{Op: OpEnable, Name: "github"}, RuleMissingCommand, "mcp_config.json" + AfterEdit},
		{"env of a skipped entry", skipped, Edit{Op: OpEnv, Name: "github", Key: "GITHUB_PERSONAL_ACCESS_TOKEN", Value: "x"}, RuleMissingCommand, "mcp_config.json" + AfterEdit},
		{"file not JSON", `{"mcp_servers": [}`, Edit{Op: OpDisable, Name: "x"}, "", "mcp_config.json"},
		{"list not a list", `{"mcp_servers": {"a": 1}}`, Edit{Op: OpAdd, Name: "x", Command: []string{"npx"}}, "type-mismatch", "mcp_config.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := apply(t, []byte(c.data), c.ed)
			if ch.Refused == "" || len(ch.Diagnostics) == 0 {
				t.Fatalf("accepted: %s", ch.Data)
			}
			if ch.File != c.file {
				t.Errorf("file %q, want %q", ch.File, c.file)
			}
			found := false
			for _, d := range ch.Diagnostics {
				if d.File != ch.File || d.Line < 1 {
					t.Errorf("diagnostic not positioned in %s: %v", ch.File, d)
				}
				found = found || c.rule == "" || d.Rule == c.rule
			}
			if !found {
				t.Errorf("no %s among %v", c.rule, ch.Diagnostics)
			}
		})
	}
}

// Disabling a skipped entry is allowed (the host does not load it either
// way); enabling an enabled server or disabling a disabled one changes
// nothing.
func TestEditUnchangedAndDisableSkipped(t *testing.T) {
	for _, ed := range []Edit{{Op: OpEnable, Name: "filesystem"}, {Op: OpDisable, Name: "sentry"}, {Op: OpEnv, Name: "github", Key: "GITHUB_PERSONAL_ACCESS_TOKEN", Value: ""}} {
		ch := apply(t, []byte(prettyConfig), ed)
		if !ch.Unchanged || ch.Refused != "" || string(ch.Data) != prettyConfig {
			t.Errorf("%s %s: unchanged %v refused %q", ed.Op, ed.Name, ch.Unchanged, ch.Refused)
		}
	}
	noEnabled := `{"mcp_servers": [{"name": "a", "transport": "stdio"}]}`
	ch := apply(t, []byte(noEnabled), Edit{Op: OpDisable, Name: "a"})
	if ch.Refused != "" || string(ch.Data) != `{"mcp_servers": [{"name": "a", "transport": "stdio", "enabled": false}]}` {
		t.Errorf("refused %q: %s", ch.Refused, ch.Data)
	}
}

// Edits that name nothing the file has, or ask the impossible, are an
// *EditError.
func TestEditErrors(t *testing.T) {
	for _, ed := range []Edit{
		{Op: OpRemove, Name: "nope"},
		{Op: OpEnable, Name: "nope"},
		{Op: OpEnv, Name: "github", Key: "1BAD", Value: "x"},
		{Op: OpEnv, Name: "github", Key: "A=B", Value: "x"},
		{Op: OpEnv, Name: "github", Key: "K", Value: "a\x00b"},
		{Op: OpAdd, Name: "x"},
		{Op: OpAdd, Name: "", Command: []string{"npx"}},
		{Op: "rename", Name: "github"},
	} {
		_, err := Apply("mcp_config.json", []byte(prettyConfig), ed, Options{})
		var ee *EditError
		if !errors.As(err, &ee) {
			t.Errorf("%s %s %q: %v", ed.Op, ed.Name, ed.Key, err)
		}
	}
	_, err := Apply("mcp_config.json", []byte(prettyConfig), Edit{Op: OpRemove, Name: "nope"}, Options{})
	if !strings.Contains(err.Error(), "servers: filesystem, sentry, github") {
		t.Errorf("%v", err)
	}
}

// The value of env appears in no message, refusal or error, whatever
// happens to the edit.
func TestEditNeverShowsTheValue(t *testing.T) {
	const canary = "CANARY-env-value-9f8e7d"
	skipped := strings.Replace(prettyConfig, `"command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],`, `"args": [],`, 1)
	var out strings.Builder
	for _, c := range []struct {
		data string
		ed   Edit
	}{
		{prettyConfig, Edit{Op: OpEnv, Name: "github", Key: "GITHUB_PERSONAL_ACCESS_TOKEN", Value: canary}},
		{prettyConfig, Edit{Op: OpEnv, Name: "sentry", Key: "TOKEN", Value: canary}},
		{prettyConfig, Edit{Op: OpEnv, Name: "github", Key: "BAD KEY", Value: canary}},
		{prettyConfig, Edit{Op: OpEnv, Name: "github", Key: "K", Value: canary + "\x00"}},
		{prettyConfig, Edit{Op: OpEnv, Name: "nope", Key: "K", Value: canary}},
		{skipped, Edit{Op: OpEnv, Name: "github", Key: "K", Value: canary}},
		{prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "sse", "url": "https://x", "env": {"T": "` + canary + `"}}`}},
		{prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "stdio", "env": {"T": "` + canary + `"}`}},
		{prettyConfig, Edit{Op: OpAddJSON, Name: "r", JSON: `{"transport": "stdio", "command": "x", "env": {"T": "` + canary + `", "T": "` + canary + `"}}`}},
	} {
		ch, err := Apply("mcp_config.json", []byte(c.data), c.ed, Options{TargetOS: "linux"})
		if err != nil {
			out.WriteString(err.Error())
			continue
		}
		out.WriteString(ch.Refused)
		for _, d := range ch.Diagnostics {
			fmt.Fprintf(&out, "%v\n", d)
		}
	}
	if strings.Contains(out.String(), canary) {
		t.Errorf("the value shows:\n%s", out.String())
	}
}

// Rows: what the host does with each entry, the reason it skips one, the
// env keys and whether each is filled in.
func TestRows(t *testing.T) {
	data := []byte(`{"mcp_servers": [
  {"name": "a", "transport": "stdio", "command": "npx", "env": {"T": "secret", "E": ""}},
  {"name": "b", "transport": "stdio"},
  {"name": "a", "transport": "sse", "url": "https://x"}
]}`)
	cfg, ds, _ := Check("f.json", data, Options{})
	rows := Rows(data, cfg, ds)
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	if rows[0].Skip != nil || fmt.Sprint(rows[0].Env) != "[{T true} {E false}]" {
		t.Errorf("row 0: %+v", rows[0])
	}
	if rows[1].Skip == nil || rows[1].Skip.Rule != RuleMissingCommand {
		t.Errorf("row 1: %+v", rows[1])
	}
	// A later entry of a name loads; the host starts the first for it.
	if rows[2].Skip != nil || rows[2].Entry.Winner != rows[0].Entry || rows[2].Shadowed == nil || rows[2].Shadowed.Rule != RuleDuplicateName {
		t.Errorf("row 2: %+v", rows[2])
	}
}

// disable keeps the seed's promise (the server stops connecting) where a
// name is defined more than once: the host launches the first entry of the
// name for each enabled one, so every entry of it is disabled; the other
// servers' bytes stay.
func TestDisableStopsEveryEntryOfTheName(t *testing.T) {
	data := []byte(`{"mcp_servers": [
  {"name": "fs", "command": "npx", "args": ["-y", "a@1.0.0"], "enabled": false},
  {"name": "fs", "command": "npx", "args": ["-y", "b@1.0.0"]},
  {"name": "other", "command": "npx", "args": ["-y", "c@1.0.0"]},
  {"name": "fs", "command": "npx", "args": ["-y", "d@1.0.0"], "enabled": true}
]}
`)
	ch := apply(t, data, Edit{Op: OpDisable, Name: "fs"})
	if ch.Refused != "" {
		t.Fatalf("refused: %s %v", ch.Refused, ch.Diagnostics)
	}
	want := strings.Replace(strings.Replace(string(data), `"b@1.0.0"]}`, `"b@1.0.0"], "enabled": false}`, 1),
		`"d@1.0.0"], "enabled": true}`, `"d@1.0.0"], "enabled": false}`, 1)
	if string(ch.Data) != want {
		t.Fatalf("wrote\n%s\nwant\n%s", ch.Data, want)
	}
	cfg, _, err := Check("mcp_config.json", ch.Data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cfg.Entries {
		if e.Name == "fs" && e.Enabled {
			t.Errorf("entry %d of fs still enabled", e.Index)
		}
	}
}
