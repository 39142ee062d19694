package actions

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTranslateToolNamesAndDescription(t *testing.T) {
	a := TranslateTool("filesystem", "mcp_filesystem", Tool{Name: "read_file", Description: "Read a file"})
	if a.Name != "mcp_filesystem_read_file" || a.Set != "mcp_filesystem" || a.Description != "[MCP:filesystem] Read a file" {
		t.Errorf("%+v", a)
	}
	if a.Input.Fields == nil || len(a.Input.Fields) != 0 || a.Input.Dropped != nil {
		t.Errorf("no schema: %+v", a.Input)
	}
}

// The keywords the seed names are carried; everything else is listed as
// dropped, nested structure included.
func TestTranslateSchema(t *testing.T) {
	in := TranslateSchema(decode(t, `{
		"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": false,
		"$defs": {"Edit": {"type": "object"}},
		"required": ["path", "edits", "ghost", 3],
		"properties": {
			"path": {"type": "string", "description": "where"},
			"mode": {"type": "string", "enum": ["a", "b"], "default": "a", "title": "Mode"},
			"dryRun": {"type": "boolean", "default": false},
			"count": {"type": "number", "default": 3, "minimum": 1},
			"edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
			"opts": {"type": "object", "properties": {"x": {"type": "string"}}},
			"either": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "maybe"},
			"ref": {"$ref": "#/$defs/Edit"},
			"multi": {"type": ["string", "null"], "default": null},
			"anything": true
		}}`))
	want := Input{
		Dropped: []string{"$defs", "additionalProperties"},
		Fields: []Field{
			{Name: "anything"},
			{Name: "count", Type: "number", Example: json.RawMessage("3"), Dropped: []string{"minimum"}},
			{Name: "dryRun", Type: "boolean", Example: json.RawMessage("false")},
			{Name: "edits", Type: "array", Required: true, Dropped: []string{"items"}},
			{Name: "either", Description: "maybe", Dropped: []string{"anyOf"}},
			{Name: "mode", Type: "string", Enum: []any{"a", "b"}, Example: json.RawMessage(`"a"`), Dropped: []string{"title"}},
			{Name: "multi", Type: []any{"string", "null"}, Example: json.RawMessage("null")},
			{Name: "opts", Type: "object", Dropped: []string{"properties"}},
			{Name: "path", Type: "string", Description: "where", Required: true},
			{Name: "ref", Dropped: []string{"$ref"}},
		},
	}
	if !reflect.DeepEqual(in, want) {
		g, _ := json.MarshalIndent(in, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}
}

func TestTranslateSchemaNotAnObject(t *testing.T) {
	if in := TranslateSchema("nope"); len(in.Fields) != 0 || len(in.Dropped) != 1 {
		t.Errorf("%+v", in)
	}
	if in := TranslateSchema(nil); len(in.Fields) != 0 || in.Dropped != nil {
		t.Errorf("%+v", in)
	}
	// properties of the wrong type: no fields, and said so.
	in := TranslateSchema(decode(t, `{"type": "object", "properties": [1], "required": "x"}`))
	if len(in.Fields) != 0 {
		t.Errorf("%+v", in)
	}
}

func TestActionNameProblem(t *testing.T) {
	for name, want := range map[string]string{
		"mcp_fs_read_file":                     "",
		"mcp_everything_get-sum":               "",
		"mcp_fs_" + strings.Repeat("a", 57):    "",
		"mcp_fs_" + strings.Repeat("a", 58):    "65 characters",
		"mcp_fs_admin.tools.list":              `'.'`,
		"mcp_fs_héllo wörld":                   `'é' ' ' 'ö'`,
		"mcp_fs_a.b" + strings.Repeat("c", 60): "characters (at most 64) and holds '.'",
	} {
		got := ActionNameProblem(name)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestAssign(t *testing.T) {
	servers := []ServerTools{
		{Server: "a_b", ActionSet: "mcp_a_b", Tools: []Tool{{Name: "c"}, {Name: "ok"}}},
		{Server: "a", ActionSet: "tools", Tools: []Tool{{Name: "b_c"}, {Name: "x.y"}, {Name: "help"}, {Name: "dup"}, {Name: "dup"}, {Name: ""}}},
	}
	got := Assign(servers, []string{"mcp_a_help"})
	rules := []string{}
	for _, r := range got {
		rules = append(rules, r.Tool+"="+r.Rule)
	}
	want := []string{"c=", "ok=", "b_c=" + RuleActionCollision, "x.y=" + RuleActionName, "help=" + RuleActionBuiltin,
		"dup=", "dup=" + RuleActionCollision, "=" + RuleActionName}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("rules %v\nwant  %v", rules, want)
	}
	if got[2].Action.Name != "mcp_a_b_c" || got[2].Action.Set != "tools" || !strings.Contains(got[2].Message, `tool "c" of server "a_b"`) {
		t.Errorf("%+v", got[2])
	}
	if !strings.Contains(got[6].Suggestion, "lists the name twice") {
		t.Errorf("same-server collision: %+v", got[6])
	}
	if !strings.Contains(got[7].Message, "the tool has no name") {
		t.Errorf("empty tool: %+v", got[7])
	}
	// Near-miss: distinct names, no built-in among them, all valid.
	for _, r := range Assign([]ServerTools{{Server: "fs", ActionSet: "mcp_fs", Tools: []Tool{{Name: "read"}, {Name: "write-file"}}},
		{Server: "git", ActionSet: "mcp_fs", Tools: []Tool{{Name: "read"}}}}, []string{"mcp_fs_list"}) {
		if r.Rule != "" {
			t.Errorf("%+v", r)
		}
	}
}
