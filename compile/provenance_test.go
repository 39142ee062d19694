package compile

import (
	"testing"

	"github.com/mcpc-dev/mcpc/diag"
)

// A path into the plan maps to where the sources wrote that value: a file
// position, an environment line, the nearest written parent of a default,
// and the first source for a path outside the servers.
func TestLocate(t *testing.T) {
	dir := "../examples/volcanic/"
	res, err := Compile(Options{CleanEnv: true, AppSettings: []string{dir + "appsettings.json"}, EnvFiles: []string{dir + "host.env"}, AgentDir: dir + "agent"})
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
		{[]any{"servers", index["github"], "args", 1}, diag.Pos{File: app, Line: 9, Column: 24}},
		{[]any{"servers", index["github"], "env", "GITHUB_TOKEN"}, diag.Pos{File: app, Line: 10, Column: 34}},
		{[]any{"servers", index["github"], "name"}, diag.Pos{File: app, Line: 7, Column: 7}},
		{[]any{"servers", index["notes"], "command"}, diag.Pos{File: app, Line: 21, Column: 20}},
		{[]any{"servers", index["time"], "args", 1}, diag.Pos{File: env, Line: 8, Column: 29}},
		{[]any{"servers", index["memory"], "idleTimeoutSeconds"}, diag.Pos{File: settings, Line: 13, Column: 29}},
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
