package mcpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/golden"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// The action registry CraftBot builds from the real
// @modelcontextprotocol/server-everything (its real input schemas, as
// tools/list gives them), as text and JSON: golden/craftbot-actions-
// everything.txt and .json. `go test . -run TestGoldenCraftbotEverything
// -update` rewrites them; the schemas change with the pinned version.
func TestGoldenCraftbotEverything(t *testing.T) {
	command, args := testservers.NeedEverything(t)
	entry := map[string]any{"name": "everything", "transport": "stdio", "command": command, "args": args}
	data, _ := json.Marshal(map[string]any{"mcp_servers": []any{entry}})
	config := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for format, file := range map[string]string{"text": "craftbot-actions-everything.txt", "json": "craftbot-actions-everything.json"} {
		code, stdout, stderr := run("tools", "--quiet", "--clean-env", "--profile", "craftbot", "--config", config, "--format", format)
		got := "$ mcpc tools --quiet --clean-env --profile craftbot --config mcp_config.json --format " + format +
			"\n# server-everything " + testservers.EverythingVersion + "\nexit " + strconv.Itoa(code) + "\n" + stdout +
			"--- stderr\n" + strings.ReplaceAll(stderr, config, "mcp_config.json")
		golden.Compare(t, filepath.Join("golden", file), got)
	}
}

// The real schemas of @modelcontextprotocol/server-filesystem (arrays of
// objects, string arrays with defaults) as CraftBot translates them.
func TestGoldenCraftbotFilesystem(t *testing.T) {
	root := t.TempDir()
	command, args := testservers.NeedFilesystem(t, root)
	entry := map[string]any{"name": "filesystem", "transport": "stdio", "command": command, "args": args}
	data, _ := json.Marshal(map[string]any{"mcp_servers": []any{entry}})
	config := filepath.Join(t.TempDir(), "mcp_config.json")
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for format, file := range map[string]string{"text": "craftbot-actions-filesystem.txt", "json": "craftbot-actions-filesystem.json"} {
		code, stdout, stderr := run("tools", "--quiet", "--clean-env", "--profile", "craftbot", "--config", config, "--format", format)
		got := "$ mcpc tools --quiet --clean-env --profile craftbot --config mcp_config.json --format " + format +
			"\n# server-filesystem " + testservers.FilesystemVersion + "\nexit " + strconv.Itoa(code) + "\n" + stdout +
			"--- stderr\n" + strings.ReplaceAll(strings.ReplaceAll(stderr, config, "mcp_config.json"), root, "ROOT")
		golden.Compare(t, filepath.Join("golden", file), strings.ReplaceAll(got, root, "ROOT"))
	}
}
