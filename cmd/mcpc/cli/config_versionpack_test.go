package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// While the version pack craftbot-605efb4 is on (the default), each edit of
// mcpc config says that CraftBot 605efb4 applies it only at its next
// restart (it has no watcher); an edit that changes nothing says nothing of
// it; an mcpc.cue found upward from the file that switches the pack off
// silences it, as it silences the pack in lint.
func TestConfigEditSaysWhenCraftbotApplies(t *testing.T) {
	const note = "CraftBot 605efb4 reads mcp_config.json only when it starts: restart CraftBot for this change to take effect (version pack craftbot-605efb4)"
	p := exampleConfig(t)
	edits := [][]string{
		{"add", "clock", "--transport", "stdio", "--", "uvx", "mcp-server-time==2025.4.7"},
		{"add-json", "wiki", `{"transport": "stdio", "command": "uvx", "args": ["wiki-mcp==1.0.0"], "enabled": false}`},
		{"disable", "clock"},
		{"enable", "clock"},
		{"env", "clock", "TZ", "Europe/Paris"},
		{"remove", "wiki"},
	}
	for _, ed := range edits {
		code, stdout, stderr := run(t, append([]string{"config", "--config", p, "--target-os", "linux"}, ed...)...)
		if code != ExitOK || !strings.Contains(stdout, "\n"+note+"\n") {
			t.Errorf("%v: exit %d, want the restart note\n%s%s", ed, code, stdout, stderr)
		}
	}
	code, stdout, _ := run(t, "config", "--config", p, "enable", "clock")
	if code != ExitOK || strings.Contains(stdout, note) {
		t.Errorf("an edit that changes nothing: exit %d\n%s", code, stdout)
	}
	// mcpc.cue two directories up (the deployment's root) switches it off.
	root := filepath.Dir(filepath.Dir(filepath.Dir(p)))
	cue := "profile: \"craftbot\"\nsources: config: \"app/config/mcp_config.json\"\npolicies: versionPacks: \"craftbot-605efb4\": \"off\"\n"
	if err := os.WriteFile(filepath.Join(root, "mcpc.cue"), []byte(cue), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "config", "--config", p, "disable", "clock")
	if code != ExitOK || !strings.Contains(stdout, "disabled server clock") || strings.Contains(stdout, note) {
		t.Errorf("with the pack off: exit %d\n%s%s", code, stdout, stderr)
	}
	// Switched on by name, or not named: the note again.
	cue = strings.Replace(cue, `"off"`, `"on"`, 1)
	if err := os.WriteFile(filepath.Join(root, "mcpc.cue"), []byte(cue), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := run(t, "config", "--config", p, "enable", "clock"); code != ExitOK || !strings.Contains(stdout, note) {
		t.Errorf("with the pack on: exit %d\n%s", code, stdout)
	}
}
