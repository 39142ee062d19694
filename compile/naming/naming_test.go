package naming

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/golden"
)

// goldenDir is golden/naming at the repository root.
var goldenDir = filepath.Join("..", "..", "golden", "naming")

// checkGolden compares v, as canonical JSON, with golden/naming/<name>.json,
// or rewrites that file with -update (golden.Compare).
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, filepath.Join(goldenDir, name+".json"), buf.String())
}

// checkName asserts the invariants every visible name satisfies.
func checkName(t testing.TB, name string) {
	t.Helper()
	if n := utf8.RuneCountInString(name); n > MaxLen {
		t.Errorf("%q has %d characters, more than %d", name, n, MaxLen)
	}
	for _, c := range name {
		if !allowed(c) {
			t.Errorf("%q contains %q", name, c)
		}
	}
}

type visibleCase struct {
	Case   string `json:"case"`
	Prefix string `json:"prefix"`
	Tool   string `json:"tool"`
	Quoted string `json:"quoted"` // prefix+tool, Go-quoted with ASCII escapes (shows invalid bytes)
	Name   string `json:"name"`
	Runes  int    `json:"runes"`
}

var (
	a46 = strings.Repeat("a", 46)
	a47 = strings.Repeat("a", 47)
	a48 = strings.Repeat("a", 48)
)

func TestVisibleGolden(t *testing.T) {
	cases := []visibleCase{
		{Case: "plain", Tool: "echo"},
		{Case: "prefix", Prefix: "gh_", Tool: "search_issues"},
		{Case: "hyphen and underscore kept", Prefix: "my-srv_", Tool: "get-item_2"},
		{Case: "empty prefix and empty tool", Prefix: "", Tool: ""},
		{Case: "prefix only (empty tool name)", Prefix: "gh_", Tool: ""},
		{Case: "punctuation and space", Tool: "files.read all/now"},
		{Case: "Latin-1 accent", Tool: "café"},
		{Case: "CJK, one _ per character", Tool: "日本語"},
		{Case: "emoji (4 bytes) is one _", Tool: "🚀launch"},
		{Case: "combining mark is its own character", Tool: "e\u0301te"},
		{Case: "invalid UTF-8: one _ per byte", Tool: "a\xff\xfeb"},
		{Case: "truncated UTF-8 sequence: one _ per byte", Tool: "x\xe6\x97"},
		{Case: "invalid prefix characters", Prefix: "g.h ", Tool: "x"},
		{Case: "exactly 48", Tool: a48},
		{Case: "49 is cut", Tool: a48 + "b"},
		{Case: "prefix pushes over 48", Prefix: "very_long_prefix_", Tool: "get_repository_collaborator_permissions"},
		{Case: "2-byte character straddling byte 48", Tool: a47 + "é" + "zz"},
		{Case: "3-byte characters at the cut", Tool: a46 + "日本語"},
		{Case: "multi-byte character just after the cut", Tool: a48 + "é"},
		{Case: "long non-ASCII name", Tool: strings.Repeat("ü", 60)},
		{Case: "invalid bytes at the cut", Tool: a47 + "\xff\xff\xff"},
	}
	for i := range cases {
		c := &cases[i]
		c.Quoted = fmt.Sprintf("%+q", c.Prefix+c.Tool)
		c.Name = Visible(c.Prefix, c.Tool)
		c.Runes = utf8.RuneCountInString(c.Name)
		checkName(t, c.Name)
	}
	// Spot checks, independent of the golden file.
	spot := map[string]string{
		"punctuation and space":                    "files_read_all_now",
		"CJK, one _ per character":                 "___",
		"emoji (4 bytes) is one _":                 "_launch",
		"invalid UTF-8: one _ per byte":            "a__b",
		"truncated UTF-8 sequence: one _ per byte": "x__",
		"2-byte character straddling byte 48":      a47 + "_",
		"3-byte characters at the cut":             a46 + "__",
		"multi-byte character just after the cut":  a48,
		"prefix only (empty tool name)":            "gh_",
		"empty prefix and empty tool":              "",
	}
	for _, c := range cases {
		if want, ok := spot[c.Case]; ok && c.Name != want {
			t.Errorf("%s: Visible(%q, %q) = %q, want %q", c.Case, c.Prefix, c.Tool, c.Name, want)
		}
	}
	checkGolden(t, "visible", cases)
}

type formCase struct {
	Func  string   `json:"func"`
	Args  []string `json:"args"`
	Name  string   `json:"name"`
	Runes int      `json:"runes"`
}

