package compile

import (
	"strings"
	"testing"
	"unicode/utf8"
)

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

// The redactor of a craftbot compile knows an env value only when the file
// also shows it outside env (excerpts hide env values by span, messages
// quote only what stands elsewhere): a catalog of many credentials must not
// make every message pay for each of them.
func TestCraftbotRedactorKnowsOnlyShownEnvValues(t *testing.T) {
	const token = "tok-0123456789abcdef-CANARY"
	compileConfig := func(cfg string) *Result {
		t.Helper()
		res, err := Compile(Options{Profile: ProfileCraftbot, CleanEnv: true, Config: "mcp_config.json",
			ReadFile: func(string) ([]byte, error) { return []byte(cfg), nil }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	inEnvOnly := compileConfig(`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "npx", "env": {"A_TOKEN": "` + token + `"}}]}`)
	if !inEnvOnly.Redactor.Empty() || inEnvOnly.Plan == nil {
		t.Errorf("an env value seen nowhere else is a message secret (or no plan): %v", inEnvOnly.Diagnostics)
	}
	copied := compileConfig(`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "npx", "args": ["--token=` + token + `"], "env": {"A_TOKEN": "` + token + `"}}]}`)
	if copied.Redactor.Redact("x "+token) != "x [REDACTED]" || copied.Plan != nil {
		t.Errorf("an env value copied into args is not a known secret, or it got a plan: %v", copied.Diagnostics)
	}
	if len(copied.Diagnostics) != 1 || copied.Diagnostics[0].Rule != "secret-literal" || strings.Contains(copied.Diagnostics[0].Message, token) {
		t.Errorf("diagnostics %+v", copied.Diagnostics)
	}
}
