package craftbot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/diagtest"
)

func check(t *testing.T, src string, opts Options) (*Config, []diag.Diagnostic) {
	t.Helper()
	cfg, ds, err := Check("mcp_config.json", []byte(src), opts)
	if err != nil {
		t.Fatal(err)
	}
	diagtest.CheckPositions(t, ds, map[string][]string{"mcp_config.json": diagtest.Lines([]byte(src))})
	return cfg, ds
}

func rulesOf(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%d:%d %s %s", d.Line, d.Column, d.Severity, d.Rule))
	}
	return out
}

// Each entry's span cuts exactly its text out of the file, also after a
// byte order mark, so that an editor can replace one entry and keep every
// other byte.
func TestCheckEntrySpans(t *testing.T) {
	entries := []string{
		`{"name": "a", "transport": "stdio", "command": "npx"}`,
		`"not an object"`,
		`{"name": "b", "transport": "sse", "url": "https://b.example.com/sse", "enabled": false}`,
	}
	src := "{\n  \"mcp_servers\": [\n    " + strings.Join(entries, ",\n    ") + "\n  ]\n}\n"
	for _, prefix := range []string{"", "\xef\xbb\xbf"} {
		data := []byte(prefix + src)
		cfg, _, err := Check("mcp_config.json", data, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Entries) != len(entries) {
			t.Fatalf("%d entries, want %d", len(cfg.Entries), len(entries))
		}
		for i, e := range cfg.Entries {
			if got := string(data[e.Start:e.End]); got != entries[i] {
				t.Errorf("bom %v: entry %d spans %q, want %q", prefix != "", i, got, entries[i])
			}
		}
		if cfg.Entries[0].Skip != "" || cfg.Entries[1].Skip != RuleEntryInvalid || cfg.Entries[2].Skip != "" {
			t.Errorf("skips: %q %q %q", cfg.Entries[0].Skip, cfg.Entries[1].Skip, cfg.Entries[2].Skip)
		}
	}
}

