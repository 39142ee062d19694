package schema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// linearShapes are values that made Check quadratic, each for n: an entry
// with n bad env values (settings.json, mcp_config.json), an env value
// that is an object of n keys, n unknown fields (each with its
// did-you-mean), n bad list elements, a value nested n levels below an
// unknown field (a host variable Mcp__:a:a:… binds so), and n repeated
// keys below an unknown field.
var linearShapes = []struct {
	name, def string
	value     func(n int) *node.Node
	diags     func(n int) int
}{
	{"bad env values", Server, func(n int) *node.Node {
		return entry(`"command": "x", "env": {` + repeat(n, `"K%[1]d": %[1]d`) + `}`)
	}, func(n int) int { return n }},
	{"bad env values, craftbot", CraftbotServer, func(n int) *node.Node {
		return entry(`"name": "s", "transport": "stdio", "command": "x", "env": {` + repeat(n, `"K%[1]d": %[1]d`) + `}`)
	}, func(n int) int { return n }},
	{"an env value of n keys", Server, func(n int) *node.Node {
		return entry(`"command": "x", "env": {"X": {` + repeat(n, `"k%[1]d": "v%[1]d"`) + `}}`)
	}, func(int) int { return 1 }},
	{"unknown fields", Server, func(n int) *node.Node {
		return entry(`"command": "x", ` + repeat(n, `"comand%[1]d": %[1]d`))
	}, func(n int) int { return n }},
	{"bad args", Server, func(n int) *node.Node {
		return entry(`"command": "x", "args": [` + repeat(n, `%[1]d`) + `]`)
	}, func(n int) int { return n }},
	{"deep below an unknown field", Mcp, func(n int) *node.Node {
		v := &node.Node{Kind: node.String, Text: "x"}
		for range n {
			v = &node.Node{Kind: node.Object, Members: []node.Member{{Key: "a", Value: v}}}
		}
		return &node.Node{Kind: node.Object, Members: []node.Member{{Key: "", Value: v}}}
	}, func(int) int { return 1 }},
	{"a key repeated n levels below an unknown field", Server, func(n int) *node.Node {
		return entry(`"command": "x", "extra": ` + strings.Repeat("[", n) + `{"a": 1, "a": "1"}` + strings.Repeat("]", n))
	}, func(int) int { return 2 }},
	{"repeated keys below an unknown field", Server, func(n int) *node.Node {
		return entry(`"command": "x", "extra": {` + repeat(n, `"k%[1]d": 1, "k%[1]d": "%[1]d"`) + `}`)
	}, func(n int) int { return n + 1 }},
}

func entry(members string) *node.Node {
	n, d := node.ParseJSONNesting("x.json", []byte("{"+members+"}"), false, node.PythonNesting)
	if d != nil {
		panic(d.Message)
	}
	return n
}

// repeat joins n copies of format, each given its index (%[1]d).
func repeat(n int, format string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(format, i)
	}
	return strings.Join(parts, ", ")
}

// Check's work grows with its input, not faster: what it hands CUE
// (counted as the square of the nodes of each value, as CUE's cost grows),
// what its look-ups by path compare, and what it allocates. One CUE evaluation of a whole
// entry of many bad env values grew with the square of their number; a
// diagnostic per value, each looking its value up from the root, was
// quadratic too. The work for 2n
// must be about twice the work for n, and at most a few units per value.
func TestCheckWorkIsLinear(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	for _, s := range linearShapes {
		work := func(n int) (int64, uint64) {
			data := s.value(n)
			checkWork.cue.Store(0)
			checkWork.scanned.Store(0)
			var ds []diag.Diagnostic
			allocated := testservers.AllocatedBytes(func() { ds = v.Check(s.def, data, "", nil) })
			if len(ds) != s.diags(n) {
				t.Fatalf("%s: %d diagnostics for n=%d, want %d: %v", s.name, len(ds), n, s.diags(n), ds[:min(len(ds), 3)])
			}
			return checkWork.cue.Load() + checkWork.scanned.Load(), allocated
		}
		work(n) // CUE's caches warm
		w1, a1 := work(n)
		w2, a2 := work(2 * n)
		t.Logf("%s: work %d and %d bytes for n=%d, %d and %d bytes for 2n", s.name, w1, a1, n, w2, a2)
		if w2 > 2*w1+64 || w2 > 8*2*n {
			t.Errorf("%s: work %d for n=%d, %d for 2n: want about twice, at most %d", s.name, w1, n, w2, 8*2*n)
		}
		// What it allocates grows as its input does: a path copied at each
		// level of a deep value grew with the square of the depth.
		if !testservers.RaceEnabled() && a2 > 3*a1 {
			t.Errorf("%s: %d bytes allocated for n=%d, %d for 2n: want about twice", s.name, a1, n, a2)
		}
	}
}

// A did-you-mean for a key of a megabyte compares it with no field name:
// the edit distance is at least the difference in length, far over the
// limit, and computing it cost the key's length times each name's (its
// runes copied for each of them).
func TestClosestOfALongKeyComparesNoField(t *testing.T) {
	key := strings.Repeat("comand", 1<<20/6)
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	fields := v.Fields(Server)
	var got string
	allocated := testservers.AllocatedBytes(func() { got = closest(key, fields) })
	if got != "" {
		t.Errorf("closest gave %q", got)
	}
	// strings.ToLower's copy of the key, and nothing per field.
	if allocated > 2*uint64(len(key)) {
		t.Errorf("closest allocated %d bytes for a %d-byte key", allocated, len(key))
	}
	// The near ones are still found, prefixes too.
	for s, want := range map[string]string{"comand": "command", "COMMAN": "command", "stderrLvl": "stderrLevel", "tool": "toolPrefix", "envv": "env"} {
		if got := closest(s, fields); got != want {
			t.Errorf("closest(%q) = %q, want %q", s, got, want)
		}
	}
}
