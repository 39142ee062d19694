package craftbot

import (
	"strings"
	"testing"
)

// OS marks come from real signals: a description that names the one OS a
// server works on marks it on the others, and a placeholder path, which
// exists nowhere, marks it on none. The catalog's three Apple servers (a
// placeholder Windows path and "macOS ONLY" in the description) are marked
// on windows and linux, and not on darwin.
func TestLaunchProblemSignals(t *testing.T) {
	apple := &Entry{Command: "node", Args: []string{"C:/path/to/apple-notes-mcp/dist/index.js"},
		Description: "Read and write Apple Notes via AppleScript. macOS ONLY — will not work on Windows."}
	for _, c := range []struct {
		name  string
		e     *Entry
		goos  string
		want  string // "" when unmarked
		where string // the field the mark points at
	}{
		{"apple on darwin", apple, "darwin", "", ""},
		{"apple on windows", apple, "windows", "its description says it works on macOS only", FieldDescription},
		{"apple on linux", apple, "linux", "its description says it works on macOS only", FieldDescription},
		{"placeholder on linux", &Entry{Command: "node", Args: []string{"C:/path/to/gmail/build/index.js"}}, "linux", "", ""},
		{"placeholder command on windows", &Entry{Command: "/path/to/server", Args: nil}, "windows", "", ""},
		{"real windows path on linux", &Entry{Command: "node", Args: []string{"C:/Tools/gmail/index.js"}}, "linux", `args[0] "C:/Tools/gmail/index.js" is a Windows path`, FieldArgs},
		{"windows-only on darwin", &Entry{Command: "npx", Args: []string{"-y", "x"}, Description: "Drives Outlook; Windows-only."}, "darwin", "its description says it works on Windows only", FieldDescription},
		{"windows-only on windows", &Entry{Command: "npx", Args: []string{"-y", "x"}, Description: "Drives Outlook; Windows-only."}, "windows", "", ""},
		{"only runs on linux", &Entry{Command: "npx", Args: []string{"-y", "x"}, Description: "Only runs on Linux (uses /proc)."}, "windows", "its description says it works on Linux only", FieldDescription},
		{"requires macOS", &Entry{Command: "npx", Args: []string{"-y", "x"}, Description: "Requires macOS 13 or later."}, "linux", "its description says it works on macOS only", FieldDescription},
		{"names an OS without only", &Entry{Command: "npx", Args: []string{"-y", "mcp-kali-server"}, Description: "Access Kali Linux security tools. Requires a local Kali Linux instance."}, "darwin", "", ""},
		{"shortcuts on linux", &Entry{Command: "shortcuts", Args: []string{"run", "x"}}, "linux", `command "shortcuts" runs on macOS only`, FieldCommand},
	} {
		e := *c.e
		e.Node = mustParse(`{"command": "x", "args": ["a"], "description": "d"}`)
		pos, why := launchProblem(c.goos, &e)
		if why != c.want {
			t.Errorf("%s: problem %q, want %q", c.name, why, c.want)
			continue
		}
		if c.where != "" {
			want := e.Node.Get(c.where).Pos()
			if c.where == FieldArgs {
				want = e.Node.Get(FieldArgs).Elems[0].Pos()
			}
			if pos != want {
				t.Errorf("%s: at %v, want %v (%s)", c.name, pos, want, c.where)
			}
		}
	}
}

// On the shape of the shipped catalog's Apple entries, Check marks the
// server on linux and windows only.
func TestCheckMarksDescribedOS(t *testing.T) {
	data := []byte(`{"mcp_servers": [{"name": "icloud-mcp", "description": "Manage iCloud files. macOS ONLY — will not work on Windows.",
  "transport": "stdio", "command": "node", "args": ["C:/path/to/icloud-mcp/dist/index.js"], "enabled": false}]}`)
	for goos, marked := range map[string]bool{"darwin": false, "linux": true, "windows": true} {
		cfg, ds, err := Check("mcp_config.json", data, Options{TargetOS: goos})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range ds {
			if d.Rule == RuleTargetOS {
				n++
				if !strings.Contains(d.Message, "macOS only") || d.Line != 1 {
					t.Errorf("%s: %s", goos, d.Message)
				}
			}
		}
		if (n == 1) != marked || (cfg.Entries[0].OSProblem != "") != marked {
			t.Errorf("%s: %d marks, OSProblem %q; want marked=%v", goos, n, cfg.Entries[0].OSProblem, marked)
		}
	}
}

// FuzzOSPrefilter: the prefilter keeps every description osOnlyRE
// matches.
func FuzzOSPrefilter(f *testing.F) {
	for _, s := range []string{"macOS ONLY — will not work on Windows", "Windows-only tools", "only works on Linux", "Runs only for OS X",
		"REQUIRES macos", "requireS Windows", "a server for everyone", "ONL Y", "", "Linux_only"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if osOnlyRE.MatchString(s) && !mayNameOneOS(s) {
			t.Fatalf("osOnlyRE matches %q, the prefilter drops it", s)
		}
	})
}
