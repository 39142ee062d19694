package policies

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
)

// The preset's pinned @playwright/mcp runs one build of each browser: a
// cache holding only another build (a stale chromium-1234 where 0.0.82
// needs chromium-1246) is no browser, and the message names both. With
// PLAYWRIGHT_BROWSERS_PATH=0 the builds are inside the playwright-core that
// runs: an npx run's (under ~/.npm/_npx), or one installed here.
func TestPlaywrightBrowserRevision(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(t.TempDir())
	preset := func(pkg string) *plan.Plan {
		p := planOf(plan.Server{Name: "playwright", Command: "npx", Args: []string{"-y", pkg, "--headless", "--browser", "chromium"}})
		p.Servers[0].Origin.Source = "preset"
		return p
	}
	mkdir := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(t.TempDir(), "cache")
	mkdir(filepath.Join(cache, "chromium-1234"))
	lint := func(env map[string]string, pkg string) []Violation {
		var out []Violation
		for _, v := range RunGo(&Input{Plan: preset(pkg), Target: LocalTarget("", env, nil)}) {
			if v.Rule == "playwright-browser-missing" {
				out = append(out, v)
			}
		}
		return out
	}
	at := map[string]string{"PLAYWRIGHT_BROWSERS_PATH": cache}
	vs := lint(at, "@playwright/mcp@0.0.82")
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "chromium-1246") || !strings.Contains(vs[0].Message, "chromium-1234") {
		t.Fatalf("a stale build: %v", vs)
	}
	if vs := lint(at, "@playwright/mcp@0.0.99"); len(vs) != 0 {
		t.Errorf("a package whose builds mcpc does not know takes any build: %v", vs)
	}
	mkdir(filepath.Join(cache, "chromium_headless_shell-1246"))
	if vs := lint(at, "@playwright/mcp@0.0.82"); len(vs) != 0 {
		t.Errorf("the headless shell of the revision: %v", vs)
	}

	inside := map[string]string{"PLAYWRIGHT_BROWSERS_PATH": "0"}
	if vs := lint(inside, "@playwright/mcp@0.0.82"); len(vs) != 1 {
		t.Fatalf("PLAYWRIGHT_BROWSERS_PATH=0 and no build inside a playwright-core: %v", vs)
	}
	mkdir(filepath.Join(home, ".npm", "_npx", "3f2a", "node_modules", "playwright-core", ".local-browsers", "chromium-1246"))
	if vs := lint(inside, "@playwright/mcp@0.0.82"); len(vs) != 0 {
		t.Errorf("PLAYWRIGHT_BROWSERS_PATH=0 with the build in npx's playwright-core: %v", fmt.Sprint(vs))
	}
}
