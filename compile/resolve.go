package compile

import (
	"path/filepath"
	"sort"

	"github.com/mcpc-dev/mcpc/policies/denylist"
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
		env[k] = ResolveTemplates(*v, workspace, lookup)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// ResolvedView is one chat's view of a plan (mcpc plan --resolve): templates
// resolved for a workspace, ${env:…} values shown as [REDACTED], and of the
// inherited host environment only the names.
type ResolvedView struct {
	PlanVersion int              `json:"planVersion"`
	Profile     string           `json:"profile"`
	Digest      string           `json:"digest"`
	Workspace   string           `json:"workspace"`
	Servers     []ResolvedServer `json:"servers"`
}

// ResolvedServer is one server as a chat would start it.
type ResolvedServer struct {
	Name                  string            `json:"name"`
	Enabled               bool              `json:"enabled"`
	Command               string            `json:"command"`
	Args                  []string          `json:"args"`
	Cwd                   string            `json:"cwd"`
	Env                   map[string]string `json:"env"`
	Removed               []string          `json:"removed"`
	Inherited             []string          `json:"inherited"`
	Withheld              []string          `json:"withheld"`
	Parallel              bool              `json:"parallel"`
	StartupTimeoutSeconds int               `json:"startupTimeoutSeconds"`
	CallTimeoutSeconds    int               `json:"callTimeoutSeconds"`
	IdleTimeoutSeconds    int               `json:"idleTimeoutSeconds"`
}

// Resolve builds the resolved view of plan for workspace.
func Resolve(plan *Plan, workspace string, env *HostEnv, deny *denylist.List) *ResolvedView {
	if abs, err := filepath.Abs(workspace); err == nil {
		workspace = abs
	}
	hidden := func(string) string { return Redacted }
	view := &ResolvedView{PlanVersion: plan.PlanVersion, Profile: plan.Profile, Digest: plan.Digest, Workspace: workspace, Servers: []ResolvedServer{}}
	for i := range plan.Servers {
		s := &plan.Servers[i]
		rs := ResolvedServer{
			Name: s.Name, Enabled: s.Enabled,
			Command: ResolveTemplates(s.Command, workspace, nil),
			Args:    make([]string, len(s.Args)),
			Cwd:     ResolveTemplates(s.Cwd, workspace, nil),
			Env:     map[string]string{}, Removed: []string{}, Inherited: []string{}, Withheld: []string{},
			Parallel: s.Parallel, StartupTimeoutSeconds: s.StartupTimeoutSeconds,
			CallTimeoutSeconds: s.CallTimeoutSeconds, IdleTimeoutSeconds: s.IdleTimeoutSeconds,
		}
		for j, a := range s.Args {
			rs.Args[j] = ResolveTemplates(a, workspace, nil)
		}
		for k, v := range s.Env {
			if v == nil {
				rs.Removed = append(rs.Removed, k)
				continue
			}
			rs.Env[k] = ResolveTemplates(*v, workspace, hidden)
		}
		for _, name := range env.Names() {
			if _, own := s.Env[name]; own {
				continue
			}
			if deny.Denied(name) {
				rs.Withheld = append(rs.Withheld, name)
			} else {
				rs.Inherited = append(rs.Inherited, name)
			}
		}
		sort.Strings(rs.Removed)
		view.Servers = append(view.Servers, rs)
	}
	return view
}
