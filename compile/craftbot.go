package compile

import (
	"sort"

	"github.com/mcpc-dev/mcpc/craftbot"
	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/plan"
	"github.com/mcpc-dev/mcpc/redact"
)

// ProfileCraftbot compiles CraftBot's app/config/mcp_config.json (SPEC §5).
const ProfileCraftbot = plan.ProfileCraftbot

// runCraftbot is the pipeline of the craftbot profile: the host environment
// (only to know its secrets), mcp_config.json read and checked by package
// craftbot (schema, skip-with-warning), then the plan of the entries the
// host loads, in file order.
func (c *compiler) runCraftbot() error {
	res := c.res
	if err := c.readHostEnv(); err != nil {
		return err
	}
	// The host environment is not a source of a craftbot plan: CraftBot
	// reads its servers from the file alone.
	res.Sources = nil
	path := c.opts.Config
	if path == "" {
		path = craftbot.DefaultPath
	}
	data, err := c.read(path)
	if err != nil {
		return &InputError{Path: path, Err: err}
	}
	res.Files.add(path, data)
	cfg, ds, err := craftbot.Check(path, data, craftbot.Options{TargetOS: c.opts.TargetOS})
	if err != nil {
		return err
	}
	c.ds = append(c.ds, ds...)
	res.Craftbot = cfg
	res.Sources = []plan.SourceRef{{Kind: "config", Path: path}}
	c.learnConfigSecrets(path, data, cfg)

	byEntry := map[*craftbot.Entry]*Entry{}
	for _, ce := range cfg.Entries {
		e := &Entry{Name: ce.Name, Source: "config", NamePos: ce.NamePos, Node: ce.Node, Skip: ce.Skip, craftbot: ce,
			Origin: plan.Origin{Source: "config", Path: path, Line: ce.Node.Pos.Line, Column: ce.Node.Pos.Column}}
		if ce.Winner != nil {
			e.Winner = byEntry[ce.Winner]
		}
		byEntry[ce] = e
		res.Entries = append(res.Entries, e)
	}
	p := craftbotPlan(cfg, res.Entries, res.Sources)
	res.draft = p

	for i := range c.ds {
		c.ds[i].Message = res.Redactor.Redact(c.ds[i].Message)
		c.ds[i].Suggestion = res.Redactor.Redact(c.ds[i].Suggestion)
	}
	diag.Sort(c.ds)
	res.Diagnostics = c.ds
	if !res.HasErrors() {
		if err := p.Seal(); err != nil {
			return err
		}
		res.Plan = p
	}
	return nil
}

// learnConfigSecrets makes the secrets of a craftbot deployment known: the
// values of deny-listed host variables, and every env value of
// mcp_config.json, which CraftBot keeps there literally. Messages redact
// them as usual; excerpts of the file never show any value of env (nor of
// an unknown field), whatever its length, since a weak password is still a
// password there.
func (c *compiler) learnConfigSecrets(path string, data []byte, cfg *craftbot.Config) {
	var secrets []string
	for _, name := range c.res.Env.Names() {
		if c.res.Deny.Denied(name) {
			if v := c.res.Env.Value(name); v != "" {
				secrets = append(secrets, v)
			}
		}
	}
	var spans []span
	for _, s := range craftbot.SecretSpans(data) {
		secrets = append(secrets, string(data[s.Start:s.End]))
		spans = append(spans, span{s.Start, s.End})
	}
	for _, e := range cfg.Entries {
		for _, v := range e.Env {
			secrets = append(secrets, v.Value) // decoded, as messages would quote it
		}
	}
	sort.Strings(secrets)
	c.res.Redactor = redact.New(secrets)
	c.res.Files.redactor = c.res.Redactor
	c.res.Files.hide(path, spans)
}

// craftbotPlan builds the plan of the entries the host loads, in file
// order; later definitions of a taken name are shadowed, other entries the
// host skips are listed with the rule that says why.
func craftbotPlan(cfg *craftbot.Config, entries []*Entry, sources []plan.SourceRef) *plan.Plan {
	auto := cfg.AutoConnect
	p := &plan.Plan{AutoConnect: &auto, PlanVersion: plan.Version, Profile: ProfileCraftbot, Sources: sources,
		Servers: []plan.Server{}, Shadowed: []plan.Shadowed{}, Skipped: []plan.Skipped{}}
	for _, e := range entries {
		switch {
		case e.Winner != nil:
			p.Shadowed = append(p.Shadowed, plan.Shadowed{Name: e.Name, Origin: e.Origin, Winner: e.Winner.Origin})
		case e.Skip != "":
			p.Skipped = append(p.Skipped, plan.Skipped{Name: e.Name, Origin: e.Origin, Rule: e.Skip})
		default:
			p.Servers = append(p.Servers, craftbotServer(e))
		}
	}
	return p
}

// craftbotServer is the plan entry of a server the host loads: what its
// transport uses, nothing it ignores. An env value is never copied: a
// non-empty one becomes plan.ConfigRef(key), read from the file at launch.
func craftbotServer(e *Entry) plan.Server {
	ce := e.craftbot
	s := plan.Server{Name: ce.Name, Origin: e.Origin, Transport: ce.Transport, Description: ce.Description,
		Enabled: ce.Enabled, ActionSet: ce.ActionSet, Args: []string{}, Env: map[string]*string{}}
	if ce.Transport != craftbot.TransportStdio {
		s.URL = ce.URL
		return s
	}
	s.Command = ce.Command
	s.Args = append(s.Args, ce.Args...)
	for _, v := range ce.Env {
		val := ""
		if v.Value != "" {
			val = plan.ConfigRef(v.Key)
		}
		s.Env[v.Key] = &val
	}
	return s
}
