package node

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// scratch is shared by every roundTrip of a test binary: UnpackInto must
// give each tree right whatever it built before.
var scratch Scratch

// roundTrip packs n and checks that Unpack and UnpackInto give it back
// field for field.
func roundTrip(t *testing.T, what string, n *Node) Packed {
	t.Helper()
	p := Pack(n)
	if got := p.Unpack(); !reflect.DeepEqual(got, n) {
		t.Fatalf("%s: Unpack(Pack(n)) differs from n", what)
	}
	if got := p.UnpackInto(&scratch); !reflect.DeepEqual(got, n) {
		t.Fatalf("%s: UnpackInto(Pack(n)) differs from n", what)
	}
	return p
}

// Every JSON and JSONC file of the fixtures round-trips.
func TestPackRoundTripsEveryFixture(t *testing.T) {
	count := 0
	err := filepath.WalkDir("../../fixtures", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, jsonc := range []bool{false, true} {
			if n, d := ParseJSON(path, data, jsonc); d == nil {
				roundTrip(t, path, n)
				count++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count < 50 {
		t.Fatalf("only %d files round-tripped", count)
	}
}

// What the parser does not make round-trips too: nil values and elements
// (a consumed tree), nil and empty slices told apart, positions in several
// files and none, positions going backwards, the extremes of 32 bits.
func TestPackRoundTripsWhatBindingMakes(t *testing.T) {
	a := LocOf(diag.Pos{File: "appsettings.json", Line: 40, Column: 7})
	env := LocOf(diag.Pos{File: "<environment>", Line: 3, Column: 1})
	tree := &Node{Kind: Object, Loc: a, Members: []Member{
		{Key: "Command", KeyLoc: env, Value: &Node{Kind: String, Text: "npx", TextOffset: 20, Loc: env.At(3, 22)}},
		{Key: "Args", KeyLoc: a.At(2, 1), Value: &Node{Kind: Array, Loc: a.At(1, 1), Elems: []*Node{
			{Kind: String, Text: "-y", Start: 100, End: 104},
			nil,
			{Kind: Number, Text: "-0.5e3", Start: 90, End: 96, Loc: a.At(math.MaxInt32, math.MinInt32)},
		}}},
		{Key: "Env", Value: &Node{Kind: Object, Members: []Member{}}},
		{Key: "Empty", Value: &Node{Kind: Array, Elems: []*Node{}}},
		{Key: "", Value: nil},
		{Key: "Enabled", KeyLoc: a, Value: &Node{Kind: Bool, Bool: true, Loc: a}},
		{Key: "Null", Value: &Node{Kind: Null, Start: math.MaxInt32, End: math.MaxInt32}},
		{Key: "ünïcode \x00 key", Value: &Node{Kind: String, Text: strings.Repeat("x", 300)}},
	}}
	roundTrip(t, "bound tree", tree)
	if p := Pack(nil); !p.IsZero() || p.Unpack() != nil {
		t.Fatal("Pack(nil) does not unpack to nil")
	}
	roundTrip(t, "scalar", &Node{Kind: String, Text: "s", Loc: env})
	var fresh Scratch
	roundTrip(t, "bound tree", tree)
	if got := Pack(tree).UnpackInto(&fresh); !reflect.DeepEqual(got, tree) {
		t.Fatal("UnpackInto a new Scratch differs")
	}
}

// UnpackInto allocates nothing once its Scratch has grown.
func TestUnpackIntoReusesItsScratch(t *testing.T) {
	root, d := ParseJSON("s.json", []byte(`{"a": {"command": "x", "args": ["1", "2"], "env": {"K": "v"}}, "b": {"args": []}}`), false)
	if d != nil {
		t.Fatal(d)
	}
	a, b := Pack(root.Get("a")), Pack(root.Get("b"))
	var s Scratch
	a.UnpackInto(&s)
	b.UnpackInto(&s)
	if n := testing.AllocsPerRun(100, func() {
		a.UnpackInto(&s)
		b.UnpackInto(&s)
	}); n > 0 {
		t.Errorf("UnpackInto allocated %v times per run", n)
	}
}

// A minified file of many servers: each server's tree packs into a fifth of
// what its Nodes and Members take, or less.
func TestPackIsSmall(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"user-` + strings.Repeat("9", 5) + `": {"command": "node", "args": ["server.js"], "env": {"DEBUG": null, "HOME_DIR": "${workspace}"}, "parallel": true, "callTimeoutSeconds": 300}`)
	}
	b.WriteString("}}")
	root, d := ParseJSON("settings.json", []byte(b.String()), false)
	if d != nil {
		t.Fatal(d)
	}
	packed, held := 0, 0
	for _, m := range root.Members[0].Value.Members {
		p := roundTrip(t, m.Key, m.Value)
		packed += len(p.data) + 16
		held += treeBytes(m.Value)
	}
	t.Logf("packed %d bytes, tree %d bytes", packed, held)
	if packed*5 > held {
		t.Errorf("packed %d bytes for trees of %d bytes: want at most a fifth", packed, held)
	}
}

// treeBytes is what the Nodes and Members under n take (their own size,
// not their strings').
func treeBytes(n *Node) int {
	if n == nil {
		return 0
	}
	size := int(reflect.TypeFor[Node]().Size()) + 8*cap(n.Elems) + int(reflect.TypeFor[Member]().Size())*cap(n.Members)
	for _, el := range n.Elems {
		size += treeBytes(el)
	}
	for _, m := range n.Members {
		size += treeBytes(m.Value)
	}
	return size
}

// Every value of every fixture is built again from its Source as parsing
// built it, Node for Node: JSON, and JSONC with comments blanked.
func TestSourceBuildsEveryValueAgain(t *testing.T) {
	count := 0
	err := filepath.WalkDir("../../fixtures", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, jsonc := range []bool{false, true} {
			root, src, d := ParseJSONSource(path, data, jsonc)
			if d != nil || src == nil {
				continue
			}
			var walk func(n *Node)
			walk = func(n *Node) {
				if got := src.Build(n.Start); !reflect.DeepEqual(got, n) {
					t.Fatalf("%s: the value at byte %d built again differs", path, n.Start)
				}
				count++
				for _, el := range n.Elems {
					walk(el)
				}
				for _, m := range n.Members {
					walk(m.Value)
				}
			}
			walk(root)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	jsonc := []byte("{\n  // servers\n  \"a\": {\"b\": [1, 2,], /* c */ \"d\": \"e\",},\n}")
	root, src, d := ParseJSONSource("x.json", jsonc, true)
	if d != nil || src == nil {
		t.Fatalf("JSONC: %v %v", d, src)
	}
	a := root.Get("a")
	if got := src.Build(a.Start); !reflect.DeepEqual(got, a) {
		t.Fatal("a JSONC value built again differs")
	}
	if count < 1000 {
		t.Fatalf("only %d values built again", count)
	}
}

// ParseJSONShallow gives the tree ParseJSON gives but for the objects
// under the path, which are leaves with the position and span of the
// object, and which Source.Build builds as ParseJSON did.
func TestParseJSONShallowLeavesObjectsUnderThePath(t *testing.T) {
	docs := map[string]string{
		"settings":   `{"permissions": {"allow": [{"x": 1}]}, "mcpServers": {"a": {"command": "x", "env": {"K": "v"}}, "s": "str", "l": [{"n": 1}], "b": {"args": [[], {}], "q": "}{\"]"}}, "other": {"mcpServers": {"c": {}}}}`,
		"not object": `{"mcpServers": [{"a": 1}]}`,
		"nested":     "{\n \"mcpServers\" : {\n  \"a\" :\n   {\"x\": {\"y\": [1, -2.5e3, true, null]}}\n }\n}",
	}
	for name, doc := range docs {
		for _, comments := range []bool{false, true} {
			want, d := ParseJSON(name, []byte(doc), comments)
			if d != nil {
				t.Fatal(d)
			}
			got, src, d := ParseJSONShallow(name, []byte(doc), comments, []string{"mcpServers"}, false, OwnNesting)
			if d != nil || src == nil {
				t.Fatalf("%s: %v", name, d)
			}
			servers := want.Get("mcpServers")
			for i := range servers.Members {
				full := servers.Members[i].Value
				leaf := got.Get("mcpServers").Members[i].Value
				if full.Kind != Object {
					continue
				}
				if stub := (&Node{Kind: Object, Loc: full.Loc, Start: full.Start, End: full.End}); !reflect.DeepEqual(leaf, stub) {
					t.Fatalf("%s: %s is %+v, want a leaf %+v", name, servers.Members[i].Key, leaf, stub)
				}
				if built := src.Build(leaf.Start); !reflect.DeepEqual(built, full) {
					t.Fatalf("%s: %s built again differs", name, servers.Members[i].Key)
				}
				got.Get("mcpServers").Members[i].Value = full
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: the rest of the tree differs", name)
			}
		}
	}
	// With fold the keys of the path match in any case; without, exactly.
	doc := []byte(`{"MCP": {"servers": {"a": {"Command": "x"}}}}`)
	folded, _, _ := ParseJSONShallow("a.json", doc, true, []string{"Mcp", "Servers"}, true, OwnNesting)
	if a := folded.Get("MCP").Get("servers").Get("a"); a.Members != nil {
		t.Errorf("with fold, a is built: %+v", a)
	}
	exact, _, _ := ParseJSONShallow("a.json", doc, true, []string{"Mcp", "Servers"}, false, OwnNesting)
	if a := exact.Get("MCP").Get("servers").Get("a"); a.Get("Command") == nil {
		t.Errorf("without fold, a is not built: %+v", a)
	}
	// A number no float64 holds is an error of strict JSON, built or not.
	for _, doc := range []string{`{"mcpServers": {"a": {"x": [1e999]}}}`, `{"mcpServers": {"a": {"x": -1E400}}}`} {
		_, want := ParseJSON("s.json", []byte(doc), false)
		_, _, got := ParseJSONShallow("s.json", []byte(doc), false, []string{"mcpServers"}, false, OwnNesting)
		if want == nil || got == nil || *got != *want {
			t.Errorf("%s: %v, want %v", doc, got, want)
		}
	}
}
