package compile

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

func TestParseDotenv(t *testing.T) {
	src := "# comment\n\nA=1\nexport B = two words  \nC='lit $x \\n'\nD=\"q \\\"x\\\" \\n\" # note\nE=\n"
	vars, ds, _ := parseDotenv("h.env", []byte(src), nil)
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	got := map[string]string{}
	for _, v := range vars {
		got[v.Name] = v.Value
	}
	want := map[string]string{"A": "1", "B": "two words", "C": `lit $x \n`, "D": "q \"x\" \n", "E": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if vars[1].Pos().Line != 4 || vars[1].Pos().Column != 8 || vars[1].ValuePos().Column != 12 {
		t.Errorf("B at %v, value at %v", vars[1].Pos(), vars[1].ValuePos())
	}
}

// A quoted value may span lines (python-dotenv, docker compose and node's
// dotenv read it so); its position is its opening quote, and the variables
// after it are read as usual. A CRLF file's value has LF line breaks.
func TestParseDotenvMultiLine(t *testing.T) {
	src := "K=\"-----BEGIN KEY-----\r\nbody\\tx\r\n-----END KEY-----\" # key\r\nS='a\n\nb'\nN=after\n"
	vars, ds, masks := parseDotenv("h.env", []byte(src), func(n string) bool { return n == "K" })
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	got := map[string]string{}
	for _, v := range vars {
		got[v.Name] = v.Value
	}
	want := map[string]string{"K": "-----BEGIN KEY-----\nbody\tx\n-----END KEY-----", "S": "a\n\nb", "N": "after"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if p := vars[1].Pos(); p.Line != 4 || vars[2].Pos().Line != 7 {
		t.Errorf("S at %v, N at %v", p, vars[2].Pos())
	}
	// Every line of the secret's value is masked in excerpts.
	if masks[1] != "K=[REDACTED]" || masks[2] != "[REDACTED]" || masks[3] != "[REDACTED]" || len(masks) != 3 {
		t.Errorf("masks %v", masks)
	}
}

// A line that does not parse is never quoted: not in the message, and its
// excerpt shows at most the name and = of a line whose name parsed.
func TestParseDotenvErrorsQuoteNothing(t *testing.T) {
	const canary = "MIIEcnryPEMbody0123456789"
	for _, src := range []string{
		canary + "\n",
		"X " + canary + "=1\n",
		`"` + canary + `"=1` + "\n",
		"A=\"" + canary + "\n",
		"A='x\n" + canary + "\n",
		"A=\"x\"" + canary + "\n",
		"A=\"x\n" + canary + "\" y\n",
		canary + "+/==\n",
	} {
		_, ds, masks := parseDotenv("h.env", []byte(src), nil)
		if len(ds) != 1 {
			t.Errorf("%q: %d diagnostics, want 1: %v", src, len(ds), ds)
			continue
		}
		if strings.Contains(ds[0].Message+ds[0].Suggestion, canary) {
			t.Errorf("%q: the message quotes the line: %v", src, ds[0])
		}
		for n := 1; n <= strings.Count(src, "\n"); n++ {
			if masks[n] == "" || strings.Contains(masks[n], canary) {
				t.Errorf("%q: line %d's excerpt is %q", src, n, masks[n])
			}
		}
	}
}

func TestParseDotenvErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"JUSTAKEY\n", "h.env:1:1"},
		{"A=\"open\n", "h.env:1:3"},
		{"  B='x\n", "h.env:1:5"},
		{"C=\"x\" y\n", "h.env:1:7"},
		{"=v\n", "h.env:1:1"},
	} {
		_, ds, _ := parseDotenv("h.env", []byte(c.src), nil)
		if len(ds) != 1 || ds[0].Pos().String() != c.want || ds[0].Rule != rules.EnvFileSyntax.ID {
			t.Errorf("%q: got %v, want one env-file-syntax at %s", c.src, ds, c.want)
		}
	}
}

func TestRedactorJSONForm(t *testing.T) {
	r := redact.New([]string{`se"cret\x`, "abc", "long-secret-1", "secret-1"})
	if got := r.Redact(`a se"cret\x b`); got != "a [REDACTED] b" {
		t.Errorf("raw form: %q", got)
	}
	if got := r.Redact(`{"v":"se\"cret\\x"}`); got != `{"v":"[REDACTED]"}` {
		t.Errorf("JSON form: %q", got)
	}
	if got := r.Redact("abc long-secret-1"); got != "abc [REDACTED]" {
		t.Errorf("short values stay, longest wins: %q", got)
	}
}

// A name has the value of its last definition in the last layer that
// defines it; Names lists each name once, sorted.
func TestHostEnvLastDefinitionWins(t *testing.T) {
	env := newHostEnv()
	first, _ := entryVars(EnvFlagFile, "env", []string{"B=1", "A=1", "B=2", "C=1"})
	second, _ := entryVars("host.env", "env-file", []string{"C=2", "A=2", "C=3"})
	env.addLayer(first)
	env.addLayer(second)
	env.addLayer(nil)
	for name, want := range map[string]string{"A": "2", "B": "2", "C": "3", "D": ""} {
		if got := env.Value(name); got != want {
			t.Errorf("%s=%q, want %q", name, got, want)
		}
	}
	if v, ok := env.Lookup("C"); !ok || v.Pos().File != "host.env" || v.Pos().Line != 3 {
		t.Errorf("C is %+v", v)
	}
	if _, ok := env.Lookup("D"); ok {
		t.Error("D is defined")
	}
	if got := strings.Join(env.Names(), " "); got != "A B C" {
		t.Errorf("names %q", got)
	}
	if m := env.Map(); len(m) != 3 || m["B"] != "2" {
		t.Errorf("map %v", m)
	}
}

// The resolved view keeps ${env:…} literal outside env values, as the host
// passes it on, and hides it inside them.
func TestResolvedViewKeepsEnvRefsOutsideEnv(t *testing.T) {
	p := &plan.Plan{PlanVersion: plan.Version, Servers: []plan.Server{{Name: "s", Command: "${env:BIN}", Args: []string{"${env:A}"}, Cwd: "${env:HOME}",
		Env: map[string]*string{"E": ptrTo("${env:A}")}}}}
	env := newHostEnv()
	view := Resolve(p, "/w", env, denylist.Default())
	s := view.Servers[0]
	if s.Command != "${env:BIN}" || s.Args[0] != "${env:A}" || s.Cwd != "${env:HOME}" || s.Env["E"] != redact.Redacted {
		t.Errorf("resolved view %+v", s)
	}
}
func ptrTo(s string) *string { return &s }
