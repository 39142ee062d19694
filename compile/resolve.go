package compile

import (
	"path/filepath"
	"sort"

	"github.com/mcpc-dev/mcpc/compile/plan"

	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/redact"
)

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
func Resolve(p *plan.Plan, workspace string, env *HostEnv, deny *denylist.List) *ResolvedView {
	if abs, err := filepath.Abs(workspace); err == nil {
		workspace = abs
	}
	hidden := func(string) string { return redact.Redacted }
	view := &ResolvedView{PlanVersion: p.PlanVersion, Profile: p.Profile, Digest: p.Digest, Workspace: workspace, Servers: []ResolvedServer{}}
	for i := range p.Servers {
		s := &p.Servers[i]
		rs := ResolvedServer{
			Name: s.Name, Enabled: s.Enabled,
			Command: plan.Resolve(s.Command, workspace, nil),
			Args:    make([]string, len(s.Args)),
			Cwd:     plan.Resolve(s.Cwd, workspace, nil),
			Env:     map[string]string{}, Removed: []string{}, Inherited: []string{}, Withheld: []string{},
			Parallel: s.Parallel, StartupTimeoutSeconds: s.StartupTimeoutSeconds,
			CallTimeoutSeconds: s.CallTimeoutSeconds, IdleTimeoutSeconds: s.IdleTimeoutSeconds,
		}
		for j, a := range s.Args {
			rs.Args[j] = plan.Resolve(a, workspace, nil)
		}
		for k, v := range s.Env {
			if v == nil {
				rs.Removed = append(rs.Removed, k)
				continue
			}
			rs.Env[k] = plan.Resolve(*v, workspace, hidden)
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
