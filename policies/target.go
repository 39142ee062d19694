package policies

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// LocalTarget describes this machine as the target: commands are looked up
// on path (the host environment's PATH, as a server would inherit it),
// absolute paths are checked, and Playwright's browsers are looked for
// where Playwright installs them (PLAYWRIGHT_BROWSERS_PATH of env, else its
// cache under home).
func LocalTarget(path string, env map[string]string, clients []string) Target {
	t := ImageTarget(runtime.GOOS, path, clients)
	t.Exists = func(p string) bool { _, err := os.Stat(p); return err == nil }
	t.Browsers = func(name string) bool { return localBrowser(name, env) }
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
	return Target{OS: goos, Clients: clients, Lookup: func(name string) bool { return onPath(name, dirs, goos) }}
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
// its own build in its cache, or the system channel for chrome and msedge.
func localBrowser(name string, env map[string]string) bool {
	switch name {
	case "chrome":
		return exists("/opt/google/chrome/chrome") || exists("/Applications/Google Chrome.app")
	case "msedge":
		return exists("/opt/microsoft/msedge/msedge") || exists("/Applications/Microsoft Edge.app")
	}
	cache := env["PLAYWRIGHT_BROWSERS_PATH"]
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "ms-playwright")
		if runtime.GOOS == "darwin" {
			cache = filepath.Join(home, "Library", "Caches", "ms-playwright")
		}
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && (strings.HasPrefix(e.Name(), name+"-") || name == "chromium" && strings.HasPrefix(e.Name(), "chromium_headless_shell-")) {
			return true
		}
	}
	return false
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
