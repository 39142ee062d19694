package volcanic

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diagtest"
)

// Fuzz targets, one per reader. Each asserts: no panic, no error other
// than an unreadable input, and every diagnostic positioned inside the
// input it blames. Run one with e.g. go test ./compile -fuzz FuzzAppSettings.

func fakeFS(files map[string][]byte) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if b, ok := files[p]; ok {
			return b, nil
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
}

func compileFuzz(t *testing.T, opts compile.Options, files map[string][]byte) *compile.Result {
	t.Helper()
	opts.ReadFile = fakeFS(files)
	if opts.AgentDir == "" {
		opts.AgentDir = "agent"
	}
	res, err := compile.Compile(opts)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	lines := map[string][]string{}
	for name, b := range files {
		lines[name] = diagtest.Lines(b)
	}
	lines[compile.EnvFlagFile] = opts.Env
	sortedEnv := append([]string(nil), opts.Environ...)
	lines[compile.ProcessEnvFile] = sortedEnvLines(sortedEnv)
	diagtest.CheckPositions(t, res.Diagnostics, lines)
	if res.HasErrors() != (res.Plan == nil) {
		t.Fatalf("plan %v with errors %v", res.Plan != nil, res.HasErrors())
	}
	if res.Plan != nil {
		if _, err := res.Plan.Canonical(); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

func sortedEnvLines(env []string) []string {
	host, _, _, err := compile.LoadHostEnv(compile.HostEnvOptions{Environ: env})
	if err != nil {
		panic(err) // no file is read
	}
	vars := host.Layers()[0]
	out := make([]string, len(env))
	for _, v := range vars {
		out[v.Pos().Line-1] = v.Name + "=" + v.Value
	}
	return out
}

func addFixtureSeeds(f *testing.F, pattern string) {
	matches, _ := filepath.Glob(filepath.Join("..", "fixtures", "*", pattern))
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil {
			f.Add(b)
		}
	}
}

func FuzzAppSettings(f *testing.F) {
	addFixtureSeeds(f, "appsettings*.json")
	f.Add([]byte(`{"Mcp":{"Servers":{"a":{"Command":"x","Args":["${env:A}"],"Env":{"B":null}}},"Playwright":{"Enabled":true}}}`))
	f.Add([]byte("// c\n{\"Mcp:Servers:a:Command\": \"x\",}"))
	// A byte order mark, hex and white space for Int32Converter, a NUL.
	f.Add([]byte("\uFEFF{\"Mcp\":{\"Servers\":{\"a\":{\"Command\":\"x\\u0000\",\"StartupTimeoutSeconds\":\" 0x3C \",\"Enabled\":\" TRUE\\u0000\"}}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		compileFuzz(t, compile.Options{CleanEnv: true, AppSettings: []string{"appsettings.json"}},
			map[string][]byte{"appsettings.json": data})
	})
}

func FuzzSettings(f *testing.F) {
	addFixtureSeeds(f, filepath.Join("agent", "settings.json"))
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","env":{"A":null,"B":"${env:B}"},"idleTimeoutSeconds":0}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		compileFuzz(t, compile.Options{CleanEnv: true, AgentDir: "agent"},
			map[string][]byte{filepath.Join("agent", "settings.json"): data})
	})
}

func FuzzEnvFile(f *testing.F) {
	addFixtureSeeds(f, "host.env")
	f.Add([]byte("PLAYWRIGHT_ENABLED=true\nPLAYWRIGHT_EXTRA_ARGS='--a \"b c\"'\nMcp__Servers__x__Command=y\n"))
	f.Add([]byte("\uFEFFMcp__Servers__x__Command=y\x00\nMcp__Servers__x__CallTimeoutSeconds=&h10\nPLAYWRIGHT_COMMAND=${env:X}\n"))
	// Values over several lines, one never closed, a quoted name.
	f.Add([]byte("SSH_PRIVATE_KEY=\"-----BEGIN KEY-----\r\nbody\\\n-----END KEY-----\" # c\nB='x\n\ny'\"OPENAI_API_KEY\"=v\nC=\"open\nD=1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		compileFuzz(t, compile.Options{CleanEnv: true, EnvFiles: []string{"host.env"}},
			map[string][]byte{"host.env": data})
	})
}

// FuzzEnvironment binds fuzzed variables given both as --env flags and as
// the process environment, over an appsettings file they override.
func FuzzEnvironment(f *testing.F) {
	f.Add("Mcp__Servers__a__Command=x\nMcp__Servers__a__Args__1=y\nPLAYWRIGHT_ENABLED=1")
	f.Add("MCP__SERVERS____COMMAND=x\nMcp__Playwright__Headless=maybe\nMcp__Servers__a__StartupTimeoutSeconds=99999999999")
	f.Add("\uFEFFMcp__Servers__a__Command=x\nMcp__Servers__a__IdleTimeoutSeconds=#FFFFFFFF\nPLAYWRIGHT_EXTRA_ARGS=${env:A}")
	base := []byte(`{"Mcp":{"Servers":{"a":{"Command":"x","Args":["p","q","r"]}}}}`)
	f.Fuzz(func(t *testing.T, entries string) {
		var env []string
		for _, e := range strings.Split(entries, "\n") {
			if k, _, ok := strings.Cut(e, "="); ok && k != "" {
				env = append(env, e)
			}
		}
		files := map[string][]byte{"appsettings.json": base}
		compileFuzz(t, compile.Options{CleanEnv: true, Env: env, AppSettings: []string{"appsettings.json"}}, files)
		compileFuzz(t, compile.Options{Environ: env, AppSettings: []string{"appsettings.json"}}, files)
	})
}
