package remote

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// validSealed is base64 of 28 zero bytes: well-formed, opens with nothing.
const validSealed = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="

func entryJSON(fields string) string {
	return `{"version": 1, "servers": [` + fields + `]}`
}

func got(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Pos().String()+" "+string(d.Severity)+" "+d.Rule)
	}
	sort.Strings(out)
	return out
}

func TestParseReportsEachRuleAtItsValue(t *testing.T) {
	ok := `{"name": "notes", "url": "https://mcp.example.com/mcp", "transport": "auto", "tools": null, "auth": "headers", "sealed": "` + validSealed + `"}`
	cases := []struct {
		name, src string
		want      []string // "line:col severity rule"
		problem   bool     // the whole file is unusable
	}{
		{"valid", entryJSON(ok), nil, false},
		{"tools may be left out", entryJSON(strings.Replace(ok, `"tools": null, `, "", 1)), nil, false},
		{"version", `{"version": 2, "servers": []}`, []string{"x.json:1:13 error remote-version"}, true},
		{"version missing", `{"servers": []}`, []string{"x.json:1:1 error type-mismatch"}, true},
		{"version string", `{"version": "1", "servers": []}`, []string{"x.json:1:13 error type-mismatch"}, true},
		{"servers missing", `{"version": 1}`, []string{"x.json:1:1 error type-mismatch"}, true},
		{"servers not a list", `{"version": 1, "servers": {}}`, []string{"@{}@ error type-mismatch"}, true},
		{"not an object", `[]`, []string{"x.json:1:1 error type-mismatch"}, true},
		{"syntax", `{"version": 1,`, []string{"x.json:1:15 error json-syntax"}, true},
		{"comments are not JSON", "{\"version\": 1, // x\n\"servers\": []}", []string{"x.json:1:16 error json-syntax"}, true},
		{"top-level duplicate", `{"version": 1, "version": 1, "servers": []}`, []string{"x.json:1:16 error duplicate-key"}, true},
		{"unknown top-level field", `{"version": 1, "servers": [], "extra": 1}`, []string{"x.json:1:31 warning unknown-field"}, false},
		{"entry not an object", entryJSON(`"notes"`), []string{"@\"notes\"@ error type-mismatch"}, false},
		{"name", entryJSON(strings.Replace(ok, `"notes"`, `"My Notes"`, 1)), []string{"@\"My Notes\"@ error remote-name"}, false},
		{"name too long", entryJSON(strings.Replace(ok, `"notes"`, `"abcdefghijklmnopqrstu"`, 1)), []string{"@\"abcdefghijklmnopqrstu\"@ error remote-name"}, false},
		{"name missing", entryJSON(strings.Replace(ok, `"name": "notes", `, "", 1)), []string{"@{\"url\"@ error type-mismatch"}, false},
		{"duplicate name", entryJSON(ok + ",\n" + ok), []string{"x.json:2:10 error remote-name-duplicate"}, false},
		{"url scheme", entryJSON(strings.Replace(ok, `https://mcp.example.com/mcp`, `ftp://mcp.example.com/mcp`, 1)), []string{"@\"ftp:@ error remote-url"}, false},
		{"url relative", entryJSON(strings.Replace(ok, `https://mcp.example.com/mcp`, `/mcp`, 1)), []string{"@\"/mcp\"@ error remote-url"}, false},
		{"url user info", entryJSON(strings.Replace(ok, `https://mcp.example.com/mcp`, `https://me:pw@mcp.example.com/mcp`, 1)), []string{"@\"https://me@ error remote-url"}, false},
		{"url no host", entryJSON(strings.Replace(ok, `https://mcp.example.com/mcp`, `https:///mcp`, 1)), []string{"@\"https:///@ error remote-url"}, false},
		{"url insecure", entryJSON(strings.Replace(ok, `https://mcp.example.com/mcp`, `http://mcp.example.com/mcp`, 1)), []string{"@\"http://mcp@ warning remote-url-insecure"}, false},
		{"url loopback http", entryJSON(strings.Replace(ok, `https://mcp.example.com/mcp`, `http://127.0.0.1:8080/mcp`, 1)), nil, false},
		{"url localhost http", entryJSON(strings.Replace(ok, `https://mcp.example.com/mcp`, `http://localhost/mcp`, 1)), nil, false},
		{"url ipv6 loopback", entryJSON(strings.Replace(ok, `https://mcp.example.com/mcp`, `http://[::1]:9/mcp`, 1)), nil, false},
		{"transport", entryJSON(strings.Replace(ok, `"auto"`, `"websocket"`, 1)), []string{"@\"websocket\"@ error remote-transport"}, false},
		{"auth", entryJSON(strings.Replace(ok, `"headers"`, `"oauth"`, 1)), []string{"@\"oauth\"@ error remote-auth"}, false},
		{"tools empty", entryJSON(strings.Replace(ok, `"tools": null`, `"tools": []`, 1)), []string{"@[]@ error remote-tools"}, false},
		{"tools repeated", entryJSON(strings.Replace(ok, `"tools": null`, `"tools": ["a", "a"]`, 1)), []string{"@\"a\"]@ error remote-tools"}, false},
		{"tools empty name", entryJSON(strings.Replace(ok, `"tools": null`, `"tools": [""]`, 1)), []string{"@\"\"]@ error remote-tools"}, false},
		{"tools not strings", entryJSON(strings.Replace(ok, `"tools": null`, `"tools": [1]`, 1)), []string{"@1]@ error type-mismatch"}, false},
		{"tools a string", entryJSON(strings.Replace(ok, `"tools": null`, `"tools": "a"`, 1)), []string{"@\"a\", \"auth\"@ error type-mismatch"}, false},
		{"sealed not base64", entryJSON(strings.Replace(ok, validSealed, `not base64`, 1)), []string{"@\"not base64\"@ error remote-sealed"}, false},
		{"sealed too short", entryJSON(strings.Replace(ok, validSealed, `AAAA`, 1)), []string{"@\"AAAA\"@ error remote-sealed"}, false},
		{"entry duplicate key", entryJSON(strings.Replace(ok, `"auth": "headers"`, `"auth": "headers", "url": "https://evil.example.com/"`, 1)), []string{"@\"url\": \"https://evil@ error duplicate-key"}, false},
		{"unknown entry field", entryJSON(strings.Replace(ok, `"auth"`, `"comment": "x", "auth"`, 1)), []string{"@\"comment\"@ warning unknown-field"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Parse("x.json", []byte(c.src))
			g := got(f.Diagnostics)
			for i, w := range c.want {
				// "@substr@ …": the position of the last occurrence of substr.
				if rest, ok := strings.CutPrefix(w, "@"); ok {
					sub, tail, _ := strings.Cut(rest, "@")
					off := strings.LastIndex(c.src, sub)
					line := strings.Count(c.src[:off], "\n") + 1
					col := off - strings.LastIndex(c.src[:off], "\n")
					c.want[i] = fmt.Sprintf("x.json:%d:%d%s", line, col, tail)
				}
			}
			if strings.Join(g, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(g, "\n  "), strings.Join(c.want, "\n  "))
			}
			if (f.Problem != "") != c.problem {
				t.Errorf("problem %q, want set=%v", f.Problem, c.problem)
			}
			errs, _, _ := diag.Count(f.Diagnostics)
			valid := 0
			for _, e := range f.Entries {
				if e.Valid() {
					valid++
				}
			}
			if !c.problem && errs == 0 && valid != len(f.Entries) {
				t.Errorf("no errors but %d of %d entries valid", valid, len(f.Entries))
			}
			if errs > 0 && !c.problem && valid == len(f.Entries) && c.name != "entry not an object" {
				t.Errorf("errors but every entry is valid")
			}
			for _, d := range f.Diagnostics {
				if strings.Contains(d.Message, "pw@") || strings.Contains(d.Message, "evil.example.com") {
					t.Errorf("message quotes the url: %s", d.Message)
				}
			}
		})
	}
}

