package policies

import (
	"fmt"
	"sort"

	"github.com/mcpc-dev/mcpc/internal/placeholder"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// placeholderValue: a value left for the operator to fill in (C:/path/to/…,
// /path/to/…, <your-key>, YOUR_API_KEY) in a server's command, arguments,
// cwd, env or url. No machine has that path or accepts that key, so the
// server cannot start (or connect) anywhere. An env value may be a secret:
// only its key is named, whatever it holds.
var placeholderValue = Check{
	Rule: rules.PlaceholderValue,
	Run: func(in *Input) []Violation {
		var out []Violation
		for i, s := range in.Plan.Servers {
			verb := "start"
			if s.Transport != "stdio" {
				verb = "connect"
			}
			add := func(path []any, what string) {
				v := Violation{Path: path,
					Message:    fmt.Sprintf("server %s: %s is a placeholder left to fill in, not a real value: the server cannot %s on any machine", s.Name, what, verb),
					Suggestion: "write the real path or value there, or remove the server"}
				if !s.Enabled {
					v.Info = true
					v.Message = fmt.Sprintf("disabled server %s: %s is a placeholder left to fill in: it cannot %s anywhere until that is filled in", s.Name, what, verb)
				}
				out = append(out, v)
			}
			if placeholder.In(s.Command) {
				add([]any{"servers", i, "command"}, fmt.Sprintf("command %q", s.Command))
			}
			for j, a := range s.Args {
				if placeholder.In(a) {
					add([]any{"servers", i, "args", j}, fmt.Sprintf("args[%d] %q", j, a))
				}
			}
			if placeholder.In(s.Cwd) {
				add([]any{"servers", i, "cwd"}, fmt.Sprintf("cwd %q", s.Cwd))
			}
			keys := make([]string, 0, len(s.Env))
			for k := range s.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if v, ok := in.envValue(i, k); ok && placeholder.In(v) {
					add([]any{"servers", i, "env", k}, "the value of env "+k+" (not shown)")
				}
			}
			if placeholder.In(s.URL) {
				add([]any{"servers", i, "url"}, fmt.Sprintf("url %q", s.URL))
			}
		}
		return out
	},
}
