package compile

import (
	"encoding/json"
	"fmt"
	"index/suffixarray"
	"sort"
	"strconv"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
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
	data, err := c.readAsIs(path)
	if err != nil {
		return &InputError{Path: path, Err: err}
	}
	cfg, ds, err := craftbot.Check(path, data, craftbot.Options{TargetOS: c.opts.TargetOS})
	if err != nil {
		return err
	}
	text := craftbot.Text(data) // what positions and excerpts count in
	res.Files.add(path, text)
	c.ds = append(c.ds, ds...)
	res.Craftbot = cfg
	res.Sources = []plan.SourceRef{{Kind: "config", Path: path}}
	c.learnConfigSecrets(path, text, cfg)
	c.checkConfigSecretLiterals(cfg)

	byEntry := map[*craftbot.Entry]*Entry{}
	for _, ce := range cfg.Entries {
		e := &Entry{Name: ce.Name, Source: "config", NamePos: ce.NamePos, tree: ce.Node, Skip: ce.Skip, craftbot: ce,
			Origin: plan.Origin{Source: "config", Path: path, Line: ce.Node.Pos().Line, Column: ce.Node.Pos().Column}}
		if ce.Winner != nil {
			e.Winner = byEntry[ce.Winner]
		}
		byEntry[ce] = e
		res.Entries = append(res.Entries, e)
	}
	return c.finish(craftbotPlan(cfg, res.Entries, res.Sources))
}

// learnConfigSecrets makes the secrets of a craftbot deployment known: the
// values of deny-listed host variables, and the env values of
// mcp_config.json, which CraftBot keeps there literally. Excerpts of the
// file never show any value of env (nor of an unknown field), whatever its
// length, since a weak password is still a password there: they are hidden
// by their byte spans. Messages quote only what the file holds outside
// those spans (names, commands, arguments, urls), so an env value is a
// known secret for message redaction only when it also stands there, say
// copied into args: the redactor's cost grows with its secrets, and a
// catalog of thousands of filled-in credentials must not make every
// message pay for all of them.
func (c *compiler) learnConfigSecrets(path string, data []byte, cfg *craftbot.Config) {
	type secret struct{ value, from string }
	var known []secret
	for _, name := range c.res.Env.Names() {
		if c.res.Deny.Denied(name) {
			if v := c.res.Env.Value(name); v != "" {
				known = append(known, secret{v, "the host secret " + name})
			}
		}
	}
	hidden := craftbot.SecretSpans(data)
	spans := make([]span, 0, len(hidden))
	visible := append([]byte(nil), data...)
	for _, s := range hidden {
		spans = append(spans, span{s.Start, s.End})
		for i := s.Start; i < s.End; i++ {
			visible[i] = 0
		}
	}
	index := suffixarray.New(visible)
	shown := func(v string) bool {
		if redact.Weak(v) {
			return false
		}
		if len(index.Lookup([]byte(v), 1)) > 0 {
			return true
		}
		b, err := json.Marshal(v) // as the file writes it
		return err == nil && len(index.Lookup(b[1:len(b)-1], 1)) > 0
	}
	seen := map[string]bool{}
	consider := func(v, from string) {
		if !seen[v] {
			seen[v] = true
			if shown(v) {
				known = append(known, secret{v, from})
			}
		}
	}
	for _, e := range cfg.Entries {
		for _, v := range e.Env {
			// Decoded, as messages would quote it.
			consider(v.Value, fmt.Sprintf("env %s of %s", v.Key, e.Subject()))
		}
	}
	for _, s := range hidden {
		consider(string(data[s.Start:s.End]), "a value of env or of an unknown field")
	}
	sort.Slice(known, func(i, j int) bool { return known[i].value < known[j].value })
	secrets := make([]string, len(known))
	c.secretFrom = make([]string, len(known))
	for i, k := range known {
		secrets[i], c.secretFrom[i] = k.value, k.from
	}
	c.res.Redactor = redact.New(secrets)
	c.res.Files.redactor = c.res.Redactor
	c.res.Files.hide(path, spans)
}

// checkConfigSecretLiterals reports a known secret (an env value, or a
// deny-listed host value) copied into what a plan carries literally: the
// command, an argument, the url or the description of a server that loads.
// A plan never holds a secret, and a command line shows in ps.
func (c *compiler) checkConfigSecretLiterals(cfg *craftbot.Config) {
	if c.res.Redactor.Empty() {
		return
	}
	for _, e := range cfg.Entries {
		if !e.Loads() {
			continue
		}
		check := func(path []string) {
			_, v := e.Node.Lookup(path)
			if v == nil || v.Kind != node.String {
				return
			}
			i, ok := c.res.Redactor.Contains(v.Text)
			if !ok {
				return
			}
			field := schema.DefaultNaming(path)
			why := "a plan cannot carry it"
			if path[0] == craftbot.FieldCommand || path[0] == craftbot.FieldArgs {
				why += ", and a command line shows in ps"
			}
			c.ds = append(c.ds, rules.SecretLiteral.At(v.Pos(),
				fmt.Sprintf("%s: %s holds the value of %s; %s", e.Subject(), field, c.secretFrom[i], why),
				"keep the secret in env only and let the server read it from there"))
		}
		check([]string{craftbot.FieldCommand})
		if args := e.Node.Get(craftbot.FieldArgs); args != nil && args.Kind == node.Array {
			for i := range args.Elems {
				check([]string{craftbot.FieldArgs, strconv.Itoa(i)})
			}
		}
		check([]string{craftbot.FieldURL})
		check([]string{craftbot.FieldDescription})
	}
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
