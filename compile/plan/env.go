package plan

import (
	"sort"

	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
)

// LaunchEnv computes the environment a server process gets (SPEC §2.4): the
// host environment minus the deny-list, plus the server's own env with
// templates resolved, minus the variables its env sets to null. A
// deny-listed variable reaches the server only through ${env:NAME}.
// hostEnv maps names to values; the result is sorted KEY=VALUE entries.
func LaunchEnv(s *Server, workspace string, hostEnv map[string]string, deny *denylist.List) []string {
	env := map[string]string{}
	for k, v := range hostEnv {
		if !deny.Denied(k) {
			env[k] = v
		}
	}
	lookup := func(name string) string { return hostEnv[name] }
	for k, v := range s.Env {
		if v == nil {
			delete(env, k)
			continue
		}
		env[k] = Resolve(*v, workspace, lookup)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
