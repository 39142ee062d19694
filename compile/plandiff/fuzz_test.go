package plandiff

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
)

// bytesource draws choices from fuzz input; an exhausted input gives zeros.
type bytesource struct{ b []byte }

func (s *bytesource) next() int {
	if len(s.b) == 0 {
		return 0
	}
	v := int(s.b[0])
	s.b = s.b[1:]
	return v
}

func (s *bytesource) pick(options ...string) string { return options[s.next()%len(options)] }

// randomPlan builds a valid plan of profile from fuzz input: up to 8
// servers with names from a small set (so that two plans share some), and
// values (literal env values among them) drawn from small sets.
func randomPlan(profile string, data []byte) *plan.Plan {
	src := &bytesource{b: data}
	p := &plan.Plan{PlanVersion: plan.Version, Profile: profile, Servers: []plan.Server{}}
	if profile == plan.ProfileCraftbot {
		auto := src.next()%2 == 0
		p.AutoConnect = &auto
		if src.next()%3 == 0 {
			p.Skipped = []plan.Skipped{{Name: src.pick("bad", "x"), Rule: "cb-missing-url", Origin: plan.Origin{Source: "config", Path: "c.json", Line: src.next(), Column: 5}}}
		}
	}
	seen := map[string]bool{}
	for n := src.next() % 9; n > 0; n-- {
		name := src.pick("a", "b", "c", "d", "e", "f")
		if seen[name] {
			continue
		}
		seen[name] = true
		s := plan.Server{Name: name, Enabled: src.next()%3 != 0, Command: src.pick("npx", "uvx", "node"),
			Args: []string{src.pick("-y", "--x", "")}, Env: map[string]*string{},
			Origin: plan.Origin{Source: "config", Path: "c.json", Line: src.next(), Column: src.next()}}
		for k := src.next() % 4; k > 0; k-- {
			key := src.pick("K1", "K2", "K3")
			switch src.next() % 4 {
			case 0:
				s.Env[key] = nil
			case 1:
				v := "${env:" + key + "}"
				s.Env[key] = &v
			default:
				v := src.pick("fuzz-literal-1", "fuzz-literal-2", "")
				s.Env[key] = &v
			}
		}
		if profile == plan.ProfileCraftbot {
			s.Transport = src.pick("stdio", "sse", "websocket")
			s.ActionSet, s.Description = "mcp_"+name, src.pick("", "d1", "d2")
			if s.Transport != "stdio" {
				s.Command, s.Args, s.Env = "", []string{}, map[string]*string{}
				s.URL = src.pick("https://h/mcp?token=fuzz-literal-3", "wss://h/ws")
			}
		} else {
			s.Transport, s.Cwd, s.StderrLevel = "stdio", src.pick("${workspace}", "/srv"), src.pick("Warning", "None")
			s.ToolPrefix, s.Parallel = src.pick("", "p_"), src.next()%2 == 0
			s.CallTimeoutSeconds, s.IdleTimeoutSeconds, s.StartupTimeoutSeconds = 1+src.next(), src.next(), 1+src.next()
			if src.next()%2 == 0 {
				ps := src.pick("x", "y")
				s.PromptSection = &ps
			}
		}
		p.Servers = append(p.Servers, s)
	}
	return p
}

// FuzzCompare: a diff of two valid plans never panics, diff(a, a) is
// empty, every server is accounted for, and no literal env value or URL
// query value reaches the output.
func FuzzCompare(f *testing.F) {
	f.Add(false, []byte{3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{3, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(true, []byte{9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, []byte{1, 2})
	f.Add(false, []byte{}, []byte{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8})
	f.Fuzz(func(t *testing.T, craftbot bool, da, db []byte) {
		profile := plan.ProfileVolcanic
		if craftbot {
			profile = plan.ProfileCraftbot
		}
		a, b := randomPlan(profile, da), randomPlan(profile, db)
		if d, err := Compare(a, a); err != nil || !d.Empty() || d.Changed() || d.Unchanged != len(a.Servers) {
			t.Fatalf("diff(a, a) = %+v, %v", d, err)
		}
		d, err := Compare(a, b)
		if err != nil {
			t.Fatal(err)
		}
		back, _ := Compare(b, a)
		if len(back.Servers) != len(d.Servers) || back.Unchanged != d.Unchanged {
			t.Fatalf("diff(a, b) and diff(b, a) disagree on which servers differ")
		}
		names := map[string]bool{}
		for _, s := range a.Servers {
			names[s.Name] = true
		}
		for _, s := range b.Servers {
			names[s.Name] = true
		}
		if len(d.Servers)+d.Unchanged != len(names) {
			t.Fatalf("%d servers differ and %d are alike, of %d", len(d.Servers), d.Unchanged, len(names))
		}
		out, err := d.JSON()
		if err != nil || !json.Valid(out) {
			t.Fatalf("JSON %v:\n%s", err, out)
		}
		var text strings.Builder
		if err := d.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		for _, o := range []string{string(out), text.String()} {
			if strings.Contains(o, "fuzz-literal") {
				t.Fatalf("a literal value in the output:\n%s", o)
			}
		}
	})
}