func TestParseFillsEntries(t *testing.T) {
	src := "{\n  \"version\": 1,\n  \"servers\": [\n    {\"name\": \"a\", \"url\": \"https://a.example/mcp\", \"transport\": \"sse\", \"tools\": [\"x\", \"y\"], \"auth\": \"headers\", \"sealed\": \"" + validSealed + "\"},\n    {\"name\": \"b\", \"url\": \"http://127.0.0.1/m\", \"transport\": \"http\", \"tools\": null, \"auth\": \"headers\", \"sealed\": \"" + validSealed + "\"}\n  ]\n}\n"
	f := Parse("s.json", []byte(src))
	if f.Problem != "" || len(f.Diagnostics) != 0 || len(f.Entries) != 2 {
		t.Fatalf("%q %v %d", f.Problem, f.Diagnostics, len(f.Entries))
	}
	a, b := f.Entries[0], f.Entries[1]
	if a.Name != "a" || a.Transport != "sse" || strings.Join(a.Tools, ",") != "x,y" || a.Auth != "headers" || a.Sealed != validSealed || a.NamePos.String() != "s.json:4:14" {
		t.Errorf("a = %+v", a)
	}
	if b.Tools != nil || b.URL != "http://127.0.0.1/m" || b.Pos.String() != "s.json:5:5" {
		t.Errorf("b = %+v", b)
	}
}