func TestRemoteAndProviderGolden(t *testing.T) {
	var cases []formCase
	add := func(fn string, name string, args ...string) {
		checkName(t, strings.TrimPrefix(name, ProviderPrefix))
		cases = append(cases, formCase{Func: fn, Args: args, Name: name, Runes: utf8.RuneCountInString(name)})
	}
	for _, a := range [][2]string{
		{"notes", "search"},
		{"notes", "get.page"},
		{"wiki-2", "Seite_lesen_ä"},
		{"notes", ""},
		{"a-very-long-server-n", "and_a_tool_name_that_is_long_enough_to_be_cut"},
	} {
		add("Remote", Remote(a[0], a[1]), a[0], a[1])
	}
	add("Provider", Provider(Visible("gh_", "search")), Visible("gh_", "search"))
	add("Provider", Provider(Remote("notes", "search")), Remote("notes", "search"))
	add("Provider", Provider(Visible("", a48+"zzz")), Visible("", a48+"zzz"))
	if got := Remote("notes", "search"); got != "notes__search" {
		t.Errorf("Remote = %q", got)
	}
	if got := Provider(Visible("", a48)); len(got) != 63 {
		t.Errorf("Provider of a 48-character name has %d characters, want 63", len(got))
	}
	checkGolden(t, "remote-provider", cases)
}

type assignCase struct {
	Case     string        `json:"case"`
	Builtins []string      `json:"builtins"` // null = DefaultBuiltins
	Servers  []ServerTools `json:"servers"`
	Results  []Result      `json:"results"`
}

// long is exactly 48 characters.
var long = "get_repository_collaborator_permission_level_for"

func assignCases() []assignCase {
	manyLong := make([]string, 11)
	for i := range manyLong {
		manyLong[i] = long + fmt.Sprintf("_variant_%02d", i)
	}
	return []assignCase{
		{Case: "clean", Servers: []ServerTools{
			{Server: "github", Prefix: "gh_", Tools: []string{"search_issues", "get_issue"}},
			{Server: "fs", Tools: []string{"list_dir", "read_file"}},
		}},
		{Case: "sanitized-and-truncated", Servers: []ServerTools{
			{Server: "s", Prefix: "s-", Tools: []string{"files.read", "café", long + "_x", "naïve" + long}},
		}},
		{Case: "dedupe-within-server", Servers: []ServerTools{
			{Server: "s", Tools: []string{"a.b", "a b", "a_b", "a/b"}},
			{Server: "t", Tools: []string{"x", "x_2", "x"}},
			{Server: "u", Tools: []string{"y", "y", "y_2"}},
			{Server: "v", Tools: []string{"café", "cafe", "cafè"}},
		}},
		{Case: "dedupe-at-48", Servers: []ServerTools{
			{Server: "s", Tools: manyLong},
		}},
		{Case: "builtins-default", Servers: []ServerTools{
			{Server: "fs", Tools: []string{"read", "write", "Read", "reader", "send", "ls", "read"}},
			{Server: "shell", Prefix: "", Tools: []string{"bash", "grep", "find", "edit"}},
			{Server: "mcp__weird.name", Tools: []string{"ls"}},
		}},
		{Case: "builtins-custom", Builtins: []string{"search", "gh_get"}, Servers: []ServerTools{
			{Server: "fs", Tools: []string{"read", "search"}},
			{Server: "github", Prefix: "gh_", Tools: []string{"get", "search"}},
		}},
		{Case: "builtins-none", Builtins: []string{}, Servers: []ServerTools{
			{Server: "fs", Tools: []string{"read", "bash"}},
		}},
		{Case: "collision-across-servers", Servers: []ServerTools{
			{Server: "alpha", Tools: []string{"search", "x.y", "only_alpha"}},
			{Server: "beta", Tools: []string{"search", "x_y", "only_beta"}},
			{Server: "gamma", Tools: []string{"search", "only_beta", "x_y"}},
		}},
		{Case: "collision-after-dedupe", Servers: []ServerTools{
			{Server: "alpha", Tools: []string{"a", "a_2"}},
			{Server: "beta", Tools: []string{"a", "a"}},
		}},
		{Case: "empty-names", Servers: []ServerTools{
			{Server: "p", Prefix: "p_", Tools: []string{"", "", "x"}},
			{Server: "q", Tools: []string{"", "y"}},
		}},
		{Case: "remote", Servers: []ServerTools{
			{Server: "stdio", Tools: []string{"notes__get"}},
			{Server: "notes", Remote: true, Prefix: "ignored_", Tools: []string{"search", "get", "search", "get page", "get_page"}},
			{Server: "wiki", Remote: true, Tools: []string{long}},
		}},
		{Case: "precedence", Servers: []ServerTools{
			// "second"'s second tool is sanitized, cut, deduped to this name, and then collides.
			{Server: "first", Tools: []string{"gr_p" + long[:42] + "_2"}},
			{Server: "second", Tools: []string{"grép" + long, "grép" + long, "gr.p"}},
		}},
	}
}

func TestAssignGolden(t *testing.T) {
	for _, c := range assignCases() {
		t.Run(c.Case, func(t *testing.T) {
			c.Results = Assign(c.Servers, Options{Builtins: c.Builtins})
			checkResults(t, c.Servers, c.Results)
			if again := Assign(c.Servers, Options{Builtins: c.Builtins}); !reflect.DeepEqual(again, c.Results) {
				t.Error("Assign is not deterministic")
			}
			checkGolden(t, "assign-"+c.Case, c)
		})
	}
}

