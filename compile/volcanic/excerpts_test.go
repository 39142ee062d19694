package volcanic

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/internal/report"
)

// wholeLines is a FileSet without the window: every line of the inputs
// redacted whole.
type wholeLines struct {
	files    map[string][]byte
	redactor *redact.Redactor
}

func (w wholeLines) Line(file string, n, col int) (string, int, bool) {
	lines := strings.Split(string(w.files[file]), "\n")
	if n < 1 || n > len(lines) {
		return "", 0, false
	}
	return w.redactor.RedactAt(lines[n-1], col)
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
	res, err := compile.Compile(compile.Options{CleanEnv: true, Env: []string{"GITHUB_TOKEN=" + secret}, AgentDir: "agent", ReadFile: fakeFS(files)})
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
	got, want := print(res.Files), print(wholeLines{files, res.Redactor})
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
		res, err := compile.Compile(compile.Options{CleanEnv: true, AgentDir: "agent", ReadFile: fakeFS(files)})
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
