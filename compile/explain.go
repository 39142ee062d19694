package compile

import "github.com/mcpc-dev/mcpc/compile/plan"

// Explanation says where every field of one server came from.
type Explanation struct {
	Name   string           `json:"name"`
	Source string           `json:"source"` // host, preset, settings
	Origin plan.Origin      `json:"origin"`
	Fields []FieldOrigin    `json:"fields"`
	Others []ExplainedEntry `json:"others"` // the other definitions of the name
}

// ExplainedEntry is another definition of the same name.
type ExplainedEntry struct {
	Origin plan.Origin `json:"origin"`
	// Role is "shadowed" (dropped because this one wins) or "winner".
	Role string `json:"role"`
}

// FieldOrigin is one field (or list element, or env variable) and where its
// value came from: a file position, an environment variable, the preset, or
// the default.
type FieldOrigin struct {
	Field string `json:"field"`
	Value string `json:"value"` // as JSON
	From  string `json:"from"`
}

// Explain explains the definition of name that wins (or, when none wins,
// the first one), as r's profile does.
func (r *Result) Explain(name string) (*Explanation, bool) {
	return r.profile.Explain(r, name)
}

// Names returns the names of the servers in the plan, in merge order.
func (r *Result) Names() []string {
	var out []string
	for _, e := range r.Entries {
		if !e.Shadowed() && e.Skip == "" {
			out = append(out, e.Name)
		}
	}
	return out
}
