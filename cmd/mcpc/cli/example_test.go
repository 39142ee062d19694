package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// The README's example runs after the README's set-up (npm ci): validate,
// plan and tools pass on examples/volcanic, and tools lists every server's
// tools. The servers run as the example says, `npx -y pkg@version`; npm
// takes a package from the project that holds the server's working
// directory, so discovery's temporary workspaces are made inside the clone
// and the servers run offline (npm_config_offline): what runs is what npm ci
// installed, and a version the example pins but package.json does not
// fails here instead of downloading.
func TestExampleRunsAfterNpmCI(t *testing.T) {
	root := testservers.Root()
	_, npxErr := exec.LookPath("npx")
	for _, bin := range []string{"mcp-server-everything", "mcp-server-filesystem", "mcp-server-memory"} {
		if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", bin)); err != nil || npxErr != nil {
			if testservers.RequireNPM() {
				t.Fatalf("%s or npx is missing (npm ci) and MCPC_REQUIRE_NPM=1", bin)
			}
			t.Skip("the example's servers are not installed: run npm ci")
		}
	}
	ex := filepath.Join(root, "examples", "volcanic")
	src := []string{"--clean-env", "--appsettings", filepath.Join(ex, "appsettings.json"),
		"--env-file", filepath.Join(ex, "host.env"), "--agent-dir", filepath.Join(ex, "agent")}

	code, stdout, stderr := run(t, append([]string{"validate"}, src...)...)
	if code != ExitOK || stdout != "" || !strings.Contains(stderr, "3 servers, 0 shadowed: no problems") {
		t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
	}

	code, stdout, stderr = run(t, append([]string{"plan"}, src...)...)
	if code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	planJSON := stdout
	var p plan.Plan
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
	pinned := packageJSONPins(t, root)
	for _, s := range p.Servers {
		if s.Command != "npx" || len(s.Args) < 2 || s.Args[0] != "-y" || !pinned[s.Args[1]] {
			t.Errorf("server %s runs %s %v: the example's servers are npx -y of a package.json pin (%v)", s.Name, s.Command, s.Args, pinned)
		}
	}

	tmp, err := os.MkdirTemp(root, ".mcpc-example-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	code, stdout, stderr = run(t, append([]string{"tools", "--quiet", "--format", "json",
		"--env", "PATH=" + os.Getenv("PATH"), "--env", "npm_config_offline=true"}, src...)...)
	if code != ExitOK {
		t.Fatalf("tools: exit %d\n%s", code, stderr)
	}
	var rows []struct {
		Server string  `json:"server"`
		Name   *string `json:"name"`
		Rule   *string `json:"rule"`
	}
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	visible := map[string]bool{}
	for _, r := range rows {
		if r.Rule != nil || r.Name == nil {
			t.Errorf("tools: %+v", r)
			continue
		}
		visible[*r.Name] = true
	}
	for _, name := range []string{"demo_echo", "demo_get-env", "mem_read_graph", "fs_read_text_file", "fs_list_allowed_directories"} {
		if !visible[name] {
			t.Errorf("tools: no %s among %d visible tools", name, len(visible))
		}
	}

	// The example's memory server keeps its graph in a workspace that has
	// just been created: its MEMORY_FILE_PATH must be a file the server can
	// write there (its directory exists), or the first write fails (ENOENT).
	planFile := filepath.Join(tmp, "plan.json")
	if err := os.WriteFile(planFile, []byte(planJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(tmp, "fresh-workspace")
	cs, wait := runStdio(t, "--plan", planFile, "--workspace", ws, "--clean-env",
		"--env", "PATH="+os.Getenv("PATH"), "--env", "npm_config_offline=true")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mem_create_entities", Arguments: map[string]any{
		"entities": []map[string]any{{"name": "mcpc", "entityType": "tool", "observations": []string{"compiles MCP configuration"}}}}})
	if err != nil || res.IsError {
		t.Fatalf("mem_create_entities in a fresh workspace: %v %s", err, testservers.TextOf(res))
	}
	if got := callText(t, cs, "mem_read_graph", nil); !strings.Contains(got, "compiles MCP configuration") {
		t.Errorf("mem_read_graph after the write: %q", got)
	}
	if code, stderr := wait(); code != ExitOK {
		t.Errorf("run: exit %d\n%s", code, stderr)
	}
}

// packageJSONPins returns name@version of every dependency of package.json.
func packageJSONPins(t *testing.T, root string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	pins := map[string]bool{}
	for name, version := range pkg.Dependencies {
		pins[name+"@"+version] = true
	}
	return pins
}