// Malformed files get positioned diagnostics and never a panic: the file
// as a whole is an error (no server loads); an entry the host skips or
// cannot start is an error when it is enabled.
func TestCheckMalformedFiles(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"not JSON", `{"mcp_servers": [}`, []string{"1:18 error json-syntax"}},
		{"empty file", ``, []string{"1:1 error json-syntax"}},
		{"not an object", `[{"name": "a"}]`, []string{"1:1 error type-mismatch"}},
		{"servers not a list", `{"mcp_servers": {"a": {}}}`, []string{"1:17 error type-mismatch"}},
		{"auto_connect not a bool", `{"auto_connect": "yes", "mcp_servers": []}`, []string{"1:18 warning cb-field-type"}},
		{"auto_connect says false", `{"auto_connect": "false", "mcp_servers": []}`, []string{"1:18 error cb-field-type"}},
		{"auto_connect false", `{"auto_connect": 0, "mcp_servers": []}`, []string{"1:18 warning cb-field-type", "1:18 warning cb-auto-connect-off"}},
		{"unknown top-level field", `{"mcp_server": []}`, []string{"1:2 warning cb-edit-drops"}},
		{"entry not an object", `{"mcp_servers": [1, "x", null, []]}`, []string{
			"1:18 error cb-entry-invalid", "1:21 error cb-entry-invalid", "1:26 error cb-entry-invalid", "1:32 error cb-entry-invalid",
			"1:18 warning cb-edit-drops", "1:21 warning cb-edit-drops", "1:26 warning cb-edit-drops", "1:32 warning cb-edit-drops"}},
		{"wrong types", `{"mcp_servers": [{"name": 1, "transport": "stdio", "command": ["npx"], "args": [1], "env": {"A": 2}, "enabled": "true", "description": null, "url": 5}]}`,
			[]string{"1:27 error cb-name-invalid", "1:63 error cb-cannot-start", "1:81 error cb-cannot-start", "1:98 error cb-cannot-start",
				"1:113 warning cb-field-type", "1:142 warning cb-field-ignored"}},
		{"unknown entry field", `{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "npx", "comand": "x"}]}`, []string{"1:72 warning cb-edit-drops"}},
		{"duplicate key keeps the last", `{"mcp_servers": [{"name": "a", "transport": "sse", "transport": "stdio", "command": "npx"}]}`,
			[]string{"1:32 warning cb-duplicate-key"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ds := check(t, c.src, Options{})
			got := rulesOf(ds)
			want := append([]string(nil), c.want...)
			diagSortStrings(want)
			diagSortStrings(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func diagSortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// The first entry that loads takes a name; an entry the host skips for
// another reason takes none, and a later entry of a taken name loads but
// is shadowed: the host starts the first for it.
func TestCheckDuplicateNames(t *testing.T) {
	cfg, _ := check(t, `{"mcp_servers": [
		{"name": "fs", "transport": "grpc"},
		{"name": "fs", "transport": "stdio", "command": "a"},
		{"name": "fs", "transport": "stdio", "command": "b"},
		{"name": "FS", "transport": "stdio", "command": "c"}]}`, Options{})
	e := cfg.Entries
	if e[0].Skip != RuleTransport || e[1].Skip != "" || e[2].Skip != "" || e[2].Winner != e[1] || e[3].Skip != "" || e[3].Winner != nil {
		t.Errorf("skips %q %q %q %q", e[0].Skip, e[1].Skip, e[2].Skip, e[3].Skip)
	}
	if got := cfg.Lookup("fs"); got != e[1] || got.Command != "a" {
		t.Errorf("Lookup(fs) = %+v", got)
	}
}

// Target OS marks: what does not exist on the target, and nothing that
// does.
func TestLaunchProblem(t *testing.T) {
	for _, c := range []struct {
		goos, command string
		args          []string
		bad           bool
	}{
		{"linux", "/Applications/Claude.app/Contents/MacOS/x", nil, true},
		{"linux", "npx", []string{"-y", "pkg", "/Users/me/notes"}, true},
		{"linux", "open", []string{"-a", "Notes"}, true},
		{"linux", "osascript", []string{"-e", "x"}, true},
		{"linux", "C:\\bin\\x", nil, true},
		{"linux", "server.EXE", nil, true},
		{"linux", "npx", []string{"\\\\nas\\share"}, true},
		{"darwin", "server.ps1", nil, true},
		{"darwin", "/Applications/X.app/Contents/MacOS/x", nil, false},
		{"darwin", "open", []string{"-a", "Notes"}, false},
		{"windows", "/usr/bin/python3", nil, true},
		{"windows", "~/bin/mcp", nil, true},
		{"windows", "cmd", []string{"/c", "npx", "-y", "x"}, false},
		{"windows", "C:\\bin\\x.exe", []string{"D:/data"}, false},
		{"linux", "uvx", []string{"mcp-server-time", "--tz=Europe/Paris"}, false},
		{"linux", "/usr/local/bin/mcp", []string{"/srv/data"}, false},
		{"linux", "npx", []string{"-y", "@scope/pkg.app"}, false},
	} {
		e := &Entry{Command: c.command, Args: c.args, Node: nil}
		_, why := launchProblemNoPos(c.goos, e)
		if (why != "") != c.bad {
			t.Errorf("%s: %s %v: problem %q, want bad=%v", c.goos, c.command, c.args, why, c.bad)
		}
	}
}

// launchProblemNoPos runs launchProblem on an entry without a node.
func launchProblemNoPos(goos string, e *Entry) (diag.Pos, string) {
	if e.Node == nil {
		e.Node = mustParse(`{}`)
	}
	return launchProblem(goos, e)
}

// SecretSpans finds env values (and values of unknown fields), never the
// fields of the file, also in a file that does not parse.
func TestSecretSpans(t *testing.T) {
	src := `{"mcp_servers": [{"name": "gh", "transport": "stdio", "command": "npx", "args": ["--x", "y"],
	"env": {"TOKEN": "tok\"en-1", "EMPTY": "", "N": 5}, "api_key": "k-2"}, {"env": {"B": "broken-3"` + "\n"
	var got []string
	for _, s := range SecretSpans([]byte(src)) {
		got = append(got, src[s.Start:s.End])
	}
	want := []string{`tok\"en-1`, "k-2", "broken-3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("spans %q, want %q", got, want)
	}
}

// Ten thousand entries, minified on one line, many with a problem: every
// entry read, every diagnostic positioned (2 000 under the race detector).
func TestCheckTenThousandMinified(t *testing.T) {
	n := 10000
	if raceEnabled {
		n = 2000
	}
	data := bigConfig(n, true)
	if bytes.Count(data, []byte("\n")) != 0 {
		t.Fatal("not minified")
	}
	cfg, ds, err := Check("mcp_config.json", data, Options{TargetOS: "linux"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Entries) != n {
		t.Fatalf("%d entries", len(cfg.Entries))
	}
	counts := map[string]int{}
	for _, d := range ds {
		counts[d.Rule]++
	}
	// Every 10th entry lacks a command, every 7th has an empty credential.
	if counts[RuleMissingCommand] != n/10 || counts[RuleEnvEmpty] == 0 {
		t.Errorf("counts %v", counts)
	}
	// The data is ASCII on one line: a column is a byte offset + 1.
	for _, d := range ds {
		if d.Line != 1 || d.Column < 1 || d.Column > len(data) || d.Rule == "" || d.Message == "" {
			t.Fatalf("diagnostic outside the file: %+v", d)
		}
	}
}

func bigConfig(n int, minified bool) []byte {
	type entry struct {
		Name      string            `json:"name"`
		Transport string            `json:"transport"`
		Command   string            `json:"command,omitempty"`
		Args      []string          `json:"args"`
		Env       map[string]string `json:"env"`
		Enabled   bool              `json:"enabled"`
	}
	var es []entry
	for i := 0; i < n; i++ {
		e := entry{Name: fmt.Sprintf("s%d", i), Transport: "stdio", Command: "npx", Args: []string{"-y", fmt.Sprintf("pkg-%d", i)},
			Env: map[string]string{"API_KEY": fmt.Sprintf("key-%08d-secret", i)}, Enabled: i%2 == 0}
		if i%10 == 0 {
			e.Command = ""
		}
		if i%7 == 0 {
			e.Env["API_KEY"] = ""
		}
		es = append(es, e)
	}
	v := map[string]any{"auto_connect": true, "mcp_servers": es}
	if minified {
		b, _ := json.Marshal(v)
		return b
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return b
}

func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{100, 10000} {
		for _, minified := range []bool{false, true} {
			data := bigConfig(n, minified)
			b.Run(fmt.Sprintf("entries=%d,minified=%v", n, minified), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, _, err := Check("mcp_config.json", data, Options{TargetOS: "linux"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
