package policies

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/policies/toollock"
)

func planOf(servers ...plan.Server) *plan.Plan {
	for i := range servers {
		servers[i].Enabled, servers[i].Transport = true, "stdio"
	}
	return &plan.Plan{PlanVersion: plan.Version, Profile: "volcanic", Servers: servers}
}

func paths(vs []Violation, rule string) []string {
	out := []string{}
	for _, v := range vs {
		if v.Rule == rule {
			out = append(out, strings.Trim(fmt.Sprint(v.Path), "[]"))
		}
	}
	return out
}

func TestRuntimeMissing(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "uvx"), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := planOf(
		plan.Server{Name: "a", Command: "npx"},
		plan.Server{Name: "b", Command: "uvx"},                     // not executable
		plan.Server{Name: "c", Command: "docker"},                  // missing
		plan.Server{Name: "d", Command: filepath.Join(bin, "npx")}, // absolute, exists
		plan.Server{Name: "e", Command: "/no/such/server"},         // absolute, missing
		plan.Server{Name: "f", Command: "${workspace}/bin/x"},      // per chat
		plan.Server{Name: "g", Command: "./bin/x"},                 // relative to cwd
	)
	p.Servers = append(p.Servers, plan.Server{Name: "h", Command: "docker", Enabled: false, Transport: "stdio"})
	vs := RunGo(&Input{Plan: p, Target: LocalTarget(bin, nil, nil)})
	if got, want := paths(vs, "runtime-missing"), []string{"servers 1 command", "servers 2 command", "servers 4 command"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v (%+v)", got, want, vs)
	}
	// Another machine: only PATH names are checked.
	vs = RunGo(&Input{Plan: p, Target: ImageTarget("linux", bin, nil)})
	if got, want := paths(vs, "runtime-missing"), []string{"servers 1 command", "servers 2 command"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("image target: got %v, want %v", got, want)
	}
}

func lockOf(names ...string) *toollock.Lock {
	l := &toollock.Lock{LockVersion: 1, Servers: []toollock.Server{{Name: "s"}}}
	for _, n := range names {
		v := n
		l.Servers[0].Tools = append(l.Servers[0].Tools, toollock.Tool{Name: n, VisibleName: &v})
	}
	return l
}

func TestToolBudget(t *testing.T) {
	var names []string
	for i := 0; i < 41; i++ {
		names = append(names, fmt.Sprintf("t%02d", i))
	}
	in := &Input{Plan: planOf(), Lock: lockOf(names...), Target: Target{Clients: []string{"cursor", "openai"}}}
	vs := RunGo(in)
	if got := paths(vs, "tool-budget"); fmt.Sprint(got) != "[servers 0 tools 40 visibleName]" || !vs[0].InLock || !strings.Contains(vs[0].Message, "cursor accepts (40)") {
		t.Fatalf("%v %+v", got, vs)
	}
	in.Lock = lockOf(names[:40]...)
	if got := paths(RunGo(in), "tool-budget"); len(got) != 0 {
		t.Fatalf("40 tools: %v", got)
	}
	// Without a lock the rule cannot count.
	in.Lock = nil
	if got := paths(RunGo(in), "tool-budget"); len(got) != 0 {
		t.Fatalf("no lock: %v", got)
	}
}

func TestToolNameLength(t *testing.T) {
	long := strings.Repeat("a", 49)          // 15 + 49 = 64: fits claude-code's form
	longer := strings.Repeat("b", 50)        // 65 in claude-code's form
	listed := "x" + strings.Repeat("y", 128) // 129: over MCP's limit
	in := &Input{Plan: planOf(), Lock: lockOf(long, longer), Target: Target{Clients: []string{"claude-code"}}}
	if got := paths(RunGo(in), "tool-name-length"); fmt.Sprint(got) != "[servers 0 tools 1 visibleName]" {
		t.Fatalf("%v", got)
	}
	in.Target.Clients = []string{"anthropic"}
	if got := paths(RunGo(in), "tool-name-length"); len(got) != 0 {
		t.Fatalf("anthropic, no prefix: %v", got)
	}
	l := lockOf("short")
	l.Servers[0].Tools[0].Name = listed
	in.Lock, in.Target.Clients = l, nil
	if got := paths(RunGo(in), "tool-name-length"); fmt.Sprint(got) != "[servers 0 tools 0 name]" {
		t.Fatalf("%v", got)
	}
}

func TestPlaywrightBrowserMissing(t *testing.T) {
	preset := func(args ...string) *plan.Plan {
		p := planOf(plan.Server{Name: "playwright", Command: "npx", Args: append([]string{"-y", "@playwright/mcp@0.0.82", "--headless"}, args...)})
		p.Servers[0].Origin.Source = "preset"
		return p
	}
	installed := map[string]bool{"firefox": true}
	target := Target{Browsers: func(b, rev string) (bool, string) { return installed[b], "" }, Exists: func(p string) bool { return p == "/usr/bin/chromium" }}
	cases := []struct {
		plan *plan.Plan
		want string
	}{
		{preset("--browser", "chromium"), "[servers 0 args]"},
		{preset("--browser", "firefox"), "[]"},
		{preset("--browser", "chromium", "--executable-path", "/usr/bin/chromium"), "[]"},
		{preset("--browser", "chromium", "--executable-path", "/opt/none"), "[servers 0 args 6]"},
	}
	for _, c := range cases {
		if got := paths(RunGo(&Input{Plan: c.plan, Target: target}), "playwright-browser-missing"); fmt.Sprint(got) != c.want {
			t.Errorf("%v: got %v, want %s", c.plan.Servers[0].Args, got, c.want)
		}
	}
	// A server the operator named playwright is not the preset.
	p := preset("--browser", "chromium")
	p.Servers[0].Origin.Source = "appsettings"
	if got := paths(RunGo(&Input{Plan: p, Target: target}), "playwright-browser-missing"); len(got) != 0 {
		t.Errorf("not the preset: %v", got)
	}
}
