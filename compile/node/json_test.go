package node

import (
	"strings"
	"testing"
)

func TestParseJSONPositions(t *testing.T) {
	src := "// c\n{\n  \"a\": [1, \"é\", {\"b\": null}],\n  \"ü\": \"x\", // trailing\n}\n"
	n, d := ParseJSON("f.json", []byte(src), true)
	if d != nil {
		t.Fatal(d)
	}
	m, v := n.Lookup([]string{"a", "2", "b"})
	if m == nil || v.Kind != Null || v.Pos.String() != "f.json:3:23" || m.KeyPos.String() != "f.json:3:18" {
		t.Errorf("a[2].b at %v (key %v)", v.Pos, m.KeyPos)
	}
	m, v = n.Lookup([]string{"ü"})
	if v.Text != "x" || m.KeyPos.String() != "f.json:4:3" || v.Pos.String() != "f.json:4:8" {
		t.Errorf("ü at %v, key %v", v.Pos, m.KeyPos)
	}
}

func TestParseJSONErrors(t *testing.T) {
	for _, c := range []struct {
		src      string
		comments bool
		want     string
	}{
		{"{\"a\": 1,}", false, "f.json:1:9"},       // trailing comma in strict JSON
		{"// x\n{}", false, "f.json:1:1"},          // comment in strict JSON
		{"{\"a\": 1,}", true, ""},                  // fine in JSONC
		{"{\n  \"é\": tru\n}", true, "f.json:2:8"}, // bad literal, rune column
		{"{\"a\": [1, 2}", true, "f.json:1:12"},    // wrong closer
		{"{\"a\": \"x\xff\"}", true, "f.json:1:9"}, // invalid UTF-8
		{"{\n\"a\": {\n", true, "f.json:3:1"},      // ends early
		{"", false, "f.json:1:1"},                  // empty
	} {
		_, d := ParseJSON("f.json", []byte(c.src), c.comments)
		switch {
		case c.want == "" && d != nil:
			t.Errorf("%q: unexpected %v", c.src, d)
		case c.want != "" && (d == nil || d.Pos().String() != c.want || d.Rule != RuleJSONSyntax):
			t.Errorf("%q: got %+v, want json-syntax at %s", c.src, d, c.want)
		}
	}
}

// Deep nesting is refused before the recursive parser sees it: 10 000
// levels once took 2.4 GB, and a few MB of brackets overflowed the stack.
func TestParseJSONRefusesDeepNesting(t *testing.T) {
	for _, comments := range []bool{true, false} {
		src := `{"Mcp":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "}"
		_, d := ParseJSON("f.json", []byte(src), comments)
		if d == nil || d.Rule != RuleJSONSyntax || !strings.Contains(d.Message, "nested deeper") || d.Column != 8+MaxDepth-1 {
			t.Errorf("comments=%v: %+v", comments, d)
		}
	}
	ok := `{"a": "[[[[[[", "b": ` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "}"
	if _, d := ParseJSON("f.json", []byte(ok), true); d != nil {
		t.Errorf("%d levels refused: %v", MaxDepth, d)
	}
}

// A file that ends early gets a hint naming what is still open: the
// innermost bracket, a string, or a block comment; brackets inside strings
// and comments do not count, nor do comments' brackets for deep nesting.
func TestParseJSONUnclosedHints(t *testing.T) {
	for _, c := range []struct {
		src      string
		comments bool
		hint     string
	}{
		{"{\"a\": [1, 2\n", true, "add the ] that closes the [ opened at f.json:1:7"},
		{"{\"a\": {\"b\": \"]}\"\n", false, "add the } that closes the { opened at f.json:1:7"},
		{"{\"a\": \"open\n", true, "a string is not closed: add the missing \""},
		{"{\"a\": 1, // ]]\n", true, "add the } that closes the { opened at f.json:1:1"},
	} {
		_, d := ParseJSON("f.json", []byte(c.src), c.comments)
		if d == nil || d.Suggestion != c.hint {
			t.Errorf("%q: %+v\nwant the hint %q", c.src, d, c.hint)
		}
	}
	// An open block comment: the parser itself points at its start.
	if _, d := ParseJSON("f.json", []byte("{\"a\": 1 /* {[ \n"), true); d == nil || d.Pos().String() != "f.json:1:9" || !strings.Contains(d.Message, "parsing comment") {
		t.Errorf("open comment: %+v", d)
	}
	deepComment := "{ // " + strings.Repeat("[", 2*MaxDepth) + "\n\"a\": 1 /* " + strings.Repeat("{", 2*MaxDepth) + " */ }"
	if _, d := ParseJSON("f.json", []byte(deepComment), true); d != nil {
		t.Errorf("brackets in comments counted: %v", d)
	}
}
