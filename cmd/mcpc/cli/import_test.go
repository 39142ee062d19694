package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/report"
)

const importCanary = "ghp_CANARYcli0123456789abcdef"

// importSource is a Claude Code .mcp.json with a literal token, a header
// and a VS Code-free template.
const importSource = `{
  "mcpServers": {
    "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
               "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "` + importCanary + `", "LOG": "${LOG_LEVEL}"}},
    "notes": {"type": "http", "url": "https://notes.example.com/mcp", "headers": {"Authorization": "Bearer ` + importCanary + `"}}
  }
}
`

func TestImportHelpShowsAnExample(t *testing.T) {
	code, stdout, _ := run(t, "import", "--help")
	if code != ExitOK || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "mcpc import --from claude-desktop") {
		t.Errorf("import --help: exit %d\n%s", code, stdout)
	}
}

func TestImportUsageErrorsExit2(t *testing.T) {
	src := write(t, t.TempDir(), ".mcp.json", importSource)
	for _, args := range [][]string{
		{"import", "--from", "claude-code", "--to", "volcanic"},
		{"import", "--from", "claude-code", src, src, "--to", "volcanic"},
		{"import", src, "--to", "volcanic"},
		{"import", "--from", "claude-code", src},
		{"import", "--from", "zed", src, "--to", "volcanic"},
		{"import", "--from", "claude-code", src, "--to", "other"},
		{"import", "--from", "claude-code", src, "--to", "craftbot", "--form", "appsettings"},
		{"import", "--from", "claude-code", src, "--to", "volcanic", "--form", "yaml"},
		{"import", "--from", "claude-code", src, "--to", "volcanic", "--format", "yaml"},
		{"import", "--from", "claude-code", filepath.Join(t.TempDir(), "missing.json"), "--to", "volcanic"},
		{"import", "--from", "claude-code", t.TempDir(), "--to", "volcanic"},
	} {
		if code, stdout, stderr := run(t, args...); code != ExitUsage || stdout != "" || !strings.HasPrefix(stderr, "mcpc: ") {
			t.Errorf("%v: exit %d, want 2; stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

// TestImportWritesOutputOrNothing: -o writes the converted file (stdout
// stays empty); with an error nothing is written and an existing file is
// left as it was.
func TestImportWritesOutputOrNothing(t *testing.T) {
	dir := t.TempDir()
	src := write(t, dir, ".mcp.json", importSource)
	out := filepath.Join(dir, "settings.json")
	code, stdout, stderr := run(t, "import", "--from", "claude-code", src, "--to", "volcanic", "-o", out)
	if code != ExitOK || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_PERSONAL_ACCESS_TOKEN}"`) {
		t.Errorf("output:\n%s", data)
	}
	if !strings.Contains(stderr, "1 server imported, 1 remote server to add with mcpc remote add") {
		t.Errorf("summary: %s", stderr)
	}
	// The written file is what validate accepts.
	code, vout, verr := run(t, "validate", "--clean-env", "--agent-dir", dir)
	if code != ExitOK {
		t.Errorf("validate of the imported file: exit %d\n%s%s", code, vout, verr)
	}

	bad := write(t, dir, "bad.json", `{"mcpServers": {"x": {"command": "run", "args": ["${TOKEN}"]}}}`)
	code, stdout, _ = run(t, "import", "--from", "claude-code", bad, "--to", "volcanic", "-o", out)
	if code != ExitProblems || stdout != "" {
		t.Fatalf("with an error: exit %d, stdout %q", code, stdout)
	}
	if again, _ := os.ReadFile(out); string(again) != string(data) {
		t.Errorf("a failed import changed %s", out)
	}
}

// TestImportReportsNoSecretInAnyFormat: the canary token stands in an env
// value and a header; no report format shows it, and the volcanic output
// does not hold it.
func TestImportReportsNoSecretInAnyFormat(t *testing.T) {
	src := write(t, t.TempDir(), ".mcp.json", importSource)
	for _, to := range []string{"volcanic", "craftbot"} {
		for _, format := range report.Formats {
			code, stdout, stderr := run(t, "import", "--from", "claude-code", src, "--to", to, "--format", format)
			if code != ExitOK {
				t.Fatalf("%s %s: exit %d: %s", to, format, code, stderr)
			}
			if strings.Contains(stderr, "CANARY") {
				t.Errorf("%s %s: the report shows the secret:\n%s", to, format, stderr)
			}
			if to == "volcanic" && strings.Contains(stdout, "CANARY") {
				t.Errorf("volcanic output holds the secret:\n%s", stdout)
			}
			if format == "json" {
				report := stderr[:strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1]
				var ds []map[string]any
				if err := json.Unmarshal([]byte(report), &ds); err != nil || len(ds) == 0 {
					t.Errorf("%s: json report: %v\n%s", to, err, stderr)
				}
			}
		}
	}
}

// TestImportSyntaxErrorIsPositioned: a JSONC comment is fine for VS Code
// and a positioned json-syntax error (exit 1) for Claude Desktop.
func TestImportSyntaxErrorIsPositioned(t *testing.T) {
	src := write(t, t.TempDir(), "mcp.json", "{\n  // mine\n  \"servers\": {\"t\": {\"command\": \"uvx\",}},\n}\n")
	if code, _, stderr := run(t, "import", "--from", "vscode", src, "--to", "volcanic"); code != ExitOK {
		t.Errorf("vscode JSONC: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run(t, "import", "--from", "claude-desktop", src, "--to", "volcanic", "--oneline")
	if code != ExitProblems || stdout != "" || !strings.Contains(stderr, src+":2:3: error: invalid JSON") || !strings.Contains(stderr, "[json-syntax]") {
		t.Errorf("claude-desktop: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
}

// TestImportWritesWhatConverts: one server of ten that cannot be converted
// (a ${VAR:-default} in a url, which CraftBot does not expand) leaves the
// nine others written, is reported by name, and fails the run (exit 1).
func TestImportWritesWhatConverts(t *testing.T) {
	dir := t.TempDir()
	var servers []string
	for i := 0; i < 9; i++ {
		servers = append(servers, fmt.Sprintf(`"s%d": {"command": "npx", "args": ["-y", "s%d@1.0.0"]}`, i, i))
	}
	servers = append(servers, `"notes": {"type": "sse", "url": "https://${NOTES_HOST:-notes.example.com}/mcp"}`)
	src := write(t, dir, ".mcp.json", `{"mcpServers": {`+strings.Join(servers, ",\n")+`}}`)
	out := filepath.Join(dir, "mcp_config.json")
	code, stdout, stderr := run(t, "import", "--from", "claude-code", src, "--to", "craftbot", "-o", out, "--oneline")
	if code != ExitProblems || stdout != "" {
		t.Fatalf("exit %d, want 1; stdout %q\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `error: server "notes": url holds a ${…}`) || !strings.Contains(stderr, "9 servers imported, 1 server not imported") {
		t.Errorf("report:\n%s", stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("nothing written: %v", err)
	}
	for i := 0; i < 9; i++ {
		if !strings.Contains(string(data), fmt.Sprintf(`"name": "s%d"`, i)) {
			t.Errorf("s%d is not in the output:\n%s", i, data)
		}
	}
	if strings.Contains(string(data), "notes") {
		t.Errorf("the server that does not convert is in the output:\n%s", data)
	}
	// What is written is what validate accepts.
	if code, vout, verr := run(t, "validate", "--clean-env", "--profile", "craftbot", "--config", out, "--target-os", "linux"); code != ExitOK {
		t.Errorf("validate of the imported file: exit %d\n%s%s", code, vout, verr)
	}
}

// A name defined three times, the middle one not an object, is reported,
// not a crash.
func TestImportNameDefinedThrice(t *testing.T) {
	src := write(t, t.TempDir(), ".mcp.json", `{"mcpServers": {"a": {"command": "x"}, "a": 1, "a": {"command": "y"}}}`)
	code, stdout, stderr := run(t, "import", "--from", "claude-code", src, "--to", "volcanic", "--oneline")
	if code != ExitProblems || !strings.Contains(stdout, `"command": "y"`) || strings.Contains(stdout, `"x"`) || strings.Count(stderr, "[import-duplicate]") != 2 {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}
