package volcanic

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// merge keeps the first definition of each name (host, preset, settings)
// and builds the plan.
func (c *compiler) merge(entries []*compile.Entry) *plan.Plan {
	// Servers is sized once: grown by doubling, up to half of its
	// capacity was never used, and each old array was garbage.
	p := &plan.Plan{PlanVersion: plan.Version, Profile: compile.ProfileVolcanic, Sources: c.res.Sources, Servers: make([]plan.Server, 0, len(entries)), Shadowed: []plan.Shadowed{}}
	if p.Sources == nil {
		p.Sources = []plan.SourceRef{}
	}
	winners := make(map[string]*compile.Entry, len(entries))
	var scratch node.Scratch
	for _, e := range entries {
		if w, taken := winners[e.Name]; taken {
			e.Winner = w
			p.Shadowed = append(p.Shadowed, plan.Shadowed{Name: e.Name, Origin: e.Origin, Winner: w.Origin})
			if strings.TrimSpace(e.Name) == "" {
				continue // server-name-empty already says it
			}
			c.ds = append(c.ds, rules.NameShadowed.At(e.NamePos,
				fmt.Sprintf("server %q from %s is dropped: %s already defines it at %s, and the first source wins",
					e.Name, describeSource(e), describeSource(w), w.NamePos),
				"rename one of them, or remove the definition that does not run"))
			continue
		}
		winners[e.Name] = e
		p.Servers = append(p.Servers, c.toServer(e, e.NodeIn(&scratch)))
	}
	return p
}

func describeSource(e *compile.Entry) string {
	switch e.Source {
	case "host":
		return "the host configuration"
	case "preset":
		return "the Playwright preset"
	}
	return "settings.json"
}

// toServer fills in defaults from n, e's tree; values of the wrong type
// (already reported) count as absent. The plan keeps no part of n, but its
// strings.
func (c *compiler) toServer(e *compile.Entry, n *node.Node) plan.Server {
	s := plan.Server{
		Name: e.Name, Origin: e.Origin, Transport: "stdio",
		Args: []string{}, Cwd: DefaultCwd, Env: map[string]*string{}, Enabled: true,
		StartupTimeoutSeconds: DefaultStartupTimeout, CallTimeoutSeconds: DefaultCallTimeout,
		IdleTimeoutSeconds: DefaultIdleTimeout, StderrLevel: DefaultStderrLevel,
	}
	str := func(f string, dst *string) {
		if v := n.Get(f); v != nil && v.Kind == node.String {
			*dst = v.Text
		}
	}
	boolean := func(f string, dst *bool) {
		if v := n.Get(f); v != nil && v.Kind == node.Bool {
			*dst = v.Bool
		}
	}
	integer := func(f string, dst *int) {
		if v := n.Get(f); v != nil && v.Kind == node.Number {
			if i, err := strconv.Atoi(v.Text); err == nil {
				*dst = i
			}
		}
	}
	str(FieldCommand, &s.Command)
	if v := n.Get(FieldArgs); v != nil && v.Kind == node.Array {
		s.Args = make([]string, 0, len(v.Elems)) // sized once: held as long as the plan
		for _, a := range v.Elems {
			if a.Kind == node.String {
				s.Args = append(s.Args, a.Text)
			}
		}
	}
	str(FieldCwd, &s.Cwd)
	if v := n.Get(FieldEnv); v != nil && v.Kind == node.Object {
		for _, m := range v.Members {
			switch m.Value.Kind {
			case node.String:
				val := m.Value.Text
				if name, ok := c.secretRef(e, m.Value); ok {
					// The runtime reads the secret from its own environment.
					val = "${env:" + name + "}"
				}
				s.Env[m.Key] = &val
			case node.Null:
				s.Env[m.Key] = nil
			}
		}
	}
	str(FieldToolPrefix, &s.ToolPrefix)
	boolean(FieldEnabled, &s.Enabled)
	boolean(FieldParallel, &s.Parallel)
	integer(FieldStartup, &s.StartupTimeoutSeconds)
	integer(FieldCall, &s.CallTimeoutSeconds)
	integer(FieldIdle, &s.IdleTimeoutSeconds)
	str(FieldStderrLevel, &s.StderrLevel)
	s.StderrLevel = canonicalLevel(s.StderrLevel)
	if v := n.Get(FieldPromptSection); v != nil && v.Kind == node.String {
		text := v.Text
		s.PromptSection = &text
	}
	return s
}
