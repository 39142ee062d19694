package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/tailscale/hujson"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

func TestParseJSONPositions(t *testing.T) {
	src := "// c\n{\n  \"a\": [1, \"é\", {\"b\": null}],\n  \"ü\": \"x\", // trailing\n}\n"
	n, d := ParseJSON("f.json", []byte(src), true)
	if d != nil {
		t.Fatal(d)
	}
	m, v := n.Lookup([]string{"a", "2", "b"})
	if m == nil || v.Kind != Null || v.Pos().String() != "f.json:3:23" || m.KeyPos().String() != "f.json:3:18" {
		t.Errorf("a[2].b at %v (key %v)", v.Pos(), m.KeyPos())
	}
	m, v = n.Lookup([]string{"ü"})
	if v.Text != "x" || m.KeyPos().String() != "f.json:4:3" || v.Pos().String() != "f.json:4:8" {
		t.Errorf("ü at %v, key %v", v.Pos(), m.KeyPos())
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
		case c.want != "" && (d == nil || d.Pos().String() != c.want || d.Rule != rules.JSONSyntax.ID):
			t.Errorf("%q: got %+v, want json-syntax at %s", c.src, d, c.want)
		}
	}
}

// Deep nesting is refused before the recursive parser sees it: its memory
// grows with the depth, and a few MB of brackets overflow the stack.
func TestParseJSONRefusesDeepNesting(t *testing.T) {
	for _, comments := range []bool{true, false} {
		src := `{"Mcp":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "}"
		_, d := ParseJSON("f.json", []byte(src), comments)
		if d == nil || d.Rule != rules.JSONSyntax.ID || !strings.Contains(d.Message, "nested deeper") || d.Column != 8+MaxDepth-1 {
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

// naivePos is the definition LineIndex.Pos must agree with: the line is one
// more than the newlines before off, the column one more than the
// characters (utf8.RuneCount) between the line's start and off.
func naivePos(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return bytes.Count(data[:off], []byte("\n")) + 1, utf8.RuneCount(data[start:off]) + 1
}

// FuzzLineIndexPos checks every offset of the input (and some outside it)
// against naivePos, on ASCII, multibyte and invalid UTF-8 alike.
func FuzzLineIndexPos(f *testing.F) {
	f.Add([]byte("{\"a\": 1}\n"), uint16(3))
	f.Add([]byte("é\nü\r\n日本"), uint16(1))
	f.Add([]byte("\xff\xc3\n\xe6\x97"), uint16(2))
	f.Add(bytes.Repeat([]byte("aé日🙂"), 300), uint16(0))
	f.Add(append(bytes.Repeat([]byte("a"), markEvery-1), "é\xe6\x97\n"...), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, repeat uint16) {
		// Repeat the input so that lines span several marks.
		data = bytes.Repeat(data, 1+int(repeat)%(4*markEvery/max(len(data), 1)+1))
		ix := NewLineIndex("f", data)
		walk, back := 0, 0
		for off := -2; off <= len(data)+2; off++ {
			p := ix.Pos(off)
			line, col := naivePos(data, off)
			if p.Line != line || p.Column != col || p.File != "f" {
				t.Fatalf("Pos(%d) of %q = %d:%d, want %d:%d", off, data, p.Line, p.Column, line, col)
			}
			// A walk in increasing offsets, and one whose last line is
			// past off, find the same.
			back = len(ix.starts) - 1
			for _, l := range []Loc{ix.locFrom(off, &walk), ix.locFrom(off, &back)} {
				if l.Pos() != p {
					t.Fatalf("locFrom(%d) of %q = %v, want %v", off, data, l.Pos(), p)
				}
			}
		}
	})
}

// NewLineIndex sizes its line starts once: grown by appending, they were a
// seventh of the bytes a large validation allocated.
func TestLineIndexAllocatesItsLinesOnce(t *testing.T) {
	data := bytes.Repeat([]byte("{\"a\": \"b\"},\n"), 10000)
	NewLineIndex("f", data) // the file's name interned
	allocs := testing.AllocsPerRun(5, func() { NewLineIndex("f", data) })
	if allocs > 2 {
		t.Errorf("NewLineIndex of 10 000 lines: %v allocations, want the index and its line starts", allocs)
	}
	if ix := NewLineIndex("f", data); len(ix.starts) != 10001 || cap(ix.starts) != len(ix.starts) {
		t.Errorf("line starts: len %d cap %d, want 10001 both", len(ix.starts), cap(ix.starts))
	}
}

// A lookup reads only the bytes near its offset, never the whole line
// before it: a minified file is one line, and counting from the start of
// the line for each value made positions quadratic. Proof without a clock: after indexing, the bytes far before the
// offset are changed, and the column must not notice.
func TestLineIndexPosReadsOnlyNearTheOffset(t *testing.T) {
	const n = 1 << 20
	for name, fill := range map[string]string{"ascii": "a", "multibyte": "é"} {
		data := []byte("{\n" + strings.Repeat(fill, n) + "x")
		ix := NewLineIndex("f", data)
		off := len(data) - 1
		want := ix.Pos(off)
		if line, col := naivePos(data, off); want.Line != line || want.Column != col {
			t.Fatalf("%s: Pos = %v, want %d:%d", name, want, line, col)
		}
		// Make the start of the line count differently: a lookup that
		// reads it again sees other characters.
		other := "é"
		if fill == "é" {
			other = "aa"
		}
		copy(data[2:len(data)/2], strings.Repeat(other, n))
		if got := ix.Pos(off); got != want {
			t.Errorf("%s: Pos(%d) read the whole line again: %v, then %v", name, off, want, got)
		}
	}
}

// Line returns the long line without copying it per call: a report with a
// diagnostic per value of a 10 MB line asks for it once per value.
func TestLineIndexLineDoesNotCopyPerCall(t *testing.T) {
	data := []byte(strings.Repeat("a", 10<<20) + "\nb")
	ix := NewLineIndex("f", data)
	if s, ok := ix.Line(1); !ok || len(s) != 10<<20 {
		t.Fatalf("Line(1) = %d bytes, %v", len(s), ok)
	}
	allocated := allocatedBytes(func() {
		for range 100 {
			if s, _ := ix.Line(1); len(s) != 10<<20 {
				t.Fatal("wrong line")
			}
		}
	})
	if allocated > 1<<20 {
		t.Errorf("100 calls of Line on a 10 MB line allocated %d MB", allocated>>20)
	}
}

// Line copies a short line, not the file: a report with a diagnostic on
// each of a few lines of a 10 MB file would otherwise hold a second copy of
// the file. Lines asked in turn (as a report asks them) come back right.
func TestLineIndexLineCopiesAShortLine(t *testing.T) {
	var b strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&b, "%-99d\n", i)
	}
	ix := NewLineIndex("f", []byte(b.String()))
	want := make([]string, 1002)
	for n := range want {
		want[n] = fmt.Sprintf("%-99d", n-1)
	}
	allocated := allocatedBytes(func() {
		for n := 1; n <= 1000; n++ {
			for _, m := range [...]int{n, n, n + 1} { // the next line too, as a report may
				if s, ok := ix.Line(m); !ok || s != want[m] {
					t.Fatalf("Line(%d) = %q, %v", m, s, ok)
				}
			}
		}
	})
	if allocated > 2<<20 { // the file is 10 MB
		t.Errorf("3000 calls of Line on lines of 100 bytes allocated %d KB", allocated>>10)
	}
}

// allocatedBytes is how many bytes f allocates.
var allocatedBytes = testservers.AllocatedBytes

// LineOffset is the inverse of Pos on every column of every line, and
// clamps a column past the end of a line to its length.
func TestLineOffsetInvertsPos(t *testing.T) {
	long := strings.Repeat("aé€😀\xff", 400) // invalid bytes count as characters too
	for _, data := range []string{"", "abc\ndef", "é\n" + long + "\nx", long, "a\r\nbé\n\n"} {
		ix := NewLineIndex("f", []byte(data))
		for n, line := range strings.Split(data, "\n") {
			runes := utf8.RuneCountInString(line)
			off := 0
			for col := 1; col <= runes+3; col++ {
				want := len(line)
				if col-1 <= runes {
					want = off
				}
				got, ok := ix.LineOffset(n+1, col)
				if !ok || got != want {
					t.Fatalf("%q line %d col %d: %d, want %d", data[:min(len(data), 20)], n+1, col, got, want)
				}
				if off < len(line) {
					_, size := utf8.DecodeRuneInString(line[off:])
					off += size
				}
			}
		}
	}
}

// TestParseJSONSpans: each value's Start/End cut exactly its text out of the
// file, comments and whitespace around it excluded.
func TestParseJSONSpans(t *testing.T) {
	src := "// c\n{\n  \"a\": [1, \"é\", {\"b\": null}] /* x */,\n  \"ü\": \"x\\\"y\", // trailing\n}\n"
	n, d := ParseJSON("f.json", []byte(src), true)
	if d != nil {
		t.Fatal(d)
	}
	for _, c := range []struct {
		path []string
		want string
	}{
		{nil, "{\n  \"a\": [1, \"é\", {\"b\": null}] /* x */,\n  \"ü\": \"x\\\"y\", // trailing\n}"},
		{[]string{"a"}, `[1, "é", {"b": null}]`},
		{[]string{"a", "1"}, `"é"`},
		{[]string{"a", "2"}, `{"b": null}`},
		{[]string{"a", "2", "b"}, `null`},
		{[]string{"ü"}, `"x\"y"`},
	} {
		_, v := n.Lookup(c.path)
		if v == nil {
			t.Fatalf("%v: not found", c.path)
		}
		if got := src[v.Start:v.End]; got != c.want {
			t.Errorf("%v: span %d..%d is %q, want %q", c.path, v.Start, v.End, got, c.want)
		}
	}
}

// Strict JSON is checked by scanning, not by decoding the whole file into
// Go values before hujson parses it again; and a string literal hujson has
// validated is not decoded through encoding/json again unless it has an
// escape. Parsing a strict file costs about what parsing it as JSONC costs.
func TestParseJSONStrictCostsWhatJSONCCosts(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range 2000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s-%d": {"command": "node", "args": ["a", "b", "c"], "env": {"A": "x", "B": null}, "n": %d}`, i, i)
	}
	b.WriteString("}}")
	data := []byte(b.String())
	parse := func(comments bool) uint64 {
		return allocatedBytes(func() {
			if _, d := ParseJSON("f.json", data, comments); d != nil {
				t.Fatal(d)
			}
		})
	}
	parse(false) // warm up
	strict, jsonc := parse(false), parse(true)
	if strict > jsonc*11/10 {
		t.Errorf("strict JSON allocated %d KB, JSONC %d KB", strict>>10, jsonc>>10)
	}
}

