package lint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// lint --init finds a deployment's sources: CraftBot's mcp_config.json
// wins over the default profile's files; else the appsettings files
// (appsettings.json first), .env then *.env, and the first agent directory
// with a settings.json; nothing found is an error naming what was looked
// for.
func TestDetect(t *testing.T) {
	write := func(dir string, files ...string) {
		for _, f := range files {
			p := filepath.Join(dir, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	js := func(d Deployment) string {
		b, _ := json.Marshal(struct {
			Profile string
			Sources Sources
		}{d.Profile, d.Sources})
		return string(b)
	}
	for _, c := range []struct {
		name  string
		files []string
		want  string
	}{
		{"craftbot", []string{"app/config/mcp_config.json", "appsettings.json"},
			`{"Profile":"craftbot","Sources":{"appsettings":null,"envFiles":null,"env":null,"cleanEnv":true,"agentDir":"","config":"app/config/mcp_config.json","denyList":""}}`},
		{"volcanic", []string{"appsettings.Production.json", "appsettings.json", "host.env", ".env", "agent/settings.json", ".volcanic/agent/settings.json"},
			`{"Profile":"volcanic","Sources":{"appsettings":["appsettings.json","appsettings.Production.json"],"envFiles":[".env","host.env"],"env":null,"cleanEnv":true,"agentDir":"agent","config":"","denyList":""}}`},
		{"agent only", []string{".volcanic/agent/settings.json"},
			`{"Profile":"volcanic","Sources":{"appsettings":null,"envFiles":null,"env":null,"cleanEnv":true,"agentDir":".volcanic/agent","config":"","denyList":""}}`},
	} {
		dir := t.TempDir()
		write(dir, c.files...)
		d, err := Detect(dir)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := js(d); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	dir := t.TempDir()
	write(dir, "x.env")
	_, err := Detect(dir)
	if want := "lint --init " + dir + ": no sources found (appsettings*.json, agent/settings.json, app/config/mcp_config.json); give them with the source flags"; err == nil || err.Error() != want {
		t.Errorf("nothing found: %v\nwant %s", err, want)
	}
}
