package lint

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// discoverTree is a repository: a deployment with mcpc.cue whose sources
// are in a subfolder, deployments recognised by their host's files
// (appsettings with an Mcp section, an agent settings.json, a CraftBot
// mcp_config.json), files that declare no servers, and vendored and
// hidden trees that are not the repository's own.
func discoverTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for file, text := range map[string]string{
		"a/mcpc.cue":                             `sources: appsettings: ["conf/appsettings.json"]`,
		"a/conf/appsettings.json":                `{"Mcp": {"Servers": {}}}`,
		"b/appsettings.json":                     `{/* JSONC */ "MCP": {"Servers": {}}}`,
		"c/app/config/mcp_config.json":           `{"mcp_servers": []}`,
		"d/appsettings.json":                     `{"Logging": {}}`,
		"e/agent/settings.json":                  `{"mcpServers": {}}`,
		"e/.volcanic/agent/settings.json":        `{"mcpServers": {}}`,
		"node_modules/x/appsettings.json":        `{"Mcp": {}}`,
		"vendor/y/mcpc.cue":                      `sources: appsettings: ["appsettings.json"]`,
		".git/z/app/config/mcp_config.json":      `{}`,
		"policies/testdata/bad/appsettings.json": `{"Mcp": {}}`,
		"README.md":                              "# repo\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Discover finds each mcpc.cue and each directory whose host's files
// declare servers, not a directory an mcpc.cue reads, nor what is in
// hidden, vendored or test-input trees, parents first.
func TestDiscover(t *testing.T) {
	root := discoverTree(t)
	got, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	j := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	want := []Found{{Dir: j("a"), File: j("a/mcpc.cue")}, {Dir: j("b")}, {Dir: j("c")}, {Dir: j("e")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Discover:\n got %v\nwant %v", got, want)
	}
	// Below a.../conf, the mcpc.cue above reads the files: its deployment.
	if got, err := Discover(j("a/conf")); err != nil || !reflect.DeepEqual(got, []Found{{Dir: j("a/conf"), File: j("a/mcpc.cue")}}) {
		t.Errorf("Discover(a/conf): %v %v", got, err)
	}
	if f, ok := Of(j("d")); ok {
		t.Errorf("Of(d): %v, want none (its appsettings declares no servers)", f)
	}
}

// Containing selects the deployments that read one of the files: a file
// of a deployment's sources, its mcpc.cue; a file none reads selects none.
func TestDiscoverContaining(t *testing.T) {
	root := discoverTree(t)
	j := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	for _, c := range []struct {
		files []string
		want  []Found
	}{
		{[]string{j("a/conf/appsettings.json"), j("README.md"), j("c/app/config/mcp_config.json")},
			[]Found{{Dir: j("a"), File: j("a/mcpc.cue")}, {Dir: j("c")}}},
		{[]string{j("a/mcpc.cue")}, []Found{{Dir: j("a"), File: j("a/mcpc.cue")}}},
		{[]string{j("e/agent/settings.json")}, []Found{{Dir: j("e")}}},
		{[]string{j("README.md"), j("d/appsettings.json"), j("node_modules/x/appsettings.json")}, nil},
	} {
		got, err := Containing(root, c.files)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Containing(%v):\n got %v %v\nwant %v", c.files, got, err, c.want)
		}
	}
}
