package volcanic

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
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
	res := compileFuzz(t, compile.Options{CleanEnv: true, AppSettings: []string{"appsettings.json"}, EnvFiles: []string{"host.env"}, AgentDir: "agent"}, files)
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
	if !ok || v.Value != "1" || v.Pos().Line != 1 || v.Pos().Column != 1 {
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
			res := compileFuzz(t, compile.Options{CleanEnv: true, AppSettings: []string{"appsettings.json"}, AgentDir: "agent"}, files)
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

// A NUL character in what a server is started with is an error at compile
// time, whichever way it came in: \u0000 in JSON, a NUL byte in an env file
// (a server of the environment, or the preset's variables).
func TestNULCharacterIsAnError(t *testing.T) {
	settings := filepath.Join("agent", "settings.json")
	files := map[string][]byte{
		"appsettings.json": []byte(`{"Mcp": {"Servers": {"h": {"Command": "x\u0000y", "Args": ["a\u0000"], "Env": {"K\u0000": "v", "V": "a\u0000b"}}}}}`),
		settings:           []byte(`{"mcpServers": {"s": {"command": "x", "cwd": "\u0000", "env": {"A": "\u0000"}, "enabled": false}}}`),
		"host.env":         []byte("Mcp__Servers__e__Command=x\x00y\nPLAYWRIGHT_ENABLED=true\nPLAYWRIGHT_COMMAND=n\x00px\n"),
	}
	res := compileFuzz(t, compile.Options{CleanEnv: true, AppSettings: []string{"appsettings.json"}, EnvFiles: []string{"host.env"}, AgentDir: "agent"}, files)
	got := map[string]string{}
	for _, d := range res.Diagnostics {
		if d.Rule == rules.NULCharacter.ID {
			got[d.Pos().String()] = d.Message
		} else if d.Severity == diag.Error {
			t.Errorf("another error: %s %s %s", d.Pos(), d.Rule, d.Message)
		}
	}
	want := map[string]string{
		"appsettings.json:1:41":  `server "h": Command contains a NUL character`,
		"appsettings.json:1:62":  `server "h": Args[0] contains`,
		"appsettings.json:1:80":  `server "h": the name of a variable in Env contains`,
		"appsettings.json:1:103": `server "h": Env.V contains`,
		settings + ":1:47":       `server "s": cwd contains`,
		settings + ":1:70":       `server "s": env.A contains`,
		"host.env:1:27":          `server "e": Command contains`,
		"host.env:3:21":          `server "playwright": command contains`,
	}
	for pos, msg := range want {
		if !strings.HasPrefix(got[pos], msg) {
			t.Errorf("%s: got %q, want %q…", pos, got[pos], msg)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d nul-character diagnostics, want %d: %v", len(got), len(want), got)
	}
	if res.Plan != nil {
		t.Error("a plan was made")
	}
}

// A NUL byte in an env file's variable reaches a server through
// ${env:NAME}: the same error, at the reference.
func TestNULCharacterThroughAnEnvReference(t *testing.T) {
	files := map[string][]byte{
		filepath.Join("agent", "settings.json"): []byte(`{"mcpServers": {"s": {"command": "x", "env": {"A": "${env:X}"}}}}`),
		"host.env":                              []byte("X=a\x00b\n"),
	}
	res := compileFuzz(t, compile.Options{CleanEnv: true, EnvFiles: []string{"host.env"}, AgentDir: "agent"}, files)
	d := ruleAt(t, res.Diagnostics, rules.NULCharacter.ID)
	if d.Pos().String() != filepath.Join("agent", "settings.json")+":1:53" || !strings.Contains(d.Message, "X contains a NUL character (host.env:1:3)") {
		t.Errorf("%s: %s", d.Pos(), d.Message)
	}
}
