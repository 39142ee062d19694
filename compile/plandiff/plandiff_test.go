package plandiff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
)

func str(s string) *string { return &s }

func server(name string, edit func(*plan.Server)) plan.Server {
	s := plan.Server{Name: name, Command: "npx", Args: []string{"-y", name + "@1.0.0"}, Cwd: "${workspace}",
		Env: map[string]*string{}, Enabled: true, Transport: "stdio", CallTimeoutSeconds: 120,
		IdleTimeoutSeconds: 1800, StartupTimeoutSeconds: 60, StderrLevel: "Warning",
		Origin: plan.Origin{Source: "appsettings", Path: "appsettings.json", Line: 3, Column: 5}}
	if edit != nil {
		edit(&s)
	}
	return s
}

func volcanic(servers ...plan.Server) *plan.Plan {
	return &plan.Plan{PlanVersion: plan.Version, Profile: plan.ProfileVolcanic, Servers: servers}
}

func compare(t *testing.T, a, b *plan.Plan) *Diff {
	t.Helper()
	d, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFieldsCoverServer: every field of plan.Server is in the table of
// effects (or identifies the server), so a field added to the plan cannot
// go uncompared.
func TestFieldsCoverServer(t *testing.T) {
	var want []string
	rt := reflect.TypeOf(plan.Server{})
	for i := 0; i < rt.NumField(); i++ {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		want = append(want, tag)
	}
	var got []string
	for _, f := range fields {
		got = append(got, f.name)
		if f.name != "env" && f.get == nil {
			t.Errorf("field %s has no getter", f.name)
		}
		if f.why == "" {
			t.Errorf("field %s does not say why it has effect %s", f.name, f.effect)
		}
	}
	got = append(got, identity...)
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the fields table covers %v, plan.Server has %v", got, want)
	}
}

