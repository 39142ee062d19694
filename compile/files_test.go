package compile

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/redact"
)

// A pseudo-file shows each variable on the line of its entry, an entry that
// was not a variable as an empty line, and a secret variable's value
// redacted.
func TestPseudoFileLines(t *testing.T) {
	vars, ds := entryVars(EnvFlagFile, "env", []string{"A=1", "not a variable", "API_TOKEN=s3cret-value", "B=é=2"})
	if len(ds) != 1 {
		t.Fatalf("diagnostics: %v", ds)
	}
	f := envLines(vars, func(name string) bool { return name == "API_TOKEN" })
	want := map[int]string{1: "A=1", 2: "", 3: "API_TOKEN=" + redact.Redacted, 4: "B=é=2"}
	for n := 0; n <= 5; n++ {
		line, ok := want[n]
		if f.has(n) != ok {
			t.Errorf("has(%d) = %v", n, !ok)
			continue
		}
		if ok && f.line(n) != line {
			t.Errorf("line %d = %q, want %q", n, f.line(n), line)
		}
	}
	if (pseudoFile{}).has(1) {
		t.Error("an empty layer has a line")
	}
}

// hideSpans replaces each hidden byte span of a line (or of a window cut
// out of it) with [REDACTED] and keeps the caret on the same character; a
// caret inside a hidden value moves to its start.
func TestHideSpans(t *testing.T) {
	line := `{"é": "abc", "K": "sécret", "x": 1}`
	at := func(s string) span { i := strings.Index(line, s); return span{i, i + len(s)} }
	spans := []span{at("abc"), at("sécret")}
	col := func(s, sub string) int { return utf8.RuneCountInString(s[:strings.Index(s, sub)]) + 1 }
	for _, c := range []struct {
		caretAt, wantAt string
	}{
		{`"é"`, `"é"`},
		{`bc"`, `[REDACTED]", "K"`},
		{`, "K"`, `, "K"`},
		{`cret`, `[REDACTED]", "x"`},
		{`"x"`, `"x"`},
		{`}`, `}`},
	} {
		got, gotCol := hideSpans(line, 0, col(line, c.caretAt), spans)
		if want := `{"é": "[REDACTED]", "K": "[REDACTED]", "x": 1}`; got != want {
			t.Fatalf("text %q, want %q", got, want)
		}
		if w := col(got, c.wantAt); gotCol != w {
			t.Errorf("caret at %q: column %d, want %d (%q)", c.caretAt, gotCol, w, c.wantAt)
		}
	}
	// A window that starts inside a hidden value hides the part it shows.
	base := strings.Index(line, "écret")
	got, _ := hideSpans(line[base:], base, 1, spans)
	if want := `[REDACTED]", "x": 1}`; got != want {
		t.Errorf("window: %q, want %q", got, want)
	}
	// No span on the text: unchanged.
	if got, c := hideSpans(`"x": 1}`, len(line), 3, spans); got != `"x": 1}` || c != 3 {
		t.Errorf("no span: %q %d", got, c)
	}
}