// checkResults asserts the invariants of Assign's output.
func checkResults(t testing.TB, servers []ServerTools, res []Result) {
	t.Helper()
	i := 0
	seen := map[string]bool{}
	for _, s := range servers {
		for _, tool := range s.Tools {
			if i >= len(res) {
				t.Fatalf("only %d results", len(res))
			}
			r := res[i]
			i++
			if r.Server != s.Server || r.Tool != tool {
				t.Errorf("result %d is %s/%q, want %s/%q", i, r.Server, r.Tool, s.Server, tool)
			}
			if r.Rule != "" && r.Message == "" {
				t.Errorf("%s/%q: rule %s without message", r.Server, r.Tool, r.Rule)
			}
			if !utf8.ValidString(r.Message) || !utf8.ValidString(r.Suggestion) {
				t.Errorf("%s/%q: message is not valid UTF-8", r.Server, r.Tool)
			}
			if r.Name == "" {
				switch r.Rule {
				case RuleBuiltin, RuleCollision, RuleEmpty:
				default:
					t.Errorf("%s/%q: dropped with rule %q", r.Server, r.Tool, r.Rule)
				}
				continue
			}
			checkName(t, r.Name)
			if seen[r.Name] {
				t.Errorf("%q registered twice", r.Name)
			}
			seen[r.Name] = true
		}
	}
	if i != len(res) {
		t.Errorf("%d results for %d tools", len(res), i)
	}
}

func TestAssignSpotChecks(t *testing.T) {
	res := Assign([]ServerTools{{Server: "s", Tools: []string{"a", "a_2", "a", "a", "a"}}}, Options{})
	var names []string
	for _, r := range res {
		names = append(names, r.Name)
	}
	if got, want := strings.Join(names, ","), "a,a_2,a_3,a_4,a_5"; got != want {
		t.Errorf("names = %s, want %s", got, want)
	}

	// _10 and beyond still fit in 48.
	tools := make([]string, 12)
	for i := range tools {
		tools[i] = a48 + fmt.Sprint(i)
	}
	res = Assign([]ServerTools{{Server: "s", Tools: tools}}, Options{})
	if got := res[9].Name; got != strings.Repeat("a", 45)+"_10" {
		t.Errorf("tenth = %q", got)
	}
	if got := res[1].Name; got != a46+"_2" {
		t.Errorf("second = %q", got)
	}
	for _, r := range res {
		if r.Rule != RuleTruncated && r.Rule != RuleDeduplicated {
			t.Errorf("%q: rule %q", r.Name, r.Rule)
		}
	}

	// Collision message names both servers; builtin suggests a prefix.
	res = Assign([]ServerTools{
		{Server: "alpha", Tools: []string{"search"}},
		{Server: "beta", Tools: []string{"search", "read"}},
	}, Options{})
	if r := res[1]; r.Rule != RuleCollision || !strings.Contains(r.Message, `"alpha"`) || !strings.Contains(r.Message, `"beta"`) {
		t.Errorf("collision: %+v", r)
	}
	if r := res[2]; r.Rule != RuleBuiltin || !strings.Contains(r.Suggestion, `"toolPrefix": "beta_"`) {
		t.Errorf("builtin: %+v", r)
	}
}

func TestAssignInvariantsLarge(t *testing.T) {
	servers := benchServers()
	checkResults(t, servers, Assign(servers, Options{}))
}

// benchServers returns 100 servers of 100 tools each (10 000 tools), with
// prefixes, long names, non-ASCII names, duplicates and collisions.
func benchServers() []ServerTools {
	servers := make([]ServerTools, 100)
	for s := range servers {
		st := ServerTools{Server: fmt.Sprintf("server-%03d", s)}
		if s%2 == 0 {
			st.Prefix = fmt.Sprintf("p%d_", s)
		}
		for i := range 100 {
			var name string
			switch i % 5 {
			case 0:
				name = fmt.Sprintf("tool_%d", i)
			case 1:
				name = fmt.Sprintf("wérkzeug.%d", i)
			case 2:
				name = long + fmt.Sprintf("_%d", i) // cut, then deduped
			case 3:
				name = "read"
			case 4:
				name = fmt.Sprintf("shared_%d", i%20) // collides across servers
			}
			st.Tools = append(st.Tools, name)
		}
		servers[s] = st
	}
	return servers
}

func BenchmarkAssign(b *testing.B) {
	servers := benchServers()
	b.ReportAllocs()
	for b.Loop() {
		Assign(servers, Options{})
	}
}

func FuzzVisible(f *testing.F) {
	for _, s := range [][2]string{
		{"", "echo"}, {"gh_", "search"}, {"", ""}, {"p", "café"}, {"", "\xff\xfe"},
		{"", a47 + "é"}, {"x.", "日本語🚀"}, {a48, a48},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, prefix, tool string) {
		name := Visible(prefix, tool)
		checkName(t, name)
		if again := Visible("", name); again != name {
			t.Errorf("Visible is not idempotent: %q → %q", name, again)
		}
		if n := utf8.RuneCountInString(prefix + tool); n <= MaxLen && utf8.RuneCountInString(name) != n {
			t.Errorf("Visible(%q, %q) = %q changed the number of characters", prefix, tool, name)
		}
	})
}