// Excerpts under a diagnostic never show the user info of a URL, and the
// caret still points at the value.
func TestSourcesHideUserInfo(t *testing.T) {
	src := entryJSON(`{"name": "n", "url": "https://me:hunter2@h.example/mcp", "transport": "auto", "auth": "headers", "sealed": "` + validSealed + `"}`)
	f := Parse("x.json", []byte(src))
	if len(f.Diagnostics) != 1 || f.Diagnostics[0].Rule != rules.RemoteURL.ID {
		t.Fatalf("%v", f.Diagnostics)
	}
	d := f.Diagnostics[0]
	line, col, ok := f.Sources(nil).Line("x.json", d.Line, d.Column)
	if !ok || strings.Contains(line, "hunter2") || !strings.Contains(line, "https://[REDACTED]@h.example") {
		t.Fatalf("line %q", line)
	}
	if []rune(line)[col-1] != '"' || !strings.HasPrefix(string([]rune(line)[col-1:]), `"https://[REDACTED]`) {
		t.Errorf("caret at %d: %q", col, string([]rune(line)[col-1:]))
	}
	if _, _, ok := f.Sources(nil).Line("other.json", 1, 1); ok {
		t.Error("answers for another file")
	}
}

func TestCheckURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://h/mcp":               "",
		"http://localhost:3000/":      "",
		"https://h:0/":                "has a port outside 1–65535",
		"https://h:99999/":            "has a port outside 1–65535",
		"mailto:x@y":                  "must be an http:// or https:// URL, not mailto://",
		"http:opaque":                 "has no host",
		"https://u@h/":                "must not contain user info (user:password@)",
		"":                            "is not a valid URL",
		"https://h/%zz":               "is not a valid URL",
		"HTTPS://H.example/mcp?q=1#f": "",
	} {
		if p, _, _ := CheckURL(raw); p != want {
			t.Errorf("%q: %q, want %q", raw, p, want)
		}
	}
	for raw, want := range map[string]bool{"http://h.example/": true, "https://h.example/": false, "http://127.0.0.2/": false, "http://a.localhost/": false, "http://[::1]/": false, "http://10.0.0.1/": true} {
		if _, _, insecure := CheckURL(raw); insecure != want {
			t.Errorf("%q insecure %v", raw, insecure)
		}
	}
}

