package volcanic

import (
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
)

// A path into the plan maps to where the sources wrote that value: a file
// position, an environment line, the nearest written parent of a default,
// and the first source for a path outside the servers.
func TestLocate(t *testing.T) {
	dir := "../../examples/volcanic/"
	res, err := compile.Compile(compile.Options{CleanEnv: true, AppSettings: []string{dir + "appsettings.json"}, EnvFiles: []string{dir + "host.env"}, AgentDir: dir + "agent"})
	if err != nil || res.Plan == nil {
		t.Fatalf("%v %v", err, res.Diagnostics)
	}
	index := map[string]int{}
	for i, s := range res.Plan.Servers {
		index[s.Name] = i
	}
	app, env, settings := dir+"appsettings.json", dir+"host.env", dir+"agent/settings.json"
	cases := []struct {
		path []any
		want diag.Pos
	}{
		{[]any{"servers", index["everything"], "args", 1}, diag.Pos{File: app, Line: 10, Column: 24}},
		{[]any{"servers", index["everything"], "env", "DEMO_API_KEY"}, diag.Pos{File: app, Line: 11, Column: 34}},
		{[]any{"servers", index["everything"], "name"}, diag.Pos{File: app, Line: 8, Column: 7}},
		{[]any{"servers", index["memory"], "command"}, diag.Pos{File: app, Line: 24, Column: 20}},
		{[]any{"servers", index["memory"], "env", "MEMORY_FILE_PATH"}, diag.Pos{File: env, Line: 10, Column: 45}},
		{[]any{"servers", index["filesystem"], "startupTimeoutSeconds"}, diag.Pos{File: settings, Line: 9, Column: 32}},
		// A default: the server's definition.
		{[]any{"servers", index["filesystem"], "callTimeoutSeconds"}, diag.Pos{File: settings, Line: 4, Column: 5}},
		// Outside the servers: the first source.
		{[]any{"sources"}, diag.Pos{File: app, Line: 1, Column: 1}},
		{[]any{"servers", 99, "command"}, diag.Pos{File: app, Line: 1, Column: 1}},
	}
	for _, c := range cases {
		if got := res.Locate(c.path); got != c.want {
			t.Errorf("Locate(%v) = %s, want %s", c.path, got, c.want)
		}
	}
}