// A JSONC file with a comment and trailing commas (the host's
// appsettings.json often has both) costs about what the same file without
// them costs: hujson's syntax tree of the whole file, kept while it was
// converted, took more than the Nodes built from it.
func TestParseJSONCWithCommentsCostsWhatJSONCosts(t *testing.T) {
	var plain, commented strings.Builder
	plain.WriteString(`{"Mcp": {"Servers": {`)
	commented.WriteString("// generated\n{\"Mcp\": {\"Servers\": {")
	for i := range 2000 {
		if i > 0 {
			plain.WriteString(",")
			commented.WriteString(",")
		}
		entry := fmt.Sprintf(`"s-%d": {"Command": "node", "Args": ["a", "b", "c"], "Env": {"A": "x", "B": null}, "N": %d`, i, i)
		plain.WriteString(entry + "}")
		commented.WriteString(entry + ", /* trailing */ }")
	}
	plain.WriteString("}}}")
	commented.WriteString("}}}\n")
	parse := func(data string) uint64 {
		return allocatedBytes(func() {
			if _, d := ParseJSON("f.json", []byte(data), true); d != nil {
				t.Fatal(d)
			}
		})
	}
	parse(plain.String()) // warm up
	json, jsonc := parse(plain.String()), parse(commented.String())
	// The blanked copy of the text is the only extra.
	if limit := json + uint64(commented.Len())*2; jsonc > limit {
		t.Errorf("JSONC with comments allocated %d KB, the same JSON %d KB", jsonc>>10, json>>10)
	}
}

