package volcanic

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

func TestSortKeysFollowsConfigurationKeyComparer(t *testing.T) {
	got := []string{"a_x", "Zeta", "10", "ab", "9", "B", "-1", "01", "1", "é", "Ä", "99999999999"}
	sortKeys(got, func(s string) string { return s })
	// Integers first, numerically ("01" and "1" tie and keep ordinal order);
	// then OrdinalIgnoreCase: upper-cased UTF-16 units, so AB < A_X (B=0x42
	// < _=0x5F), Ä (0xC4) < É (0xC9); a number too big for Int32 is a name.
	want := []string{"-1", "01", "1", "9", "10", "99999999999", "ab", "a_x", "B", "Zeta", "Ä", "é"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestParseDotnetInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"60", 60, true}, {" 60 ", 60, true}, {"+7", 7, true}, {"-3", -3, true},
		{"2147483647", 2147483647, true}, {"-2147483648", -2147483648, true},
		{"2147483648", 0, false}, {"1.0", 0, false}, {"1e3", 0, false}, {"", 0, false},
		{"0x10", 0, false}, {"60s", 0, false}, {"+", 0, false}, {"1 000", 0, false},
		// Trailing NULs are ignored (after white space), leading ones not.
		{"60\x00", 60, true}, {"60 \x00\x00", 60, true}, {"\x0060", 0, false}, {"60\x00 ", 0, false},
		// Only NumberStyles' white space (TAB to CR, space), not NBSP.
		{"\u00a060", 0, false}, {"- 5", 0, false},
	} {
		got, ok := parseDotnetInt(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseDotnetInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParseDotnetBool(t *testing.T) {
	for in, want := range map[string][2]bool{
		"true": {true, true}, "False": {false, true}, " TRUE ": {true, true},
		"1": {false, false}, "yes": {false, false}, "": {false, false},
		"\x00 true\u00a0\x00": {true, true}, "tRuE": {true, true},
		// .NET folds ASCII letters only: ſ (long s) is not s.
		"falſe": {false, false}, "FALſE": {false, false},
	} {
		v, ok := parseDotnetBool(in)
		if v != want[0] || ok != want[1] {
			t.Errorf("parseDotnetBool(%q) = %v, %v; want %v", in, v, ok, want)
		}
	}
}

// TestConvertDotnetInt32 pins Int32Converter.ConvertFromInvariantString,
// what the binder uses for an int setting; docs/decisions/0005-volcanic-checks.md has the table.
func TestConvertDotnetInt32(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		// Decimal: String.Trim (every Unicode white space), then int.Parse
		// with NumberStyles.Integer.
		{"60", 60, true}, {" 60 ", 60, true}, {"\t60\n", 60, true}, {"\u00a060\u3000", 60, true},
		{"+5", 5, true}, {"-5", -5, true}, {"- 5", 0, false}, {"+-5", 0, false}, {"5-", 0, false},
		{"007", 7, true}, {"2147483647", 2147483647, true}, {"-2147483648", -2147483648, true},
		{"2147483648", 0, false}, {"-2147483649", 0, false},
		{"1,000", 0, false}, {"1 000", 0, false}, {"1_000", 0, false}, {"1.0", 0, false}, {"1e3", 0, false},
		{"(5)", 0, false}, {"60s", 0, false}, {"０", 0, false}, {"٣", 0, false},
		{"60\x00", 60, true}, {"\x0060", 0, false},
		{"", 0, false}, {"   ", 0, false}, {"+", 0, false},
		// Hexadecimal after #, 0x, 0X, &h, &H (Convert.ToInt32(s, 16)).
		{"0x10", 16, true}, {"0X10", 16, true}, {"#10", 16, true}, {"&h10", 16, true}, {"&H10", 16, true},
		{"0xff", 255, true}, {"0xFf", 255, true}, {" 0x10 ", 16, true}, {"\u00a0#10\u00a0", 16, true},
		{"0x7FFFFFFF", 2147483647, true}, {"0x80000000", -2147483648, true}, {"0xFFFFFFFF", -1, true},
		{"0x000000010", 16, true}, {"0x100000000", 0, false},
		{"0x+10", 16, true}, {"0x0x10", 16, true}, {"#0X10", 16, true}, {"&h+0x10", 16, true},
		{"0x-10", 0, false}, {"-0x10", 0, false}, {"+0x10", 0, false}, {"+#10", 0, false},
		{"0x", 0, false}, {"#", 0, false}, {"&h", 0, false}, {"0x+", 0, false}, {"0x0x", 0, false},
		{"0x 10", 0, false}, {"0x10\x00", 0, false}, {"0xG", 0, false}, {"0x1.0", 0, false},
		{"&x10", 0, false}, {"0b101", 0, false}, {"x10", 0, false}, {"h10", 0, false},
	} {
		got, ok := convertDotnetInt32(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("convertDotnetInt32(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// foldASCII folds as foldKey does, on the stack, for the keys it takes.
func TestFoldASCIIFoldsAsFoldKey(t *testing.T) {
	var buf [64]byte
	for _, k := range []string{"", "Mcp", "SERVERS", "host-000001", "a_b-c:9", "Ab@[`{~\x7f", strings.Repeat("x", 64)} {
		got, ok := foldASCII(buf[:0], k)
		if !ok || string(got) != foldKey(k) {
			t.Errorf("foldASCII(%q) = %q, %v; foldKey %q", k, got, ok, foldKey(k))
		}
	}
	for _, k := range []string{"é", "straße", strings.Repeat("x", 65)} {
		if _, ok := foldASCII(buf[:0], k); ok {
			t.Errorf("foldASCII(%q) took a key it must leave to foldKey", k)
		}
	}
}

// A node finds its children case-insensitively, whether it scans them or,
// past maxScannedChildren, indexes them in a map; each key is one child.
func TestCfgNodeChildFindsKeysInAnyCase(t *testing.T) {
	n := newCfgNode("")
	var made []*cfgNode
	for i := range 3 * maxScannedChildren {
		made = append(made, n.child(fmt.Sprintf("Key-%dé", i), true))
		for j, m := range made {
			for _, k := range []string{fmt.Sprintf("key-%dé", j), fmt.Sprintf("KEY-%dÉ", j)} {
				if got := n.child(k, false); got != m {
					t.Fatalf("with %d children, %q found %v, want the child %q", len(made), k, got, m.key)
				}
			}
		}
	}
	if len(n.order) != 3*maxScannedChildren || n.child("other", false) != nil {
		t.Errorf("%d children, or an unknown key found", len(n.order))
	}
}

// varAtLine finds the variable whose entry starts a line of a host
// environment layer, the last layer of the file that has one when the file
// is read twice, and
// nothing at an indented entry, on an empty line or in another file.
func TestVarAtLine(t *testing.T) {
	// h.env read twice, once with each text.
	texts := [][]byte{[]byte("X=1\n\n  Y=2\nZ=3\n"), []byte("W=1\n")}
	read := func(string) ([]byte, error) {
		text := texts[0]
		texts = texts[1:]
		return text, nil
	}
	env, _, _, err := compile.LoadHostEnv(compile.HostEnvOptions{CleanEnv: true, EnvFiles: []string{"h.env", "h.env"}, ReadFile: read,
		Env: []string{"A=1", "oops", "B=2"}})
	if err != nil {
		t.Fatal(err)
	}
	c := &compiler{res: &compile.Result{Env: env}}
	for _, tc := range []struct {
		pos  diag.Pos
		want string
	}{
		{diag.Pos{File: compile.EnvFlagFile, Line: 1, Column: 3}, "A"},
		{diag.Pos{File: compile.EnvFlagFile, Line: 2, Column: 1}, ""},
		{diag.Pos{File: compile.EnvFlagFile, Line: 3, Column: 1}, "B"},
		{diag.Pos{File: compile.EnvFlagFile, Line: 4, Column: 1}, ""},
		{diag.Pos{File: "h.env", Line: 1, Column: 5}, "W"},
		{diag.Pos{File: "h.env", Line: 3, Column: 3}, ""},
		{diag.Pos{File: "h.env", Line: 4, Column: 1}, "Z"},
		{diag.Pos{File: "appsettings.json", Line: 1, Column: 1}, ""},
	} {
		if got := c.varAtLine(tc.pos); got != tc.want {
			t.Errorf("varAtLine(%v) = %q, want %q", tc.pos, got, tc.want)
		}
	}
}

// An object written twice in one appsettings file (keys compared
// case-insensitively) is one duplicate-key finding at the later key,
// listing the keys both set; a scalar written twice is one finding; an
// object written twice with no key in common is merged, as .NET does.
func TestAppSettingsDuplicateObjectIsOneFinding(t *testing.T) {
	for _, c := range []struct {
		name, json string
		want       []string
	}{
		{"a server written twice",
			`{"Mcp": {"Servers": {"github": {"Command": "npx", "Args": ["-y", "x"]}, "GitHub": {"Command": "node", "Args": ["y"]}}}}`,
			[]string{`1:73 the object Mcp:Servers:GitHub is written twice in this file (keys are case-insensitive), so its keys Command, Args:0 are set twice; the host refuses to start | merge them into one or remove one; the other is at a.json:1:22`}},
		{"a nested object written twice",
			`{"Mcp": {"Servers": {"s": {"Command": "x", "Env": {"A": "1", "B": "2"}, "ENV": {"b": "3", "a": "4", "C": "5"}}}}}`,
			[]string{`1:73 the object Mcp:Servers:s:ENV is written twice in this file (keys are case-insensitive), so its keys b, a are set twice; the host refuses to start | merge them into one or remove one; the other is at a.json:1:44`}},
		{"a scalar written twice",
			`{"Mcp": {"Servers": {"s": {"Command": "x", "command": "y"}}}}`,
			[]string{`1:44 the key Mcp:Servers:s:command is set twice in this file (keys are case-insensitive); the host refuses to start | remove one of them; the other is at a.json:1:28`}},
		{"an object written twice without a common key", `{"Mcp": {"Servers": {"s": {"Command": "x", "Env": {"A": "1"}, "env": {"B": "2"}}}}}`, nil},
		{"a section written twice over two servers",
			`{"Mcp": {"Servers": {"a": {"Command": "x"}, "b": {"Command": "y"}}}, "mcp": {"servers": {"A": {"Command": "z"}, "B": {"Args": ["1"], "command": "w"}}}}`,
			[]string{`1:70 the object mcp is written twice in this file (keys are case-insensitive), so its keys servers:A:Command, servers:B:command are set twice; the host refuses to start | merge them into one or remove one; the other is at a.json:1:2`}},
		{"a server written twice among many (their keys in a map)",
			`{"Mcp": {"Servers": {` + joinServers(20) + `, "S3": {"command": "y"}}}}`,
			[]string{`1:512 the object Mcp:Servers:S3 is written twice in this file (keys are case-insensitive), so its key command is set twice; the host refuses to start | merge them into one or remove one; the other is at a.json:1:94`}},
		{"a key with levels and an object",
			`{"Mcp:Servers:s:Command": "x", "Mcp": {"Servers": {"s": {"Command": "y"}}}}`,
			[]string{`1:32 the object Mcp is written twice in this file (keys are case-insensitive), so its key Servers:s:Command is set twice; the host refuses to start | merge them into one or remove one; the other is at a.json:1:2`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string][]byte{"a.json": []byte(c.json)}
			res, err := compile.Compile(compile.Options{CleanEnv: true, AgentDir: "agent", AppSettings: []string{"a.json"}, ReadFile: fakeFS(files)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range res.Diagnostics {
				if d.Rule == "duplicate-key" {
					got = append(got, fmt.Sprintf("%d:%d %s | %s", d.Line, d.Column, d.Message, d.Suggestion))
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// joinServers is n servers s0, s1, … of appsettings.
func joinServers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"s%d": {"Command": "x"}`, i)
	}
	return b.String()
}

// An object written many times costs what its bytes cost: each copy is one
// finding, whether the object is large (its keys in a map) or not.
func TestAppSettingsObjectWrittenManyTimesCostsItsBytes(t *testing.T) {
	if testservers.RaceEnabled() {
		t.Skip("the race detector changes allocations")
	}
	for _, s := range []struct {
		name string
		json func(n int) string
	}{
		{"a server", func(n int) string {
			return `{"Mcp": {"Servers": {` + strings.Repeat(`"s": {"Command": "x", "Args": ["a", "b"]}, `, n) + `"t": {"Command": "y"}}}}`
		}},
		{"a section", func(n int) string {
			return `{` + strings.Repeat(`"Mcp": {"Servers": {"s": {"Command": "x"}}}, `, n) + `"Other": 1}`
		}},
	} {
		compileAt := func(n int) (uint64, int) {
			files := map[string][]byte{"a.json": []byte(s.json(n))}
			var res *compile.Result
			allocated := testservers.AllocatedBytes(func() {
				var err error
				if res, err = compile.Compile(compile.Options{CleanEnv: true, AgentDir: "agent", AppSettings: []string{"a.json"}, ReadFile: fakeFS(files)}); err != nil {
					t.Fatal(err)
				}
			})
			dups := 0
			for _, d := range res.Diagnostics {
				if d.Rule == "duplicate-key" {
					dups++
				}
			}
			if dups != n-1 {
				t.Fatalf("%s written %d times: %d duplicate-key findings", s.name, n, dups)
			}
			return allocated, inputBytes(files)
		}
		compileAt(10)
		a1, b1 := compileAt(2000)
		a2, b2 := compileAt(4000)
		perByte := float64(a2-min(a1, a2)) / float64(b2-b1)
		t.Logf("%s: %d bytes allocated for 2000 copies, %d for 4000: %.1f per added byte", s.name, a1, a2, perByte)
		if perByte > 200 {
			t.Errorf("%s: %.1f bytes allocated per added byte, want at most 200", s.name, perByte)
		}
	}
}
