package plandiff

import (
	"sort"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
)

// LaunchEnv is the environment one side's runtime starts a stdio server's
// process with, as KEY=VALUE entries: what plan.LaunchEnv (volcanic) or
// runtime.CraftbotLaunch (craftbot) make of the plan entry, the values the
// plan only names (${env:NAME}, ${config:KEY}) resolved, the host's
// variables the server inherits included.
type LaunchEnv func(s *plan.Server) ([]string, error)

// Launches say what each side's stdio servers start with beyond their plan
// entries, so that a value that changed under an unchanged reference (a
// credential in mcp_config.json, a variable of an env file) is a change.
type Launches struct {
	// Old and New are the two sides' launches; with either nil, only the
	// plans are compared.
	Old, New LaunchEnv
	// Unknown, when not "", says why a side's values cannot be known: a
	// server alike in both plans whose env refers to a value is then
	// counted Uncompared, not unchanged, and Diff.NotCompared says why.
	Unknown string
}

// changes are the env variables a stdio server, alike or not in the
// plans, starts with another value of (or with on one side only), except
// those planned already lists; why is why they could not be compared.
func (l Launches) changes(o, n *plan.Server, planned []Change) (out []Change, why string) {
	if o.Transport != plan.TransportStdio || n.Transport != plan.TransportStdio {
		return nil, ""
	}
	if l.Old == nil || l.New == nil {
		if l.Unknown != "" && (refersToValues(o) || refersToValues(n)) {
			return nil, l.Unknown
		}
		return nil, ""
	}
	a, err := l.Old(o)
	if err != nil {
		return nil, err.Error()
	}
	b, err := l.New(n)
	if err != nil {
		return nil, err.Error()
	}
	listed := map[string]bool{}
	for _, c := range planned {
		listed[c.Field] = true
	}
	oldEnv, newEnv := envMap(a), envMap(b)
	keys := map[string]bool{}
	for k := range oldEnv {
		keys[k] = true
	}
	for k := range newEnv {
		keys[k] = true
	}
	effect := effectOf("env")
	for k := range keys {
		ov, inOld := oldEnv[k]
		nv, inNew := newEnv[k]
		if inOld && inNew && ov == nv || listed["env."+k] {
			continue
		}
		// Never the value nor its length: a side that has it shows the
		// same word.
		c := Change{Field: "env." + k, Effect: effect, Via: via(n, k)}
		if inOld {
			c.Old = mustJSON(Redacted)
		}
		if inNew {
			c.New = mustJSON(Redacted)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out, ""
}

// refersToValues reports whether an env value of s names a value the
// plan does not hold (${env:NAME}, ${config:KEY}).
func refersToValues(s *plan.Server) bool {
	for _, v := range s.Env {
		if v != nil && len(valueRefs(*v)) > 0 {
			return true
		}
	}
	return false
}

// valueRefs are the references of an env value to values the plan does
// not hold, as written: ${env:NAME} and ${config:KEY} (${workspace} is
// the runtime's, alike for both sides).
func valueRefs(v string) []string {
	var out []string
	for _, r := range plan.Templates(v) {
		if r.Kind == plan.TemplateEnv || r.Kind == plan.TemplateUnknown && strings.HasPrefix(r.Body, "config:") {
			out = append(out, "${"+r.Body+"}")
		}
	}
	return out
}

// via is where the value of key in s's process comes from: its env
// value's references, or the host environment it inherits.
func via(s *plan.Server, key string) string {
	v, ok := s.Env[key]
	if !ok || v == nil {
		return ViaHost
	}
	return strings.Join(valueRefs(*v), " ")
}

func envMap(entries []string) map[string]string {
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	return m
}
