package compile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/report"
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
