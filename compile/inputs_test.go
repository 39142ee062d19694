package compile

import (
	"path/filepath"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/diag"
)

const bom = "\uFEFF"

// ruleAt finds the diagnostic of rule, failing when there is none.
func ruleAt(t *testing.T, ds []diag.Diagnostic, rule string) diag.Diagnostic {
	t.Helper()
	for _, d := range ds {
		if d.Rule == rule {
			return d
		}
	}
	t.Fatalf("no %s among %v", rule, ds)
	return diag.Diagnostic{}
}

// A UTF-8 byte order mark, as Visual Studio writes it, is accepted at the
// start of every JSON input and env file, and positions count from the
// character after it: column 1 of line 1 is the first character of the text.
func TestByteOrderMarkIsAccepted(t *testing.T) {
	settings := filepath.Join("agent", "settings.json")
	files := map[string][]byte{
		// Column 56 on line 1 is "Comand" (the BOM is not counted).
		"appsettings.json": []byte(bom + `{"Mcp": {"Servers": {"a": {"Command": "x", "Args": [], "Comand": "y"}}}}`),
		settings:           []byte(bom + `{"mcpServers": {"b": {"command": "x", "cwd": "${home}"}}}`),
		"host.env":         []byte(bom + "FIRST=1\nSECOND=2\n"),
	}
	res := compileFuzz(t, Options{CleanEnv: true, AppSettings: []string{"appsettings.json"}, EnvFiles: []string{"host.env"}, AgentDir: "agent"}, files)
	if d := ruleAt(t, res.Diagnostics, "unknown-field"); d.File != "appsettings.json" || d.Line != 1 || d.Column != 56 {
		t.Errorf("unknown-field at %s, want appsettings.json:1:56", d.Pos())
	}
	if d := ruleAt(t, res.Diagnostics, "unknown-variable"); d.File != settings || d.Line != 1 || d.Column != 47 {
		t.Errorf("unknown-variable at %s, want %s:1:47", d.Pos(), settings)
	}
	for _, d := range res.Diagnostics {
		if d.Rule == "json-syntax" || d.Rule == "env-file-syntax" {
			t.Errorf("the byte order mark is refused: %s: %s", d.Pos(), d.Message)
		}
	}
	v, ok := res.Env.Lookup("FIRST")
	if !ok || v.Value != "1" || v.Pos.Line != 1 || v.Pos.Column != 1 {
		t.Errorf("the first variable of an env file with a BOM: %+v, %v", v, ok)
	}
	// Excerpts show the line without the mark, so that the caret is under
	// the column.
	if line, col, _ := res.Files.Line("appsettings.json", 1, 56); line[:1] != "{" || col != 56 {
		t.Errorf("excerpt %q, column %d", line, col)
	}
}

// A syntax error on line 1 of a file with a BOM is positioned as in the
// same file without it.
func TestByteOrderMarkKeepsSyntaxErrorPositions(t *testing.T) {
	for _, src := range []string{`{"Mcp": }`, `{"mcpServers": {"a": {}},}`} {
		var cols [2]int
		for i, prefix := range []string{"", bom} {
			files := map[string][]byte{"appsettings.json": []byte(prefix + src), filepath.Join("agent", "settings.json"): []byte(prefix + src)}
			res := compileFuzz(t, Options{CleanEnv: true, AppSettings: []string{"appsettings.json"}, AgentDir: "agent"}, files)
			d := ruleAt(t, res.Diagnostics, "json-syntax")
			if d.Line != 1 {
				t.Fatalf("%q: line %d", prefix+src, d.Line)
			}
			cols[i] = d.Column
		}
		if cols[0] != cols[1] {
			t.Errorf("%q: column %d without the BOM, %d with it", src, cols[0], cols[1])
		}
	}
}
