package volcanic

import (
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// deepKeyShapes are configurations whose keys run n levels deep: a
// variable Mcp__:a:a:… (the 400 KB env file, 200 000 levels), one
// below a server's unknown field, one below an env variable (a section
// where a string belongs), and an appsettings key "Mcp:a:a:…".
var deepKeyShapes = []struct {
	name  string
	input func(n int) (compile.Options, map[string][]byte)
	want  string // the one diagnostic, position and message
}{
	{"Mcp__:a:a…", func(n int) (compile.Options, map[string][]byte) {
		return compile.Options{EnvFiles: []string{"host.env"}}, map[string][]byte{"host.env": []byte("Mcp__" + strings.Repeat(":a", n) + "=x\n")}
	}, `host.env:1:6 warning unknown-field Mcp: unknown field "" is ignored by the host`},
	{"Mcp__Servers__x__Bar__a…", func(n int) (compile.Options, map[string][]byte) {
		return compile.Options{EnvFiles: []string{"host.env"}}, map[string][]byte{"host.env": []byte("Mcp__Servers__x__Command=y\nMcp__Servers__x__Bar" + strings.Repeat("__a", n) + "=x\n")}
	}, `host.env:2:18 warning unknown-field server "x": unknown field "Bar" is ignored by the host`},
	{"Mcp__Servers__x__Env__A__a…", func(n int) (compile.Options, map[string][]byte) {
		return compile.Options{EnvFiles: []string{"host.env"}}, map[string][]byte{"host.env": []byte("Mcp__Servers__x__Command=y\nMcp__Servers__x__Env__A" + strings.Repeat("__a", n) + "=x\n")}
	}, `host.env:2:23 error type-mismatch server "x": Env.A must be a string, not a section with keys below it`},
	{`"Mcp:a:a…"`, func(n int) (compile.Options, map[string][]byte) {
		return compile.Options{AppSettings: []string{"appsettings.json"}}, map[string][]byte{"appsettings.json": []byte(`{"Mcp:Servers:x:Command": "y", "Mcp:Servers:x:Bar` + strings.Repeat(":a", n) + `": 1}`)}
	}, `appsettings.json:1:32 warning unknown-field server "x": unknown field "Bar" is ignored by the host`},
}

// A key of n levels costs what its bytes cost, not a configuration node
// (and a bound value node) per level (docs/performance.md, "Figures behind
// code comments"). The configuration keeps at most maxKeyLevels levels, the
// rest of a key as one key, and the finding is the same at every depth.
func TestDeepKeysCostTheirBytes(t *testing.T) {
	if testservers.RaceEnabled() {
		t.Skip("the race detector changes allocations")
	}
	for _, s := range deepKeyShapes {
		compileAt := func(n int) (uint64, int) {
			opts, files := s.input(n)
			opts.CleanEnv, opts.AgentDir, opts.ReadFile = true, "agent", fakeFS(files)
			var res *compile.Result
			allocated := testservers.AllocatedBytes(func() {
				var err error
				if res, err = compile.Compile(opts); err != nil {
					t.Fatal(err)
				}
			})
			if len(res.Diagnostics) != 1 || res.Diagnostics[0].Pos().String()+" "+string(res.Diagnostics[0].Severity)+" "+res.Diagnostics[0].Rule+" "+res.Diagnostics[0].Message != s.want {
				t.Fatalf("%s, %d levels: %v\nwant %s", s.name, n, res.Diagnostics, s.want)
			}
			return allocated, inputBytes(files)
		}
		compileAt(10) // schemas compiled, pools filled
		a1, b1 := compileAt(2000)
		a2, b2 := compileAt(4000)
		perByte := float64(a2-min(a1, a2)) / float64(b2-b1)
		t.Logf("%s: %d bytes allocated for %d levels, %d for twice as many: %.1f per added byte", s.name, a1, 2000, a2, perByte)
		if perByte > 40 {
			t.Errorf("%s: %.1f bytes allocated per byte of key, want at most 40", s.name, perByte)
		}
	}
}

// keyLevels gives the levels .NET's environment provider gives (every "__"
// and ":" separates two), the levels past maxKeyLevels joined by ":".
func TestKeyLevelsAreTheProvidersLevels(t *testing.T) {
	for _, name := range []string{
		"Mcp__Servers__x__Command", "MCP__SERVERS____COMMAND", "Mcp:Servers:x", "Mcp___a", "Mcp____a", "a_b__c_",
		"Mcp__" + strings.Repeat("a__", 14) + "b", "Mcp__" + strings.Repeat("a__", 15) + "b", "Mcp__" + strings.Repeat("a:", 20) + "b___c:",
	} {
		all := strings.Split(strings.ReplaceAll(name, "__", ":"), ":")
		want := all
		if len(all) > maxKeyLevels {
			want = append(all[:maxKeyLevels-1:maxKeyLevels-1], strings.Join(all[maxKeyLevels-1:], ":"))
		}
		if got := keyLevels(name); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("keyLevels(%q) = %q, want %q", name, got, want)
		}
	}
}

// An unknown key's section is bound as an object without the keys below
// it: the schema reports the key alone, without a copy of everything below
// it.
func TestUnknownSectionIsBoundWithoutItsKeys(t *testing.T) {
	opts, files := appSettingsOf(`{"Mcp": {"Servers": {"x": {"Command": "y", "Extra": [[1, 2], {"a": {"b": 1}}]}}}}`)
	opts.CleanEnv, opts.AgentDir, opts.ReadFile = true, "agent", fakeFS(files)
	res, err := compile.Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Message != `server "x": unknown field "Extra" is ignored by the host` {
		t.Fatalf("diagnostics %v", res.Diagnostics)
	}
	extra := res.Entries[0].Node().Get("Extra")
	if extra == nil || extra.Kind != node.Object || len(extra.Members) != 0 {
		t.Errorf("Extra bound as %+v, want an object without keys", extra)
	}
}

// A top-level key of settings.json is compared with mcpServers only when
// its length allows a typo of it: the edit distance of a megabyte key cost
// its runes copied, and its length times mcpServers' steps.
func TestLongTopLevelKeyIsNotComparedWithMcpServers(t *testing.T) {
	if testservers.RaceEnabled() {
		t.Skip("the race detector changes allocations")
	}
	allocated := func(size int) uint64 {
		opts, files := settingsOf(`{"` + strings.Repeat("mcpServer", size/9) + `": {}}`)
		opts.CleanEnv, opts.AgentDir, opts.ReadFile = true, "agent", fakeFS(files)
		return testservers.AllocatedBytes(func() {
			if _, err := compile.Compile(opts); err != nil {
				t.Fatal(err)
			}
		})
	}
	allocated(10)
	a1, a2 := allocated(1<<20), allocated(2<<20)
	perByte := float64(a2-min(a1, a2)) / float64(1<<20)
	t.Logf("%.1f bytes allocated per byte of key", perByte)
	if perByte > 4 {
		t.Errorf("%.1f bytes allocated per byte of the key, want at most 4", perByte)
	}
	if !looksLike("mcpServer", "mcpServers") || !looksLike("MCPSERVERS", "mcpServers") || looksLike("mcpServersXYZ", "mcpServers") {
		t.Error("looksLike no longer finds the typos it found")
	}
}
