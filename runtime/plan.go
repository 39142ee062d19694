package runtime

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
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

// Unset returns the host variables s's env refers to (${env:NAME}) that
// the host environment does not hold, sorted: the server gets each as an
// empty value.
func (h HostEnv) Unset(s *plan.Server) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s.Env {
		if v == nil {
			continue
		}
		for _, name := range plan.EnvRefs(*v) {
			if _, ok := h.Vars[name]; !ok && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
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

// ConfigLookup returns the value of the env key of server in the config
// file a craftbot plan refers to (plan.ConfigRef); ok is false when the
// file has no such value (any more).
type ConfigLookup func(server, key string) (value string, ok bool)

// CraftbotLaunch resolves one stdio server of a craftbot plan as CraftBot
// launches it: command and args literal (the host expands no ${…}), the
// host environment without its deny-listed variables, and the entry's env,
// whose values the plan holds as references to the config file: each is
// read through config, exactly as written there. A server the plan says
// cannot start (plan.Server.CannotStart) is not launched: the error is
// its reason, which the runtime and mcpc tools show as failed.
func CraftbotLaunch(s *plan.Server, env HostEnv, config ConfigLookup) (LaunchSpec, error) {
	if s.CannotStart != "" {
		return LaunchSpec{}, &CannotStartError{Server: s.Name, Reason: s.CannotStart}
	}
	vars := map[string]string{}
	for k, v := range env.Vars {
		if !env.Deny.Denied(k) {
			vars[k] = v
		}
	}
	for k, v := range s.Env {
		switch {
		case v == nil:
			delete(vars, k)
		case *v == "":
			vars[k] = ""
		case plan.IsConfigRef(k, *v):
			val, ok := config(s.Name, k)
			if !ok {
				return LaunchSpec{}, fmt.Errorf("env %s refers to the config file, which no longer gives server %q a value for it", k, s.Name)
			}
			vars[k] = val
		default:
			return LaunchSpec{}, fmt.Errorf("env %s is neither empty nor %s: not a craftbot plan's value", k, plan.ConfigRef(k))
		}
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return LaunchSpec{Server: s.Name, Command: s.Command, Args: append([]string{}, s.Args...), Env: out,
		StartupTimeout: time.Duration(s.StartupTimeoutSeconds) * time.Second}, nil
}

// CannotStartError is a craftbot server that the host loads but cannot
// start (plan.Server.CannotStart): mcpc does not start it either.
type CannotStartError struct{ Server, Reason string }

func (e *CannotStartError) Error() string { return e.Reason }

// CraftbotTargets returns a discovery target for every enabled stdio
// server of a craftbot plan, in plan order (sse and websocket servers are
// connected to, not launched).
func CraftbotTargets(p *plan.Plan, env HostEnv, config ConfigLookup) []Target {
	var out []Target
	for i := range p.Servers {
		s := &p.Servers[i]
		if !s.Enabled || s.Transport != "stdio" {
			continue
		}
		out = append(out, Target{Server: s.Name, Spec: func(string) (LaunchSpec, error) {
			return CraftbotLaunch(s, env, config)
		}})
	}
	return out
}
