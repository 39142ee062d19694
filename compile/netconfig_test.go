package compile

import (
	"reflect"
	"testing"
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
	} {
		v, ok := parseDotnetBool(in)
		if v != want[0] || ok != want[1] {
			t.Errorf("parseDotnetBool(%q) = %v, %v; want %v", in, v, ok, want)
		}
	}
}

func TestParseDotenv(t *testing.T) {
	src := "# comment\n\nA=1\nexport B = two words  \nC='lit $x \\n'\nD=\"q \\\"x\\\" \\n\" # note\nE=\n"
	vars, ds, _ := parseDotenv("h.env", []byte(src), nil)
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	got := map[string]string{}
	for _, v := range vars {
		got[v.Name] = v.Value
	}
	want := map[string]string{"A": "1", "B": "two words", "C": `lit $x \n`, "D": "q \"x\" \n", "E": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if vars[1].Pos.Line != 4 || vars[1].Pos.Column != 8 || vars[1].ValuePos.Column != 12 {
		t.Errorf("B at %v, value at %v", vars[1].Pos, vars[1].ValuePos)
	}
}

func TestParseDotenvErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"JUSTAKEY\n", "h.env:1:1"},
		{"A=\"open\n", "h.env:1:3"},
		{"  B='x\n", "h.env:1:5"},
		{"C=\"x\" y\n", "h.env:1:7"},
		{"=v\n", "h.env:1:1"},
	} {
		_, ds, _ := parseDotenv("h.env", []byte(c.src), nil)
		if len(ds) != 1 || ds[0].Pos().String() != c.want || ds[0].Rule != RuleEnvFileSyntax {
			t.Errorf("%q: got %v, want one env-file-syntax at %s", c.src, ds, c.want)
		}
	}
}

func TestTemplates(t *testing.T) {
	refs := scanTemplates("${workspace}/x ${env:A_1} ${home} ${env:} ${x")
	kinds := []int{}
	for _, r := range refs {
		kinds = append(kinds, r.kind)
	}
	if want := []int{tmplWorkspace, tmplEnv, tmplUnknown, tmplEnv, tmplUnterminated}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	got := ResolveTemplates("${workspace}/é${env:T}-${nope}", "/w", func(n string) string { return "<" + n + ">" })
	if got != "/w/é<T>-${nope}" {
		t.Errorf("resolved %q", got)
	}
}

func TestRedactorJSONForm(t *testing.T) {
	r := NewRedactor([]string{`se"cret\x`, "abc", "long-secret-1", "secret-1"})
	if got := r.Redact(`a se"cret\x b`); got != "a [REDACTED] b" {
		t.Errorf("raw form: %q", got)
	}
	if got := r.Redact(`{"v":"se\"cret\\x"}`); got != `{"v":"[REDACTED]"}` {
		t.Errorf("JSON form: %q", got)
	}
	if got := r.Redact("abc long-secret-1"); got != "abc [REDACTED]" {
		t.Errorf("short values stay, longest wins: %q", got)
	}
}