// The nesting check skips a block comment without copying the rest of the
// file: converting the remaining text to a string at every comment is a
// quadratic cost.
func TestDeeperThanSkipsCommentsInPlace(t *testing.T) {
	data := []byte("[" + strings.Repeat(`1, /* c */ `, 20000) + "1]")
	var deep bool
	allocated := allocatedBytes(func() { _, deep = DeeperThan(data, true, MaxDepth) })
	if deep || allocated > 1<<10 {
		t.Errorf("DeeperThan: deep %v, allocated %d bytes", deep, allocated)
	}
}

// What encoding/json decodes a string literal to, unquote gives too; and a
// number no float64 holds is still refused in strict JSON, with
// encoding/json's words.
func TestParseJSONStringsAndNumbersAsEncodingJSON(t *testing.T) {
	for _, lit := range []string{`""`, `"abc"`, `"é€😀"`, `"a\"b"`, `"\u00e9\n\t\\\/"`, `"\ud83d\ude00"`, `"\ud800"`, `"\uFFFD"`, "\"\uFFFD\""} {
		src := `{` + lit + `: ` + lit + `}`
		n, d := ParseJSON("f.json", []byte(src), false)
		if d != nil {
			t.Fatalf("%s: %v", src, d)
		}
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatal(err)
		}
		if m := n.Members[0]; m.Key != want || m.Value.Text != want {
			t.Errorf("%s: key %q, value %q, want %q", lit, m.Key, m.Value.Text, want)
		}
	}
	for _, src := range []string{`{"a": 1E400}`, `{"a": [1, -1e309]}`} {
		_, d := ParseJSON("f.json", []byte(src), false)
		if d == nil || !strings.Contains(d.Message, "cannot unmarshal number") || d.Pos().String() != "f.json:1:"+fmt.Sprint(len(src)+1) {
			t.Errorf("%s: %+v", src, d)
		}
		if _, d := ParseJSON("f.json", []byte(src), true); d != nil {
			t.Errorf("%s as JSONC: %v", src, d)
		}
	}
}

