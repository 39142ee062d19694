package compile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/internal/report"
)

// wholeLines is FileSet without the window: every line redacted whole.
type wholeLines struct{ fs *FileSet }

func (w wholeLines) Line(file string, n, col int) (string, int, bool) {
	raw, ok := w.fs.files[file].Line(n)
	if !ok {
		return "", 0, false
	}
	return w.fs.redactor.RedactAt(raw, col)
}

// On a long line FileSet redacts only the window an excerpt can show; the
// report is byte for byte the one of a line redacted whole, secrets near
// the caret and far from it included.
func TestLongLineWindowKeepsTheReport(t *testing.T) {
	const secret = "tok-window-5b7d91"
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := 0; i < 400; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		// A unicode description, a secret in every value, an unknown field.
		fmt.Fprintf(&b, `"s%03d": {"command": "node", "args": ["é€😀 %s"], "comand": "x"}`, i, secret)
	}
	b.WriteString("}}")
	files := map[string][]byte{"agent/settings.json": []byte(b.String())}
	res, err := Compile(Options{CleanEnv: true, Env: []string{"GITHUB_TOKEN=" + secret}, AgentDir: "agent", ReadFile: fakeFS(files)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) < 800 {
		t.Fatalf("%d diagnostics", len(res.Diagnostics))
	}
	print := func(src interface {
		Line(string, int, int) (string, int, bool)
	}) string {
		p, _ := report.New("text", report.Options{Sources: src})
		var out bytes.Buffer
		if err := p.Print(&out, res.Diagnostics); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	got, want := print(res.Files), print(wholeLines{res.Files})
	if got != want {
		t.Errorf("the windowed report differs")
	}
	if strings.Contains(got, secret) || !strings.Contains(got, "[REDACTED]") || !strings.Contains(got, "...") {
		t.Errorf("report:\n%.2000s", got)
	}
}

// A key repeated in an object of settings.json is reported at the repeat,
// naming the first, in a small object (its keys scanned) as in a large one
// (its keys in a map).
func TestSettingsDuplicateKeysSmallAndLarge(t *testing.T) {
	for _, n := range []int{3, 40} {
		var b strings.Builder
		b.WriteString(`{"mcpServers": {`)
		for i := range n {
			fmt.Fprintf(&b, `"s%d": {"command": "x", "command": "y"}, `, i)
		}
		b.WriteString(`"s1": {"command": "z"}}}`)
		files := map[string][]byte{"agent/settings.json": []byte(b.String())}
		res, err := Compile(Options{CleanEnv: true, AgentDir: "agent", ReadFile: fakeFS(files)})
		if err != nil {
			t.Fatal(err)
		}
		var dups []string
		for _, d := range res.Diagnostics {
			if d.Rule == "duplicate-key" {
				dups = append(dups, fmt.Sprintf("%d:%d %s", d.Line, d.Column, d.Suggestion))
			}
		}
		if len(dups) != n+1 {
			t.Fatalf("%d servers: %d duplicate-key diagnostics: %v", n, len(dups), dups)
		}
		// The repeated server name: the first s1 is the second member.
		first := strings.Index(b.String(), `"s1"`) + 1
		last := strings.LastIndex(b.String(), `"s1"`) + 1
		want := fmt.Sprintf("1:%d remove one of them; the first is at agent/settings.json:1:%d", last, first)
		if dups[len(dups)-1] != want {
			t.Errorf("%d servers: %q, want %q", n, dups[len(dups)-1], want)
		}
	}
}

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
