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

// The description and its two fallbacks, as adapter.py builds them.
func TestTranslateToolNamesAndDescription(t *testing.T) {
	for _, c := range []struct{ serverDesc, desc, want string }{
		{"Files", "Read a file", "[MCP:filesystem] Read a file"},
		{"Files", "", "[MCP:filesystem] read_file from Files"},
		{"", "", "[MCP:filesystem] MCP tool: read_file"},
	} {
		a, problem := TranslateTool("filesystem", c.serverDesc, "mcp_filesystem", Tool{Name: "read_file", Description: c.desc})
		if a.Name != "mcp_filesystem_read_file" || a.Set != "mcp_filesystem" || a.Description != c.want || problem != "" {
			t.Errorf("%+v %q, want %q", a, problem, c.want)
		}
		if a.Input == nil || len(a.Input) != 0 {
			t.Errorf("no schema: %+v", a.Input)
		}
	}
}

// The map the adapter builds, checked against what CraftBot 605efb4's
// convert_json_schema_to_input_schema returned for the same schema (run
// with stubs for its logger and registry).
func TestTranslateSchema(t *testing.T) {
	in, problem := TranslateSchema(decode(t, `{"type":"object","properties":{
		"x":{},"y":{"anyOf":[{"type":"integer"}]},"z":{"type":["string","null"]},
		"arr":{"type":"array","items":{"type":"object","properties":{"q":{"type":"string"}}}},
		"n":{"type":"object","properties":{}},"n2":{"type":"object","properties":{"a":{}},"description":"D"},
		"o":{"type":"object"},"d":{"type":"string","default":"v","enum":["v","w"],"description":"dd"},
		"tnull":{"type":null},"desc_null":{"description":null},"ref":{"$ref":"#/$defs/X","title":"T"},
		"a2":{"type":"array"},"b2":{"type":["array","null"],"items":{}},"c2":{"type":"object","properties":{},"description":null}},
		"required":["x","missing","n",3]}`))
	want := decode(t, `{"arr": {"items": {"properties": {"q": {"type": "string"}}, "type": "object"}, "type": "array"},
		"d": {"description": "dd", "enum": ["v", "w"], "example": "v", "type": "string"},
		"desc_null": {"description": null, "type": "string"}, "n": {"description": "Nested object", "required": true, "type": "object"},
		"n2": {"description": "D", "type": "object"}, "o": {"type": "object"}, "tnull": {"type": null},
		"x": {"required": true, "type": "string"}, "y": {"type": "string"}, "z": {"type": ["string", "null"]},
		"ref": {"type": "string"}, "a2": {"type": "array"}, "b2": {"type": ["array", "null"]}, "c2": {"description": null, "type": "object"}}`)
	got := decode(t, mustJSON(t, in))
	if problem != "" || !reflect.DeepEqual(got, want) {
		t.Errorf("got %s (%q)\nwant %s", mustJSON(t, in), problem, mustJSON(t, want))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Schemas without "type": "object" give an action without inputs; the
// shapes the adapter raises on leave the tool unregistered (each as
// CraftBot 605efb4 did).
func TestTranslateSchemaShapes(t *testing.T) {
	for schema, want := range map[string]string{
		`null`: "", `{}`: "", `[]`: "", `""`: "", `0`: "", `false`: "",
		`{"properties":{"x":{}}}`:                   "",
		`{"type":["object"],"properties":{"a":{}}}`: "",
		`{"type":"object"}`:                         "",
		`[1]`:                                       "is a list, not an object",
		`"x"`:                                       "is a string, not an object",
		`{"type":"object","properties":{"x":true}}`:                    `property "x" is a boolean`,
		`{"type":"object","properties":null}`:                          "properties are null",
		`{"type":"object","properties":[]}`:                            "properties are a list",
		`{"type":"object","properties":{"a":{}},"required":null}`:      "required is null",
		`{"type":"object","properties":{"a":{}},"required":[{"x":1}]}`: "holds an object",
	} {
		in, problem := TranslateSchema(decode(t, schema))
		if (want == "") != (problem == "") || !strings.Contains(problem, want) || len(in) > 0 && want == "" && !strings.Contains(schema, `"type":"object"`) {
			t.Errorf("%s: %v %q, want %q", schema, in, problem, want)
		}
	}
	// required as a string is the set of its characters; as an object, of
	// its keys.
	in, _ := TranslateSchema(decode(t, `{"type":"object","properties":{"a":{},"b":{},"ab":{}},"required":"ab"}`))
	if in["a"]["required"] != true || in["b"]["required"] != true || in["ab"]["required"] != nil {
		t.Errorf("required string: %v", in)
	}
	in, _ = TranslateSchema(decode(t, `{"type":"object","properties":{"a":{}},"required":{"a":1}}`))
	if in["a"]["required"] != true {
		t.Errorf("required object: %v", in)
	}
}

// What the handler's source makes of each name, as Python 3.11 compiled
// the handler CraftBot 605efb4 writes (the values of _tool it held, or
// the SyntaxError).
func TestPythonLiteral(t *testing.T) {
	for name, want := range map[string]string{
		"read_file":                      "read_file",
		"a{b}c":                          "a{b}c",
		"aé😀":                            "aé😀",
		`a\nb`:                           "a\nb",
		`a\tb\\c\101\x41\u0041\q`:        "a\tb\\cAAA\\q",
		`a\"b`:                           `a"b`,
		"a\\\nb":                         "ab",
		"a\\\r\nb":                       "ab",
		"a\\\rb":                         "ab",
		`a\777b\8`:                       "aǿb\\8",
		"a\x0bb\x0cc\x1cd\u2028e\u0085f": "a\x0bb\x0cc\x1cd\u2028e\u0085f",
		`a\N{LATIN SMALL LETTER B}`:      `a\N{LATIN SMALL LETTER B}`, // unresolved
		`q"x`:                            "!double quote",
		`x"""y`:                          "!double quote",
		"a\nb":                           "!line break",
		"a\rb":                           "!line break",
		"a\r\nb":                         "!line break",
		`a\`:                             "!ends with",
		`a\x4`:                           `!\x not followed by 2`,
		`a\x0`:                           `!\x not followed by 2`,
		`a\u12`:                          `!\u not followed by 4`,
		`a\U0001F600b\U00110000`:         `!\U not followed by 8`,
		`a\N`:                            `!\N not followed`,
		"a\x00b":                         "!NUL",
	} {
		got, problem, _ := PythonLiteral(name)
		if strings.HasPrefix(want, "!") {
			if !strings.Contains(problem, want[1:]) {
				t.Errorf("%q: %q %q, want a problem with %q", name, got, problem, want[1:])
			}
		} else if got != want || problem != "" {
			t.Errorf("%q: %q %q, want %q", name, got, problem, want)
		}
	}
}

func TestAssign(t *testing.T) {
	servers := []ServerTools{
		{Server: "a_b", ActionSet: "mcp_a_b", Tools: []Tool{{Name: "c"}, {Name: "ok"}}},
		{Server: "a", ActionSet: "tools", Tools: []Tool{{Name: "b_c"}, {Name: "x.y"}, {Name: "help"}, {Name: "dup"}, {Name: "dup"}, {Name: ""},
			{Name: `say "hi"`}, {Name: `a\tb`}, {Name: "bad", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"p": "string"}}},
			{Name: "internal", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"_s": map[string]any{}, "q": map[string]any{}}, "required": []any{"_s"}}}}},
		{Server: `q"s`, ActionSet: "mcp_q", Tools: []Tool{{Name: "t"}}},
		{Server: `e\ts`, ActionSet: "mcp_e", Tools: []Tool{{Name: "t"}}},
	}
	got := Assign(servers, []string{"mcp_a_help"})
	rules := []string{}
	for _, r := range got {
		rules = append(rules, r.Tool+"="+r.Rule)
	}
	want := []string{"c=", "ok=", "b_c=" + RuleActionCollision, "x.y=", "help=" + RuleActionBuiltin,
		"dup=", "dup=" + RuleActionCollision, "=", `say "hi"=` + RuleActionName, `a\tb=` + RuleActionEscape, "bad=" + RuleActionSchema,
		"internal=" + RuleActionInternalArg, "t=" + RuleActionName, "t=" + RuleActionEscape}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("rules %v\nwant  %v", rules, want)
	}
	if got[2].Action.Name != "mcp_a_b_c" || got[2].Action.Set != "tools" || !strings.Contains(got[2].Message, `tool "c" of server "a_b"`) {
		t.Errorf("%+v", got[2])
	}
	if !strings.Contains(got[6].Suggestion, "lists the name twice") {
		t.Errorf("same-server collision: %+v", got[6])
	}
	if r := got[8]; !r.Unregistered || r.InServer || !strings.Contains(r.Message, "never registers") {
		t.Errorf("quote: %+v", r)
	}
	if r := got[9]; r.Unregistered || r.Action.Tool != "a\tb" || !strings.Contains(r.Message, `calls tool "a\tb", not "a\\tb"`) {
		t.Errorf("escape: %+v", r)
	}
	if r := got[10]; !r.Unregistered || !strings.Contains(r.Message, `property "p" is a string`) || len(r.Action.Input) != 0 {
		t.Errorf("schema: %+v", r)
	}
	if r := got[11]; r.Unregistered || !strings.Contains(r.Message, `the input "_s"`) || !strings.Contains(r.Message, `"_s" is required`) {
		t.Errorf("internal arg: %+v", r)
	}
	if r := got[12]; !r.Unregistered || !r.InServer {
		t.Errorf("server quote: %+v", r)
	}
	if r := got[13]; r.Unregistered || !r.InServer || r.Action.Server != "e\ts" {
		t.Errorf("server escape: %+v", r)
	}
	// Near-miss: distinct names, no built-in among them, names Python
	// reads as written, inputs without _.
	for _, r := range Assign([]ServerTools{{Server: "fs", ActionSet: "mcp_fs", Tools: []Tool{{Name: "read"}, {Name: "write-file"}, {Name: "a.b c/d"},
		{Name: "x", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"a_": map[string]any{}}}}}},
		{Server: "git", ActionSet: "mcp_fs", Tools: []Tool{{Name: "read"}}}}, []string{"mcp_fs_list"}) {
		if r.Rule != "" || r.Unregistered {
			t.Errorf("%+v", r)
		}
	}
}