// FuzzBuildMatchesHujson: for every valid JSON text, build gives the tree
// that hujson.Parse and convert give (keys, values, positions).
func FuzzBuildMatchesHujson(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-1.5e+3`, `true`, `null`,
		"// c\n{\n  \"a\": [1, \"é\", {\"b\": null}],\n  \"ü\": \"x\" \n}\n",
		`{"a": {"a": 1, "a": 2}, "b\u00e9\"": ["\ud83d\ude00", "x\\y", -0, 1E400]}`,
		" \t\r\n{ \"k\" :\n[ ] , \"l\":{ } }\n",
		`{"mcpServers": {"x": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": null}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		if _, deep := DeeperThan(data, false, MaxDepth); deep {
			return
		}
		ix := NewLineIndex("f.json", data)
		v, err := hujson.Parse(data)
		if err != nil {
			t.Fatalf("hujson refuses valid JSON %q: %v", data, err)
		}
		want := convert(ix, &v)
		got := build(ix, data)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: build and hujson differ", data)
		}
		// Packed and built again, the tree is the same (server trees
		// are held packed).
		if again := Pack(got).Unpack(); !reflect.DeepEqual(again, got) {
			t.Errorf("%q: Unpack(Pack(tree)) differs", data)
		}
	})
}

// FuzzJSONCBuildMatchesHujson: a JSONC text whose comments and trailing
// commas standardize blanks into valid JSON is one hujson accepts, and
// build gives the tree hujson.Parse and convert give (keys, values,
// positions, spans); hujson accepts nothing else that standardize leaves
// unchanged and invalid.
func FuzzJSONCBuildMatchesHujson(f *testing.F) {
	for _, s := range []string{
		"// c\n{\n  \"a\": [1, \"é\", {\"b\": null},],\n  \"ü\": \"x\", // é\n}\n",
		`{"a": 1, /* x, } */ }`, `[1,]`, `[,]`, `{,}`, `[1,,]`, `{"a":,}`, `[1 /* */ , /**/]`,
		"[1] // no newline", "[\"//\", \"/*\", \",]\"] /* \n */", `{"a" /**/ : /**/ 1,}`,
		"{\"k\": \"v\", // \u2028\n}\n", `[1,/* unclosed`, `{"a": [{},],}`, `"x"/**/`, `[tr/**/ue]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return
		}
		if _, deep := DeeperThan(data, true, MaxDepth); deep {
			return
		}
		ix := NewLineIndex("f.json", data)
		v, err := hujson.Parse(data)
		std, ok := standardize(data)
		if !ok || !json.Valid(std) {
			if err == nil && !json.Valid(data) {
				t.Fatalf("hujson accepts %q, standardize gives %q", data, std)
			}
			return
		}
		if len(std) != len(data) {
			t.Fatalf("%q: standardize changed the length", data)
		}
		if err != nil {
			t.Fatalf("%q standardizes to valid JSON %q, hujson refuses it: %v", data, std, err)
		}
		want := convert(ix, &v)
		if got := build(ix, std); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: build and hujson differ", data)
		}
	})
}

// A Node stays in the 96-byte size class and a Member within 40 bytes: a
// configuration keeps one per value and one per key of every source for its
// whole compilation.
func TestNodeSize(t *testing.T) {
	// 80 bytes of value (text, elements, members), a 16-byte Loc for its
	// position (an interned file name and 32-bit line and column), a word
	// for End and one shared by Kind, Bool, TextOffset and Start.
	if size := unsafe.Sizeof(Node{}); size > 96 {
		t.Errorf("a Node takes %d bytes", size)
	}
	if size := unsafe.Sizeof(Member{}); size > 40 {
		t.Errorf("a Member takes %d bytes", size)
	}
}

// A Loc gives back the position it was made of, the zero one included.
func TestLocRoundTrip(t *testing.T) {
	for _, p := range []diag.Pos{{}, {File: "a.json", Line: 1, Column: 1}, {File: "<environment>", Line: 70000, Column: 16 << 20}, {Line: 3, Column: 4}, {File: "x"}} {
		if got := LocOf(p).Pos(); got != p {
			t.Errorf("LocOf(%#v).Pos() = %#v", p, got)
		}
	}
	ix := NewLineIndex("f.json", []byte("{\n  \"é\": 1}"))
	for off := 0; off <= 12; off++ {
		if got, want := ix.Loc(off).Pos(), ix.Pos(off); got != want {
			t.Errorf("offset %d: Loc gives %v, Pos %v", off, got, want)
		}
	}
}

// Python's json reads NaN, Infinity, -Infinity and numbers no float64
// holds; a file whose reader is Python's (PythonNesting) has them as Number
// nodes with their literal, at their place. Other readers refuse them, and
// the same words inside strings are text.
func TestParsePythonConstants(t *testing.T) {
	data := []byte(`{"a": NaN, "b": [Infinity, -Infinity, 1e400], "NaN": "Infinity -Infinity NaN"}`)
	root, d := ParseJSONNesting("f.json", data, false, PythonNesting)
	if d != nil {
		t.Fatalf("Python's reader: %s", d.Message)
	}
	b := root.Get("b")
	got := []string{root.Get("a").Text, b.Elems[0].Text, b.Elems[1].Text, b.Elems[2].Text, root.Get("NaN").Text}
	want := []string{"NaN", "Infinity", "-Infinity", "1e400", "Infinity -Infinity NaN"}
	if !slices.Equal(got, want) {
		t.Errorf("texts %q, want %q", got, want)
	}
	if k := root.Get("a").Kind; k != Number {
		t.Errorf("NaN is a %s, want a number", k)
	}
	if p := b.Elems[1].Pos(); p.Line != 1 || p.Column != 28 {
		t.Errorf("-Infinity at %d:%d, want 1:28", p.Line, p.Column)
	}
	for _, nesting := range []Nesting{DotNetNesting, OwnNesting} {
		if _, d := ParseJSONNesting("f.json", data, false, nesting); d == nil {
			t.Errorf("a reader that is not Python's (max %d) read NaN", nesting.Max)
		}
	}
	if _, d := ParseJSONNesting("f.json", []byte(`{"a": NaNx}`), false, PythonNesting); d == nil {
		t.Error("NaNx read as a number")
	}
}
