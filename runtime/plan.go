package runtime

import (
	"path/filepath"
	"time"

	"github.com/mcpc-dev/mcpc/plan"
	"github.com/mcpc-dev/mcpc/policies/denylist"
)

// HostEnv is the host environment a runtime resolves ${env:NAME} against
// and filters through the deny-list (SPEC §2.4).
type HostEnv struct {
	Vars map[string]string
	Deny *denylist.List
}

// EnvFromList builds a HostEnv from KEY=VALUE entries (later entries win).
func EnvFromList(entries []string, deny *denylist.List) HostEnv {
	vars := map[string]string{}
	for _, e := range entries {
		for i := 0; i < len(e); i++ {
			if e[i] == '=' {
				if i > 0 {
					vars[e[:i]] = e[i+1:]
				}
				break
			}
		}
	}
	if deny == nil {
		deny = denylist.Default()
	}
	return HostEnv{Vars: vars, Deny: deny}
}

// Secrets returns the known secret values of a server's launch: the values
// of deny-listed host variables and of its ${env:…} resolutions.
func (h HostEnv) Secrets(s *plan.Server) []string {
	var out []string
	for k, v := range h.Vars {
		if h.Deny.Denied(k) {
			out = append(out, v)
		}
	}
	if s != nil {
		for _, v := range s.Env {
			if v == nil {
				continue
			}
			for _, name := range plan.EnvRefs(*v) {
				out = append(out, h.Vars[name])
			}
		}
	}
	return out
}

// Launch resolves one plan server for a workspace: templates filled in, the
// working directory (a relative cwd is taken inside the workspace) and the
// environment of SPEC §2.4.
func Launch(s *plan.Server, workspace string, env HostEnv) LaunchSpec {
	resolve := func(v string) string { return plan.Resolve(v, workspace, nil) }
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = resolve(a)
	}
	dir := resolve(s.Cwd)
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(workspace, dir)
	}
	return LaunchSpec{
		Server:         s.Name,
		Command:        resolve(s.Command),
		Args:           args,
		Dir:            dir,
		Env:            plan.LaunchEnv(s, workspace, env.Vars, env.Deny),
		StartupTimeout: time.Duration(s.StartupTimeoutSeconds) * time.Second,
	}
}

// Targets returns a discovery target for every enabled server of the plan,
// in plan order.
func Targets(p *plan.Plan, env HostEnv) []Target {
	var out []Target
	for i := range p.Servers {
		s := &p.Servers[i]
		if !s.Enabled {
			continue
		}
		out = append(out, Target{Server: s.Name, Spec: func(workspace string) (LaunchSpec, error) {
			return Launch(s, workspace, env), nil
		}})
	}
	return out
}
