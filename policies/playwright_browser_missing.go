package policies

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// playwrightBrowserMissing: the Playwright preset is on, but the browser it
// asks for is not on the target. The host starts; the first browser_* call
// fails (the seed's "Deployment requirements").
var playwrightBrowserMissing = Check{
	Rule: rules.PlaywrightBrowserMissing,
	Run: func(in *Input) []Violation {
		var out []Violation
		for i, s := range in.Plan.Servers {
			if s.Name != "playwright" || s.Origin.Source != "preset" || !s.Enabled {
				continue
			}
			browser, exe, exeAt, pkg := "chrome", "", -1, ""
			for j, a := range s.Args {
				if strings.HasPrefix(a, "@playwright/mcp@") && pkg == "" {
					pkg = a
				}
				if j+1 >= len(s.Args) {
					continue
				}
				switch a {
				case "--browser":
					browser = s.Args[j+1]
				case "--executable-path":
					exe, exeAt = s.Args[j+1], j+1
				}
			}
			if exe != "" {
				if in.Target.Exists != nil && !in.Target.Exists(exe) {
					out = append(out, Violation{Path: []any{"servers", i, "args", exeAt},
						Message:    fmt.Sprintf("the Playwright preset runs the browser %s, which does not exist on this machine", exe),
						Suggestion: "install the browser there (Debian: apt-get install chromium), or correct --executable-path"})
				}
				continue
			}
			if in.Target.Browsers == nil {
				continue
			}
			revision := playwrightRevisions[pkg][browser]
			found, other := in.Target.Browsers(browser, revision)
			if found {
				continue
			}
			msg := fmt.Sprintf("the Playwright preset asks for the browser %s, which is not installed on the target", browser)
			if other != "" {
				msg = fmt.Sprintf("the Playwright preset's %s needs the %s build %s-%s, and the target has %s, another build: Playwright does not use it", pkg, browser, browser, revision, other)
			}
			out = append(out, Violation{Path: []any{"servers", i, "args"}, Message: msg, Suggestion: browserHint(browser)})
		}
		return out
	},
}

// playwrightRevisions are the browser builds each pinned @playwright/mcp
// runs (its playwright-core's browsers.json; chromium's headless shell has
// chromium's revision). A package not listed (a PLAYWRIGHT_COMMAND, another
// version) is satisfied by any build.
var playwrightRevisions = map[string]map[string]string{
	"@playwright/mcp@0.0.82": {"chromium": "1246", "firefox": "1549", "webkit": "2365"},
}

func browserHint(browser string) string {
	switch browser {
	case "chrome", "msedge":
		return "install " + browser + " on the target, or set PLAYWRIGHT_BROWSER=chromium and install it with npx playwright install --with-deps chromium"
	}
	return "run npx playwright install --with-deps " + browser + " from the pinned @playwright/mcp (PLAYWRIGHT_BROWSERS_PATH is honoured), or pass --executable-path in PLAYWRIGHT_EXTRA_ARGS"
}
