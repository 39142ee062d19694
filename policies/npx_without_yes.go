package policies

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// npxWithoutYes: a server launched by npx without -y. Both hosts start a
// stdio server with standard input a pipe; npx installs a package it does
// not find (installed, or in its cache) only after a yes, and without a
// terminal to ask on it refuses at once ("npx canceled due to missing
// packages and no YES option", exit 1). So the server starts only where the
// package happens to be cached: never on a fresh machine or image.
var npxWithoutYes = Check{
	Rule: rules.NpxWithoutYes,
	Run: func(in *Input) []Violation {
		var out []Violation
		for i, s := range in.Plan.Servers {
			if s.Transport != "stdio" {
				continue
			}
			command, args, shift := s.Command, s.Args, 0
			if launcherName(command) == "cmd" && len(args) > 1 && strings.EqualFold(args[0], "/c") {
				command, args, shift = args[1], args[2:], 2 // cmd /c npx … (Windows)
			}
			if launcherName(command) != "npx" {
				continue
			}
			pkg, yes := npxPackage(args)
			if yes || pkg < 0 || npmConfigYes(in, i) {
				continue
			}
			name := strings.TrimPrefix(args[pkg], "--package=")
			v := Violation{Path: []any{"servers", i, "args", pkg + shift},
				Message: fmt.Sprintf("server %s runs npx without -y: npx installs a package it finds neither installed nor in its cache only after a yes, and the host starts the server with standard input a pipe, so npx refuses (\"npx canceled due to missing packages and no YES option\") and exits 1; the server starts only where %s is cached already",
					s.Name, name),
				Suggestion: fmt.Sprintf("put -y before the package: npx -y %s", name)}
			if !s.Enabled {
				v.Info = true
				v.Message = "disabled " + v.Message
			}
			out = append(out, v)
		}
		return out
	},
}

// launcherName is a command's program name, lower case, without its
// directory and a Windows extension: npx for /usr/bin/npx and npx.cmd.
func launcherName(command string) string {
	name := command[strings.LastIndexAny(command, `/\`)+1:]
	name = strings.ToLower(name)
	for _, ext := range []string{".cmd", ".exe", ".bat"} {
		name = strings.TrimSuffix(name, ext)
	}
	return name
}

// npxPackage finds, in npx's arguments, the index of the package it runs
// (its first operand; -y after it belongs to the package, not to npx) and
// whether -y or --yes comes before. pkg is -1 when there is none.
func npxPackage(args []string) (pkg int, yes bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-y" || a == "--yes" || a == "--yes=true":
			return -1, true
		case a == "--":
			if i+1 < len(args) {
				return i + 1, false
			}
			return -1, false
		case a == "-p" || a == "--package":
			// -p PKG installs PKG as well (the operand is then a command
			// of it): PKG is what must be there.
			if i+1 < len(args) {
				return i + 1, false
			}
			return -1, false
		case strings.HasPrefix(a, "--package="):
			return i, false
		case a == "-c" || a == "--call":
			i++ // a command line, not a package
		case strings.HasPrefix(a, "-"):
		default:
			return i, false
		}
	}
	return -1, false
}

// npmConfigYes reports whether server i's env sets npm_config_yes=true,
// which answers npx's question as -y does.
func npmConfigYes(in *Input, i int) bool {
	for key := range in.Plan.Servers[i].Env {
		if strings.EqualFold(key, "npm_config_yes") {
			v, ok := in.envValue(i, key)
			return ok && strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	return false
}
