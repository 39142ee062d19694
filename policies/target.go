package policies

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// LocalTarget describes this machine as the target: commands are looked up
// on path (the host environment's PATH, as a server would inherit it),
// absolute paths are checked, and Playwright's browsers are looked for
// where Playwright installs them (PLAYWRIGHT_BROWSERS_PATH of env, else its
// cache under home).
func LocalTarget(path string, env map[string]string, clients []string) Target {
	t := ImageTarget(runtime.GOOS, path, clients)
	t.Exists = func(p string) bool { _, err := os.Stat(p); return err == nil }
	t.Browsers = func(name, revision string) (bool, string) { return localBrowser(name, revision, env) }
	return t
}

// ImageTarget describes another machine (a container image, say) by its OS
// and PATH: only the names on that PATH can be checked, by the directories
// of this machine that the PATH names (an image's root mounted or unpacked
// there, for example); absolute paths and browsers are not checked.
func ImageTarget(goos, path string, clients []string) Target {
	sep := string(os.PathListSeparator)
	if goos == "windows" {
		sep = ";"
	}
	dirs := strings.Split(path, sep)
	// A deployment's servers share few commands: each is looked up once.
	var mu sync.Mutex
	found := map[string]bool{}
	return Target{OS: goos, Clients: clients, Lookup: func(name string) bool {
		mu.Lock()
		defer mu.Unlock()
		ok, known := found[name]
		if !known {
			ok = onPath(name, dirs, goos)
			found[name] = ok
		}
		return ok
	}}
}

// onPath reports whether an executable file name is in one of dirs (on
// Windows, also with the usual extensions).
func onPath(name string, dirs []string, goos string) bool {
	names := []string{name}
	if goos == "windows" && filepath.Ext(name) == "" {
		names = append(names, name+".exe", name+".cmd", name+".bat")
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		for _, n := range names {
			fi, err := os.Stat(filepath.Join(d, n))
			if err == nil && !fi.IsDir() && (goos == "windows" || fi.Mode()&0o111 != 0) {
				return true
			}
		}
	}
	return false
}

// localBrowser reports whether Playwright finds a browser on this machine:
// the system channel for chrome and msedge, else its own build of that
// revision ("" for any) in its cache, and else a build of another revision
// it found there.
func localBrowser(name, revision string, env map[string]string) (bool, string) {
	switch name {
	case "chrome":
		return exists("/opt/google/chrome/chrome") || exists("/Applications/Google Chrome.app"), ""
	case "msedge":
		return exists("/opt/microsoft/msedge/msedge") || exists("/Applications/Microsoft Edge.app"), ""
	}
	dirs := []string{"chromium_headless_shell", "chromium"}
	if name != "chromium" {
		dirs = []string{name}
	}
	other := ""
	for _, cache := range playwrightCaches(env) {
		entries, err := os.ReadDir(cache)
		if err != nil {
			continue
		}
		for _, e := range entries {
			for _, d := range dirs {
				rev, ok := strings.CutPrefix(e.Name(), d+"-")
				if !ok || !e.IsDir() {
					continue
				}
				if revision == "" || rev == revision {
					return true, ""
				}
				other = e.Name()
			}
		}
	}
	return false, other
}

// playwrightCaches are the directories Playwright keeps its browsers in:
// PLAYWRIGHT_BROWSERS_PATH, else its cache under home. "0" keeps them
// inside the playwright-core package that runs: an npx run's package (its
// cache, ~/.npm/_npx/*/node_modules), or one installed here.
func playwrightCaches(env map[string]string) []string {
	home, _ := os.UserHomeDir()
	switch p := env["PLAYWRIGHT_BROWSERS_PATH"]; p {
	case "":
		if runtime.GOOS == "darwin" {
			return []string{filepath.Join(home, "Library", "Caches", "ms-playwright")}
		}
		return []string{filepath.Join(home, ".cache", "ms-playwright")}
	case "0":
		inside := filepath.Join("node_modules", "playwright-core", ".local-browsers")
		npx, _ := filepath.Glob(filepath.Join(home, ".npm", "_npx", "*", inside))
		return append(npx, inside)
	default:
		return []string{p}
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
