package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Without --appsettings, every command layers appsettings.json and
// appsettings.{Environment}.json, Environment taken from the host
// environment it was given (--env here; mcpc's own has none, and the
// default is Production), and says which files it read.
func TestAppSettingsEnvironmentOfTheHost(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "appsettings.json", fmt.Sprintf(`{"Mcp": {"Servers": {"github": {"Command": %q}}}}`, testServer))
	write(t, dir, "appsettings.Production.json", fmt.Sprintf(`{"Mcp": {"Servers": {"notes": {"Command": %q}}}}`, testServer))
	write(t, dir, "appsettings.Staging.json", fmt.Sprintf(`{"Mcp": {"Servers": {"fs": {"Command": %q}}}}`, testServer))
	inDir(t, dir)
	for _, c := range []struct {
		args  []string
		want  string
		other string
	}{
		{[]string{"--env", "DOTNET_ENVIRONMENT=Production"}, "notes", "fs"},
		{nil, "notes", "fs"},
		{[]string{"--env", "ASPNETCORE_ENVIRONMENT=Staging"}, "fs", "notes"},
	} {
		code, stdout, stderr := run(t, append([]string{"lint", "."}, c.args...)...)
		if code != ExitOK || !strings.Contains(stdout+stderr, ".: 2 servers") {
			t.Errorf("lint %v: exit %d, %s%s; want 2 servers", c.args, code, stdout, stderr)
		}
		if want := "read appsettings.json, then appsettings." + map[string]string{"notes": "Production", "fs": "Staging"}[c.want] + ".json"; !strings.Contains(stderr, want) {
			t.Errorf("lint %v: %s; want %q", c.args, stderr, want)
		}
		code, stdout, stderr = run(t, append([]string{"plan"}, c.args...)...)
		var p struct {
			Servers []struct{ Name string } `json:"servers"`
		}
		if err := json.Unmarshal([]byte(stdout), &p); code != ExitOK || err != nil || len(p.Servers) != 2 || p.Servers[1].Name != c.want && p.Servers[0].Name != c.want {
			t.Errorf("plan %v: exit %d %v %+v %s; want github and %s", c.args, code, err, p.Servers, stderr, c.want)
		}
		if !strings.Contains(stderr, "mcpc: read appsettings.json, then") {
			t.Errorf("plan %v: %s; want the files it read", c.args, stderr)
		}
	}
}

// A deployment described only by its environment (an image's PLAYWRIGHT_*)
// is something to check: the env file is a source.
func TestEnvFileAloneIsADeployment(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "host.env", "PLAYWRIGHT_ENABLED=true\nPLAYWRIGHT_BROWSERS_PATH=/ms-playwright\n")
	inDir(t, dir)
	code, stdout, stderr := run(t, "lint", ".", "--env-file", "host.env", "--clean-env")
	if code == ExitUsage || strings.Contains(stderr, "nothing to check") || !strings.Contains(stdout+stderr, ".: 1 server") {
		t.Errorf("lint --env-file: exit %d, %s%s; want the playwright server checked", code, stdout, stderr)
	}
	write(t, dir, "mcpc.cue", `sources: {envFiles: ["host.env"], cleanEnv: true}`)
	code, stdout, stderr = run(t, "lint", ".")
	if code == ExitUsage || !strings.Contains(stdout+stderr, "mcpc.cue: 1 server") {
		t.Errorf("lint with mcpc.cue envFiles: exit %d, %s%s", code, stdout, stderr)
	}
}
