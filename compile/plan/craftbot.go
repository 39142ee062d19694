package plan

// ConfigRef is what a craftbot plan holds for a non-empty env value of
// mcp_config.json: a reference to the value of the entry's own env key in
// the config file, read at launch. The env of mcp_config.json is where
// CraftBot keeps secrets, literally, and mcpc cannot tell a token from a
// setting by its name, so no value of it is ever copied into a plan.
func ConfigRef(key string) string { return "${config:" + key + "}" }

// IsConfigRef reports whether an env value of a craftbot plan is the
// reference ConfigRef(key) (the runtime then reads the value of key from
// the entry in the config file).
func IsConfigRef(key, value string) bool { return value == ConfigRef(key) }

// craftbotPlan is how a craftbot plan is written: the fields CraftBot has,
// declared in sorted key order like Plan's.
type craftbotPlan struct {
	AutoConnect bool             `json:"autoConnect"`
	Digest      string           `json:"digest,omitempty"`
	PlanVersion int              `json:"planVersion"`
	Profile     string           `json:"profile"`
	Servers     []craftbotServer `json:"servers"`
	Shadowed    []Shadowed       `json:"shadowed"`
	Skipped     []Skipped        `json:"skipped"`
	Sources     []SourceRef      `json:"sources"`
}

type craftbotServer struct {
	ActionSet   string             `json:"actionSet"`
	Args        []string           `json:"args"`
	CannotStart string             `json:"cannotStart,omitempty"`
	Command     string             `json:"command"`
	Description string             `json:"description"`
	Enabled     bool               `json:"enabled"`
	Env         map[string]*string `json:"env"`
	Name        string             `json:"name"`
	Origin      Origin             `json:"origin"`
	Transport   string             `json:"transport"`
	URL         string             `json:"url"`
}

func (p *Plan) craftbotView() *craftbotPlan {
	v := &craftbotPlan{Digest: p.Digest, PlanVersion: p.PlanVersion, Profile: p.Profile,
		Servers: make([]craftbotServer, 0, len(p.Servers)), Shadowed: nonNil(p.Shadowed),
		Skipped: nonNil(p.Skipped), Sources: nonNil(p.Sources)}
	if p.AutoConnect != nil {
		v.AutoConnect = *p.AutoConnect
	}
	for _, s := range p.Servers {
		v.Servers = append(v.Servers, craftbotServer{ActionSet: s.ActionSet, Args: nonNil(s.Args), CannotStart: s.CannotStart, Command: s.Command,
			Description: s.Description, Enabled: s.Enabled, Env: nonNilMap(s.Env), Name: s.Name, Origin: s.Origin,
			Transport: s.Transport, URL: s.URL})
	}
	return v
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]*string) map[string]*string {
	if m == nil {
		return map[string]*string{}
	}
	return m
}
