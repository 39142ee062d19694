package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A deny-list that would deny nothing or less than meant exits 2, naming
// the file (and the misspelt field's place), whichever command reads it.
func TestDenyListThatDeniesNothingExits2(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	write(t, agent, "settings.json", `{"mcpServers": {}}`)
	empty := write(t, dir, "empty.cue", "// nothing yet\n")
	misspelt := write(t, dir, "misspelt.json", `{"Names": ["CORP_KEY"]}`)
	blank := write(t, dir, "blank.json", `{"names": [""], "replace": true}`)
	for _, c := range []struct{ file, want string }{
		{empty, "lists no names and no patterns"},
		{blank, "names[0] is blank and would deny nothing"},
		{misspelt, misspelt + `:1:2: unknown field "Names"; did you mean "names"?`},
	} {
		for _, cmd := range []string{"validate", "plan"} {
			code, stdout, stderr := run(t, cmd, "--clean-env", "--agent-dir", agent, "--deny-list", c.file)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, c.file) || !strings.Contains(stderr, c.want) {
				t.Errorf("%s --deny-list %s: exit %d, stdout %q, stderr %q", cmd, filepath.Base(c.file), code, stdout, stderr)
			}
		}
	}
}

// A custom list adds to the built-in one; with replace: true it replaces
// it, but the sealing keys are withheld from every server in every case.
func TestDenyListAddsAndSealingKeysStayWithheld(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	write(t, agent, "settings.json", `{"mcpServers": {"s": {"command": "srv"}}}`)
	add := write(t, dir, "add.cue", `names: ["CORP_KEY"]`)
	replace := write(t, dir, "replace.cue", "replace: true\nnames: [\"CORP_KEY\"]\n")
	env := []string{"--clean-env", "--env", "CORP_KEY=1", "--env", "GITHUB_TOKEN=2", "--env", "MCP_ENCRYPTION_SECRET=3", "--env", "TELEGRAM_BOT_TOKEN=4", "--env", "PLAIN=5"}
	for _, c := range []struct {
		file     string
		withheld string
	}{
		{add, "CORP_KEY GITHUB_TOKEN MCP_ENCRYPTION_SECRET TELEGRAM_BOT_TOKEN"},
		{replace, "CORP_KEY MCP_ENCRYPTION_SECRET TELEGRAM_BOT_TOKEN"},
	} {
		args := append([]string{"plan", "--agent-dir", agent, "--deny-list", c.file, "--workspace", dir, "--resolve"}, env...)
		code, stdout, stderr := run(t, args...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", filepath.Base(c.file), code, stderr)
		}
		var view struct {
			Servers []struct{ Withheld []string } `json:"servers"`
		}
		if err := json.Unmarshal([]byte(stdout), &view); err != nil || len(view.Servers) != 1 {
			t.Fatalf("%v: %s", err, stdout)
		}
		if got := strings.Join(view.Servers[0].Withheld, " "); got != c.withheld {
			t.Errorf("%s: withheld %q, want %q", filepath.Base(c.file), got, c.withheld)
		}
	}
}