// Excerpts never show the query (or fragment) of a URL, which may hold a
// key: not as written, not escaped, not in a file that does not parse; the
// caret still points at the same character.
func TestSourcesHideURLQuery(t *testing.T) {
	const key = "CANARY-query-8d7c6b"
	rest := `, "transport": "auto", "auth": "headers", "sealed": "` + validSealed + `"}`
	for _, c := range []struct {
		name, url string
		want      string // the url as the excerpt shows it
	}{
		{"query", `http://mcp.example.com/mcp?key=` + key, `"http://mcp.example.com/mcp?[REDACTED]"`},
		{"fragment", `http://mcp.example.com/mcp#` + key, `"http://mcp.example.com/mcp#[REDACTED]"`},
		{"query and fragment", `http://mcp.example.com/mcp?a=1&k=` + key + `#x`, `"http://mcp.example.com/mcp?[REDACTED]"`},
		{"escaped", `http://mcp.example.com/mcp\u003fkey=` + key + `\u0026b=\"1\"`, `"http://mcp.example.com/mcp\u003f[REDACTED]"`},
		{"non-ASCII", `http://mcp.example.com/é?ключ=` + key, `"http://mcp.example.com/é?[REDACTED]"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Plain http to a public host: a warning at the url.
			src := entryJSON(`{"name": "n", "url": "` + c.url + `"` + rest)
			f := Parse("x.json", []byte(src))
			if len(f.Diagnostics) != 1 || f.Diagnostics[0].Rule != rules.RemoteURLInsecure.ID {
				t.Fatalf("%v", f.Diagnostics)
			}
			d := f.Diagnostics[0]
			line, col, ok := f.Sources(nil).Line("x.json", d.Line, d.Column)
			if !ok || strings.Contains(line, key) || !strings.Contains(line, `"url": `+c.want+`, "transport"`) {
				t.Fatalf("line %q", line)
			}
			if got := string([]rune(line)[col-1:]); !strings.HasPrefix(got, c.want) {
				t.Errorf("caret at %d: %q", col, got)
			}
			// A column after the url moves with the text.
			after := strings.Index(src, `"transport"`)
			_, col2, _ := f.Sources(nil).Line("x.json", 1, len([]rune(src[:after]))+1)
			if got := string([]rune(line)[col2-1:]); !strings.HasPrefix(got, `"transport"`) {
				t.Errorf("column after the url at %d: %q", col2, got)
			}
			// A column inside the query points at its [REDACTED].
			inside := strings.Index(src, key)
			_, col3, _ := f.Sources(nil).Line("x.json", 1, len([]rune(src[:inside]))+1)
			if got := string([]rune(line)[col3-1:]); !strings.HasPrefix(got, "[REDACTED]") {
				t.Errorf("column inside the query at %d: %q", col3, got)
			}
		})
	}
	// A file that does not parse: the url string runs to the end of the line.
	src := "{\"version\": 1, \"servers\": [{\"name\": \"n\", \"url\": \"https://h.example/mcp?key=" + key + "\n"
	f := Parse("x.json", []byte(src))
	if len(f.Diagnostics) != 1 || f.Diagnostics[0].Rule != "json-syntax" {
		t.Fatalf("%v", f.Diagnostics)
	}
	line, _, ok := f.Sources(nil).Line("x.json", 1, 1)
	if !ok || strings.Contains(line, key) || !strings.HasSuffix(line, `"https://h.example/mcp?[REDACTED]`) {
		t.Errorf("line %q", line)
	}
	// Strings that are not URLs keep their question marks.
	if got, col := hideQueries(`"name": "why?", "x": "a?b"`, 10); got != `"name": "why?", "x": "a?b"` || col != 10 {
		t.Errorf("%q %d", got, col)
	}
}

// The extension reads servers.json with System.Text.Json, which refuses
// more than 64 levels: so does Parse, at the 65th opening bracket.
func TestParseRefusesWhatTheHostCannotRead(t *testing.T) {
	nest := func(arrays int) string {
		return `{"version": 1, "servers": [], "x": ` + strings.Repeat("[", arrays) + strings.Repeat("]", arrays) + `}`
	}
	if f := Parse("x.json", []byte(nest(63))); f.Problem != "" {
		t.Errorf("64 levels: %s", f.Problem)
	}
	src := nest(64)
	f := Parse("x.json", []byte(src))
	want := fmt.Sprintf("x.json:1:%d error json-syntax", strings.Index(src, "[[")+64)
	if g := got(f.Diagnostics); len(g) != 1 || g[0] != want || !strings.Contains(f.Problem, "System.Text.Json") {
		t.Errorf("65 levels: %v (problem %q), want %s", g, f.Problem, want)
	}
}
