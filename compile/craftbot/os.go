package craftbot

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/placeholder"
)

// TargetOSes are the operating systems --target-os accepts (Go's names).
var TargetOSes = []string{"linux", "darwin", "windows"}

// ValidTargetOS reports whether goos is one of TargetOSes.
func ValidTargetOS(goos string) bool {
	for _, o := range TargetOSes {
		if o == goos {
			return true
		}
	}
	return false
}

var (
	// C:\…, C:/…, \\server\share
	windowsPathRE = regexp.MustCompile(`^([A-Za-z]:[\\/]|\\\\)`)
	// Programs only Windows runs by name.
	windowsProgramRE = regexp.MustCompile(`(?i)\.(exe|cmd|bat|ps1|com)$`)
	// A Unix absolute path of at least two parts (/usr/bin/x, ~/bin/x):
	// "/c" or "/?" alone is a Windows switch, not a path.
	unixPathRE = regexp.MustCompile(`^(~|/[^/\s]+)/[^/\s]`)
	// A macOS application bundle as a path component: Foo.app, Foo.app/….
	appBundleRE = regexp.MustCompile(`(?i)\.app(/|$)`)
)

// macOSRoots are directories that exist on macOS only.
var macOSRoots = []string{"/Applications/", "/System/", "/Library/", "~/Library/", "/Users/", "/opt/homebrew/", "/Volumes/"}

// macOSPrograms run on macOS only (open -a launches an application).
var macOSPrograms = map[string]bool{"osascript": true, "/usr/bin/osascript": true, "/usr/bin/open": true,
	"shortcuts": true, "/usr/bin/shortcuts": true}

// osOnlyRE finds a description that says the server works on one OS only:
// "macOS ONLY", "Windows-only", "only works on Linux", "requires macOS".
// The catalog's Apple servers say "macOS ONLY — will not work on Windows"
// while their launch paths are placeholders, so the description is their
// only OS signal.
var osOnlyRE = regexp.MustCompile(`(?i)\b(?:(mac ?os|os ?x|windows|linux)[ -]only\b|only (?:works |runs )?(?:on|for) (mac ?os|os ?x|windows|linux)\b|requires (mac ?os|os ?x|windows)\b)`)

// mayNameOneOS is false when osOnlyRE cannot match s: every match holds
// "only" or "require", in any case (none of their letters folds to a
// character outside ASCII). The expression starts with \b and (?i), so Go's
// regexp has no literal to skip to, and it backtracked through every
// description of a catalog.
func mayNameOneOS(s string) bool {
	return containsFoldASCII(s, "only") || containsFoldASCII(s, "require")
}

// containsFoldASCII reports whether s holds lit (lower-case ASCII letters)
// in any case.
func containsFoldASCII(s, lit string) bool {
	for i := 0; i+len(lit) <= len(s); i++ {
		j := 0
		for ; j < len(lit); j++ {
			if s[i+j]|0x20 != lit[j] {
				break
			}
		}
		if j == len(lit) {
			return true
		}
	}
	return false
}

// osNames are the target OS names of osOnlyRE's words, and how messages
// write them.
var osNames = map[string]struct{ goos, shown string }{
	"macos": {"darwin", "macOS"}, "mac os": {"darwin", "macOS"}, "osx": {"darwin", "macOS"}, "os x": {"darwin", "macOS"},
	"windows": {"windows", "Windows"}, "linux": {"linux", "Linux"},
}

// describedOS is the OS e's description says the server works on only,
// as a target OS name and as written for a message; "" when it says none.
func describedOS(e *Entry) (goos, shown string) {
	if !mayNameOneOS(e.Description) {
		return "", ""
	}
	m := osOnlyRE.FindStringSubmatch(e.Description)
	if m == nil {
		return "", ""
	}
	for _, w := range m[1:] {
		if w != "" {
			n := osNames[strings.ToLower(w)]
			return n.goos, n.shown
		}
	}
	return "", ""
}

// launchProblem returns where and why e's launch command cannot work on
// goos, or "" when nothing is known to be wrong. It looks at the command,
// at the arguments that are absolute paths (a relative name, npx, uvx,
// node, is found on PATH and says nothing about the OS), and at a
// description that names the one OS the server works on, when no path
// says more. A placeholder
// path (C:/path/to/…) is no OS signal: it exists nowhere (the rule
// placeholder-value reports it).
func launchProblem(goos string, e *Entry) (diag.Pos, string) {
	if why := pathProblem(goos, e.Command, true); why != "" {
		return fieldPos(e, FieldCommand), fmt.Sprintf("command %s %s", quote(e.Command), why)
	}
	if goos != "darwin" && (e.Command == "open" || e.Command == "/usr/bin/open") && len(e.Args) > 0 && e.Args[0] == "-a" {
		return fieldPos(e, FieldCommand), `"open -a" launches a macOS application`
	}
	for i, a := range e.Args {
		if why := pathProblem(goos, a, false); why != "" {
			return argPos(e, i), fmt.Sprintf("args[%d] %s %s", i, quote(a), why)
		}
	}
	if only, shown := describedOS(e); only != "" && only != goos {
		return fieldPos(e, FieldDescription), "its description says it works on " + shown + " only"
	}
	return diag.Pos{}, ""
}

// pathProblem says why s, a command (program) or an argument, is a path
// that does not exist on goos.
func pathProblem(goos, s string, program bool) string {
	if s == "" || placeholder.In(s) {
		return ""
	}
	if goos != "windows" {
		switch {
		case windowsPathRE.MatchString(s):
			return "is a Windows path"
		case program && windowsProgramRE.MatchString(s):
			return "is a Windows program (" + s[strings.LastIndexByte(s, '.'):] + ")"
		}
	}
	if goos != "darwin" {
		if program && macOSPrograms[s] {
			return "runs on macOS only"
		}
		for _, root := range macOSRoots {
			if strings.HasPrefix(s, root) {
				return "is a macOS path (" + strings.TrimSuffix(root, "/") + ")"
			}
		}
		if appBundleRE.MatchString(s) && (program || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~/")) {
			return "is inside a macOS application bundle (.app)"
		}
	}
	if goos == "windows" && unixPathRE.MatchString(s) {
		return "is a Unix path"
	}
	return ""
}
