package policies

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// runtimeMissing: the command of an enabled stdio server does not exist on
// the target, so the server fails at its first start (the host starts, the
// server's tools never appear).
var runtimeMissing = Check{
	Rule: rules.RuntimeMissing,
	Run: func(in *Input) []Violation {
		var out []Violation
		for i, s := range in.Plan.Servers {
			if !s.Enabled || s.Transport != "stdio" || s.Command == "" || strings.Contains(s.Command, "${") {
				continue
			}
			cmd := s.Command
			switch {
			case isAbsolute(cmd, in.Target.OS):
				if in.Target.Exists != nil && !in.Target.Exists(cmd) {
					out = append(out, Violation{Path: []any{"servers", i, "command"},
						Message:    fmt.Sprintf("server %s starts %s, which does not exist on this machine", s.Name, cmd),
						Suggestion: "install it there, or correct the path"})
				}
			case strings.ContainsAny(cmd, `/\`):
				// Relative to the server's cwd, which is the chat's workspace by
				// default: only known per chat.
			case in.Target.Lookup != nil && !in.Target.Lookup(cmd):
				out = append(out, Violation{Path: []any{"servers", i, "command"},
					Message:    fmt.Sprintf("server %s starts %s, which is not on the target's PATH", s.Name, cmd),
					Suggestion: installHint(cmd)})
			}
		}
		return out
	},
}

// isAbsolute reports whether a command is an absolute path on os.
func isAbsolute(cmd, os string) bool {
	if os == "windows" {
		return len(cmd) >= 3 && cmd[1] == ':' && (cmd[2] == '\\' || cmd[2] == '/') || strings.HasPrefix(cmd, `\\`)
	}
	return strings.HasPrefix(cmd, "/")
}

// installHint says how the usual launchers are installed.
func installHint(cmd string) string {
	switch strings.TrimSuffix(strings.ToLower(cmd), ".cmd") {
	case "npx", "node", "npm":
		return "install Node.js (it brings npx) in the image or on the host; --path describes the target's PATH when it is not this machine"
	case "uvx", "uv":
		return "install uv (it brings uvx); --path describes the target's PATH when it is not this machine"
	case "python3", "python", "pipx":
		return "install Python; --path describes the target's PATH when it is not this machine"
	case "docker":
		return "install Docker, or give the server another launcher; --path describes the target's PATH when it is not this machine"
	}
	return "install " + cmd + " on the target, or use its absolute path; --path describes the target's PATH when it is not this machine"
}