func TestCompareKinds(t *testing.T) {
	off := func(s *plan.Server) { s.Enabled = false }
	old := volcanic(server("gone", nil), server("same", nil), server("wakes", off), server("sleeps", nil), server("asleep", off))
	new := volcanic(server("fresh", nil), server("same", nil), server("wakes", off), server("sleeps", off), server("asleep", off))
	new.Servers[2].Enabled = true
	new.Servers[4].Args = []string{"other"}
	d := compare(t, old, new)
	var got []string
	for _, s := range d.Servers {
		got = append(got, s.Name+" "+string(s.Change)+" "+s.Effect.String())
	}
	want := []string{"asleep changed nothing", "fresh added connect", "gone removed disconnect", "sleeps disabled disconnect", "wakes enabled connect"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if d.Unchanged != 1 {
		t.Errorf("unchanged %d, want 1", d.Unchanged)
	}
	if !d.Changed() || d.Empty() {
		t.Errorf("Changed %v Empty %v", d.Changed(), d.Empty())
	}
	if d.Servers[1].Old != nil || d.Servers[1].New != &new.Servers[0] || d.Servers[2].New != nil || d.Servers[2].Old != &old.Servers[0] {
		t.Errorf("Old/New do not point into the plans")
	}
}

// TestFieldEffects: each field's change has the effect of the table, and
// a server's effect is the strongest of its fields'.
func TestFieldEffects(t *testing.T) {
	cases := []struct {
		name string
		edit func(*plan.Server)
		want Effect
	}{
		{"command", func(s *plan.Server) { s.Command = "uvx" }, Restart},
		{"args", func(s *plan.Server) { s.Args = append(s.Args, "--x") }, Restart},
		{"cwd", func(s *plan.Server) { s.Cwd = "/srv" }, Restart},
		{"env.K", func(s *plan.Server) { s.Env["K"] = str("${env:K}") }, Restart},
		{"transport", func(s *plan.Server) { s.Transport = "sse" }, Restart},
		{"url", func(s *plan.Server) { s.URL = "https://example.com/mcp" }, Restart},
		{"parallel", func(s *plan.Server) { s.Parallel = true }, Restart},
		{"stderrLevel", func(s *plan.Server) { s.StderrLevel = "Error" }, Restart},
		{"toolPrefix", func(s *plan.Server) { s.ToolPrefix = "gh_" }, Reregister},
		{"promptSection", func(s *plan.Server) { s.PromptSection = str("Use gh for GitHub.") }, Reregister},
		{"actionSet", func(s *plan.Server) { s.ActionSet = "code" }, Reregister},
		{"description", func(s *plan.Server) { s.Description = "GitHub" }, Reregister},
		{"callTimeoutSeconds", func(s *plan.Server) { s.CallTimeoutSeconds = 30 }, Update},
		{"idleTimeoutSeconds", func(s *plan.Server) { s.IdleTimeoutSeconds = 0 }, Update},
		{"startupTimeoutSeconds", func(s *plan.Server) { s.StartupTimeoutSeconds = 120 }, Update},
	}
	for _, c := range cases {
		d := compare(t, volcanic(server("s", nil)), volcanic(server("s", c.edit)))
		if len(d.Servers) != 1 || len(d.Servers[0].Fields) != 1 {
			t.Fatalf("%s: %+v", c.name, d.Servers)
		}
		s := d.Servers[0]
		if s.Change != Changed || s.Effect != c.want || s.Fields[0].Field != c.name || s.Fields[0].Effect != c.want {
			t.Errorf("%s: %s %s, field %s %s; want changed %s", c.name, s.Change, s.Effect, s.Fields[0].Field, s.Fields[0].Effect, c.want)
		}
		if d.Changed() != (c.want != None) {
			t.Errorf("%s: Changed() = %v", c.name, d.Changed())
		}
	}
	both := func(s *plan.Server) { s.ToolPrefix, s.Command, s.CallTimeoutSeconds = "x_", "node", 5 }
	d := compare(t, volcanic(server("s", nil)), volcanic(server("s", both)))
	if s := d.Servers[0]; s.Effect != Restart || len(s.Fields) != 3 || s.Fields[0].Field != "callTimeoutSeconds" || s.Fields[2].Field != "toolPrefix" {
		t.Errorf("several fields: %+v", s)
	}
}

// TestEnvShown: env values that are templates, empty or null show as they
// are; literal ones are [REDACTED]; keys set on one side have no value on
// the other.
func TestEnvShown(t *testing.T) {
	o := server("s", func(s *plan.Server) {
		s.Env = map[string]*string{"A": str("canary-old-1"), "B": str("${env:B}"), "C": nil, "D": str("x"), "SAME": str("canary-same")}
	})
	n := server("s", func(s *plan.Server) {
		s.Env = map[string]*string{"A": str("canary-new-2"), "B": str("${config:B}"), "C": str(""), "E": str("${workspace}/x"), "SAME": str("canary-same")}
	})
	d := compare(t, volcanic(o), volcanic(n))
	out, err := d.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := d.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"canary", `"x"`, "/x"} {
		if strings.Contains(string(out), leak) || strings.Contains(text.String(), leak) {
			t.Errorf("%q in the output:\n%s\n%s", leak, out, text.String())
		}
	}
	want := `    env.A: [REDACTED] → [REDACTED] (restart)
    env.B: "${env:B}" → "${config:B}" (restart)
    env.C: null → "" (restart)
    env.D: [REDACTED] → (unset) (restart)
    env.E: (unset) → [REDACTED] (restart)
`
	if !strings.Contains(text.String(), want) {
		t.Errorf("text:\n%s\nwant it to contain:\n%s", text.String(), want)
	}
}

func TestOnlyTemplates(t *testing.T) {
	for s, want := range map[string]bool{
		"${env:A}": true, "${config:KEY}": true, "${workspace}": true, "${env:A}${env:B}": true,
		"": false, "x": false, "${env:A}x": false, "x${env:A}": false, "${workspace}/d": false,
		"${foo}": false, "${env:A": false, "Bearer ${env:T}": false,
	} {
		if got := onlyTemplates(s); got != want {
			t.Errorf("onlyTemplates(%q) = %v", s, got)
		}
	}
}

func TestShowURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/mcp":                         "https://example.com/mcp",
		"wss://u:pw-canary@example.com/ws":                "wss://[REDACTED]@example.com/ws",
		"https://example.com/sse?key=canary&team=t1":      "https://example.com/sse?key=[REDACTED]&team=[REDACTED]",
		"https://example.com/sse?canary-bare-token#frag1": "https://example.com/sse?[REDACTED]#[REDACTED]",
		"http://[::1]:8080/mcp":                           "http://[::1]:8080/mcp",
		"%zz canary":                                      Redacted,
		"":                                                "",
	} {
		if got := showURL(in); got != want {
			t.Errorf("showURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompareSame(t *testing.T) {
	p := volcanic(server("a", nil), server("b", func(s *plan.Server) { s.Env["T"] = str("secret") }))
	d := compare(t, p, p)
	if !d.Empty() || d.Changed() || d.Unchanged != 2 {
		t.Errorf("diff(a, a): %+v", d)
	}
	var text strings.Builder
	d.WriteText(&text)
	if text.String() != "no difference: volcanic plans alike (2 servers)\n" {
		t.Errorf("text %q", text.String())
	}
}

func TestCompareProfiles(t *testing.T) {
	cb := &plan.Plan{PlanVersion: plan.Version, Profile: plan.ProfileCraftbot}
	if _, err := Compare(volcanic(), cb); err == nil || !strings.Contains(err.Error(), "volcanic plan and a craftbot plan") {
		t.Errorf("err %v", err)
	}
}

// TestPlanFields: autoConnect has an effect; sources, shadowed and skipped
// are reported without one.
func TestPlanFields(t *testing.T) {
	on, off := true, false
	a := &plan.Plan{PlanVersion: 1, Profile: plan.ProfileCraftbot, AutoConnect: &on}
	b := &plan.Plan{PlanVersion: 1, Profile: plan.ProfileCraftbot, AutoConnect: &off,
		Skipped: []plan.Skipped{{Name: "x", Rule: "cb-missing-url", Origin: plan.Origin{Source: "config", Path: "c.json", Line: 4, Column: 5}}}}
	d := compare(t, a, b)
	if len(d.Plan) != 2 || d.Plan[0].Field != "autoConnect" || d.Plan[0].Effect != Update || d.Plan[1].Field != "skipped" || d.Plan[1].Effect != None {
		t.Fatalf("plan changes %+v", d.Plan)
	}
	if !d.Changed() {
		t.Error("autoConnect changed but Changed() is false")
	}
	b.AutoConnect = &on
	if d := compare(t, a, b); d.Changed() || d.Empty() {
		t.Errorf("only skipped changed: Changed %v Empty %v", d.Changed(), d.Empty())
	}
}

func TestJSONShape(t *testing.T) {
	d := compare(t, volcanic(server("a", nil)), volcanic(server("a", func(s *plan.Server) { s.ToolPrefix = "a_" })))
	out, err := d.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Changed bool
		Profile string
		Servers []struct {
			Change, Effect, Name string
			Fields               []struct{ Field, Effect, Old, New string }
		}
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if !v.Changed || v.Profile != "volcanic" || len(v.Servers) != 1 || v.Servers[0].Effect != "reregister" ||
		v.Servers[0].Fields[0].Old != "" || v.Servers[0].Fields[0].New != "a_" {
		t.Errorf("JSON:\n%s", out)
	}
}

// TestOriginIsNotAChange: a server that only moved in its file (an entry
// inserted above it) is alike, counted moved; one that moved and changed
// lists its change and not where it was.
func TestOriginIsNotAChange(t *testing.T) {
	moved := func(s *plan.Server) { s.Origin.Line += 4 }
	changed := func(s *plan.Server) { s.Origin.Line += 4; s.Args = []string{"-y", "b@2.0.0"} }
	d := compare(t, volcanic(server("a", nil), server("b", nil), server("c", nil)),
		volcanic(server("a", nil), server("b", changed), server("c", moved)))
	if len(d.Servers) != 1 || d.Servers[0].Name != "b" || len(d.Servers[0].Fields) != 1 || d.Servers[0].Fields[0].Field != "args" ||
		d.Servers[0].Origin.Line != 7 || d.Unchanged != 2 || d.Moved != 1 {
		t.Fatalf("%+v", d)
	}
	d = compare(t, volcanic(server("c", nil)), volcanic(server("c", moved)))
	var text strings.Builder
	d.WriteText(&text)
	if !d.Empty() || d.Changed() || text.String() != "no difference: volcanic plans alike (1 server, 1 moved)\n" {
		t.Errorf("only moved: %q", text.String())
	}
}

// launches are launch environments of each side made the way
// plan.LaunchEnv makes them, from a host environment of each side.
func launches(oldHost, newHost map[string]string) Launches {
	side := func(host map[string]string) LaunchEnv {
		return func(s *plan.Server) ([]string, error) {
			vals := map[string]string{}
			for k, v := range host {
				if !strings.HasPrefix(k, "config:") {
					vals[k] = v
				}
			}
			for k, v := range s.Env {
				switch {
				case v == nil:
					delete(vals, k)
				case strings.HasPrefix(*v, "${config:"):
					vals[k] = host["config:"+s.Name+"."+k]
				default:
					vals[k] = plan.Resolve(*v, "/w", func(n string) string { return host[n] })
				}
			}
			var out []string
			for k, v := range vals {
				out = append(out, k+"="+v)
			}
			return out, nil
		}
	}
	return Launches{Old: side(oldHost), New: side(newHost)}
}

// TestLaunchValues: a value a server starts with that changed under an
// unchanged plan entry — a ${config:KEY} of the config file, an
// ${env:NAME}, an inherited host variable — is a change of env.KEY with
// the env field's effect, shown [REDACTED] (never the value nor its
// length) and where it comes from; a value that did not change is not.
func TestLaunchValues(t *testing.T) {
	cb := func(servers ...plan.Server) *plan.Plan {
		return &plan.Plan{PlanVersion: plan.Version, Profile: plan.ProfileCraftbot, Servers: servers}
	}
	withEnv := func(env map[string]*string, enabled bool) func(*plan.Server) {
		return func(s *plan.Server) { s.Env, s.Enabled = env, enabled }
	}
	p := cb(server("gh", withEnv(map[string]*string{"TOKEN": str("${config:TOKEN}"), "MODE": str("${env:MODE}")}, true)),
		server("off", withEnv(map[string]*string{"TOKEN": str("${config:TOKEN}")}, false)),
		server("plain", withEnv(map[string]*string{"HOME": nil}, true)),
		server("remote", func(s *plan.Server) { s.Transport, s.Env = "sse", map[string]*string{"TOKEN": str("${config:TOKEN}")} }))
	oldHost := map[string]string{"config:gh.TOKEN": "canary-old-5b1c", "config:off.TOKEN": "canary-off-old", "config:remote.TOKEN": "canary-r-old",
		"MODE": "canary-mode", "HOME": "/home/canary-a", "LANG": "canary-lang-old"}
	newHost := map[string]string{"config:gh.TOKEN": "canary-new-longer-9a0e", "config:off.TOKEN": "canary-off-new", "config:remote.TOKEN": "canary-r-new",
		"MODE": "canary-mode", "HOME": "/home/canary-b", "LANG": "canary-lang-new"}
	d, err := CompareLaunches(p, p, launches(oldHost, newHost))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range d.Servers {
		got = append(got, s.Name+" "+string(s.Change)+" "+s.Effect.String())
		for _, c := range s.Fields {
			got = append(got, "  "+c.Field+" "+string(c.Old)+" "+string(c.New)+" "+c.Effect.String()+" via "+c.Via)
		}
	}
	want := []string{
		"gh changed restart",
		`  env.HOME "[REDACTED]" "[REDACTED]" restart via host environment`,
		`  env.LANG "[REDACTED]" "[REDACTED]" restart via host environment`,
		`  env.TOKEN "[REDACTED]" "[REDACTED]" restart via ${config:TOKEN}`,
		"off changed nothing",
		`  env.HOME "[REDACTED]" "[REDACTED]" restart via host environment`,
		`  env.LANG "[REDACTED]" "[REDACTED]" restart via host environment`,
		`  env.TOKEN "[REDACTED]" "[REDACTED]" restart via ${config:TOKEN}`,
		"plain changed restart",
		`  env.LANG "[REDACTED]" "[REDACTED]" restart via host environment`,
	}
	if !reflect.DeepEqual(got, want) || d.Unchanged != 1 || !d.Changed() {
		t.Errorf("got %q\nwant %q\n%+v", got, want, d)
	}
	out, _ := d.JSON()
	var text strings.Builder
	d.WriteText(&text)
	if strings.Contains(string(out)+text.String(), "canary") {
		t.Errorf("a value in the output:\n%s\n%s", out, text.String())
	}
	if !strings.Contains(text.String(), "    env.TOKEN: [REDACTED] → [REDACTED] (restart; value of ${config:TOKEN})\n") ||
		!strings.Contains(text.String(), "    env.LANG: [REDACTED] → [REDACTED] (restart; inherited from the host environment)\n") {
		t.Errorf("text:\n%s", text.String())
	}
	// The same values on both sides: nothing differs.
	if d, _ := CompareLaunches(p, p, launches(oldHost, oldHost)); !d.Empty() || d.Unchanged != 4 {
		t.Errorf("same values: %+v", d)
	}
	// plain sets HOME to null: that it differs on the hosts changes nothing
	// of it. A variable set on one side only:
	delete(newHost, "LANG")
	d, _ = CompareLaunches(cb(p.Servers[2]), cb(p.Servers[2]), launches(oldHost, newHost))
	if len(d.Servers) != 1 || d.Servers[0].Fields[0].Field != "env.LANG" || d.Servers[0].Fields[0].New != nil {
		t.Errorf("unset on one side: %+v", d.Servers)
	}
}

// TestLaunchValuesUnknown: where a side's values cannot be known, a server
// alike in the plans whose env refers to a value is not unchanged but not
// compared, and the diff says why; one without such a reference is
// unchanged; a launch that fails says why too.
func TestLaunchValuesUnknown(t *testing.T) {
	p := volcanic(server("ref", func(s *plan.Server) { s.Env["T"] = str("${config:T}") }),
		server("lit", func(s *plan.Server) { s.Env["T"] = str("x") }), server("ws", func(s *plan.Server) { s.Env["W"] = str("${workspace}") }))
	d, err := CompareLaunches(p, p, Launches{Unknown: "both plans read their values from c.json"})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	d.WriteText(&text)
	want := "not compared: both plans read their values from c.json\nsummary: 2 unchanged, 1 not compared; nothing for a runtime to do\n"
	if d.Empty() || d.Changed() || d.Uncompared != 1 || d.Unchanged != 2 || text.String() != want {
		t.Errorf("%+v\n%q", d, text.String())
	}
	fail := func(s *plan.Server) ([]string, error) { return nil, fmt.Errorf("server %q: no value for T", s.Name) }
	d, _ = CompareLaunches(volcanic(p.Servers[0]), volcanic(p.Servers[0]), Launches{Old: fail, New: fail})
	if d.Uncompared != 1 || len(d.NotCompared) != 1 || d.NotCompared[0] != `server "ref": no value for T` {
		t.Errorf("a failing launch: %+v", d)
	}
}
