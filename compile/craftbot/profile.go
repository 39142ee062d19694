package craftbot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"index/suffixarray"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strconv"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// Profile is the craftbot profile: CraftBot's app/config/mcp_config.json
// (SPEC §5), compiled into a plan of the entries the host loads.
var Profile compile.Profile = profile{}

func init() { compile.Register(Profile) }

type profile struct{}

func (profile) Name() string { return plan.ProfileCraftbot }

// ConfigOf is the mcp_config.json a craftbot compilation read (nil for
// another profile's, or when the file could not be read).
func ConfigOf(r *compile.Result) *Config {
	cfg, _ := r.Model.(*Config)
	return cfg
}

// entryOf is the entry of mcp_config.json e was made from.
func entryOf(e *compile.Entry) *Entry {
	ce, _ := e.Model.(*Entry)
	return ce
}

// compilation is the state of one craftbot compilation.
type compilation struct {
	*compile.Compilation
	// secretFrom says where each known secret comes from, in the order
	// the redactor was given them.
	secretFrom []string
}

// Compile is the pipeline of the craftbot profile: the host environment
// (only to know its secrets), mcp_config.json read and checked (schema,
// skip-with-warning), then the plan of the entries the host loads, in
// file order.
func (profile) Compile(cc *compile.Compilation) error {
	c := &compilation{Compilation: cc}
	res, opts := c.Result(), c.Options()
	if err := c.ReadHostEnv(); err != nil {
		return err
	}
	// The host environment is not a source of a craftbot plan: CraftBot
	// reads its servers from the file alone.
	res.Sources = nil
	path := opts.Config
	if path == "" {
		path = DefaultPath
	}
	data, err := c.ReadAsIs(path)
	if err != nil {
		return &compile.InputError{Path: path, Err: err}
	}
	cfg, ds, err := Check(path, data, Options{TargetOS: opts.TargetOS})
	if err != nil {
		return err
	}
	text := Text(data) // what positions and excerpts count in
	res.Files.Add(path, text)
	c.Report(ds...)
	res.Model = cfg
	res.Sources = []plan.SourceRef{{Kind: "config", Path: path}}
	c.learnConfigSecrets(path, text, cfg)
	c.checkConfigSecretLiterals(cfg)

	byEntry := map[*Entry]*compile.Entry{}
	for _, ce := range cfg.Entries {
		e := compile.NewEntry(ce.Name, "config", ce.NamePos,
			plan.Origin{Source: "config", Path: path, Line: ce.Node.Pos().Line, Column: ce.Node.Pos().Column}, ce.Node)
		e.Skip, e.Model = ce.Skip, ce
		if ce.Winner != nil {
			e.Winner = byEntry[ce.Winner]
		}
		byEntry[ce] = e
		res.Entries = append(res.Entries, e)
	}
	return c.FinishRunning(craftbotPlan(cfg, res.Entries, res.Sources), hostRunsDespite)
}

// hostRunsDespite reports whether CraftBot runs the rest of its servers
// despite d: an error about one entry that it skips, starts otherwise than
// written, or cannot start. The plan is what it runs; the error stays
// (the deployment does not do what it says). An error about the whole
// file, or a secret the plan would carry, keeps the plan from being sealed.
func hostRunsDespite(d diag.Diagnostic) bool { return runsDespite[d.Rule] }

var runsDespite = map[string]bool{
	RuleTransport: true, RuleMissingCommand: true, RuleMissingURL: true, RuleDuplicateName: true,
	RuleNameInvalid: true, RuleEntryInvalid: true, RuleCannotStart: true, RuleFieldType: true,
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
func (c *compilation) learnConfigSecrets(path string, data []byte, cfg *Config) {
	type secret struct{ value, from string }
	var known []secret
	res := c.Result()
	for _, name := range res.Env.Names() {
		if res.Deny.Denied(name) {
			if v := res.Env.Value(name); v != "" {
				known = append(known, secret{v, "the host secret " + name})
			}
		}
	}
	hidden := SecretSpans(data)
	// What stands outside the spans: searched directly for the first
	// values, indexed once more than indexLookups values need it (a
	// catalog of thousands of filled-in credentials), since building the
	// index costs many searches of a catalog of a few hundred.
	const indexLookups = 64
	var (
		visible []byte
		index   *suffixarray.Index
		lookups int
	)
	standsOutside := func(b []byte) bool {
		if visible == nil {
			visible = append([]byte(nil), data...)
			for _, s := range hidden {
				for i := s.Start; i < s.End; i++ {
					visible[i] = 0
				}
			}
		}
		if lookups++; lookups <= indexLookups {
			return bytes.Contains(visible, b)
		}
		if index == nil {
			index = suffixarray.New(visible)
		}
		return len(index.Lookup(b, 1)) > 0
	}
	shown := func(v string) bool {
		if redact.Weak(v) {
			return false
		}
		if standsOutside([]byte(v)) {
			return true
		}
		b, err := json.Marshal(v) // as the file writes it
		return err == nil && standsOutside(b[1:len(b)-1])
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
	c.SetRedactor(redact.New(secrets))
	res.Files.Hide(path, hidden)
}

// checkConfigSecretLiterals reports a known secret (an env value, or a
// deny-listed host value) copied into what a plan carries literally: the
// command, an argument, the url or the description of a server that loads.
// A plan never holds a secret, and a command line shows in ps.
func (c *compilation) checkConfigSecretLiterals(cfg *Config) {
	red := c.Result().Redactor
	if red.Empty() {
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
			i, ok := red.Contains(v.Text)
			if !ok {
				return
			}
			field := schema.DefaultNaming(path)
			why := "a plan cannot carry it"
			if path[0] == FieldCommand || path[0] == FieldArgs {
				why += ", and a command line shows in ps"
			}
			c.Report(rules.SecretLiteral.At(v.Pos(),
				fmt.Sprintf("%s: %s holds the value of %s; %s", e.Subject(), field, c.secretFrom[i], why),
				"keep the secret in env only and let the server read it from there"))
		}
		check([]string{FieldCommand})
		if args := e.Node.Get(FieldArgs); args != nil && args.Kind == node.Array {
			for i := range args.Elems {
				check([]string{FieldArgs, strconv.Itoa(i)})
			}
		}
		check([]string{FieldURL})
		check([]string{FieldDescription})
	}
}

// craftbotPlan builds the plan of the entries the host loads, in file
// order: one server per name, the first entry of the name (which the host
// starts for every enabled entry of it); the later entries of a name are
// shadowed, the entries the host skips are listed with the rule that says
// why.
func craftbotPlan(cfg *Config, entries []*compile.Entry, sources []plan.SourceRef) *plan.Plan {
	auto := cfg.AutoConnect
	p := &plan.Plan{AutoConnect: &auto, PlanVersion: plan.Version, Profile: plan.ProfileCraftbot, Sources: sources,
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
// transport uses, nothing it ignores; enabled when any loaded entry of its
// name is. An env value is never copied: a non-empty one becomes
// plan.ConfigRef(key), read from the file at launch.
func craftbotServer(e *compile.Entry) plan.Server {
	ce := entryOf(e)
	s := plan.Server{Name: ce.Name, Origin: e.Origin, Transport: ce.Transport, Description: ce.Description,
		Enabled: ce.Enabled || ce.starts, ActionSet: ce.ActionSet, CannotStart: ce.CannotStart, Args: []string{}, Env: map[string]*string{}}
	if ce.Transport != plan.TransportStdio {
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

// Summary: how many servers load (and how many of them are enabled), how
// many entries are skipped, and how many are later entries of a loaded
// name.
func (profile) Summary(r *compile.Result) string {
	loaded, enabled, shadowed := 0, 0, 0
	skipped := len(r.Entries)
	if p := r.Draft(); p != nil {
		loaded, shadowed, skipped = len(p.Servers), len(p.Shadowed), len(p.Skipped)
		for _, s := range p.Servers {
			if s.Enabled {
				enabled++
			}
		}
	}
	auto := "on"
	if cfg := ConfigOf(r); cfg != nil && !cfg.AutoConnect {
		auto = "off"
	}
	if cfg := ConfigOf(r); cfg != nil && cfg.LoadsNothing != "" {
		return "no server loads: " + cfg.LoadsNothing
	}
	out := fmt.Sprintf("%s load (%d enabled, auto_connect %s), %d skipped", compile.Plural(loaded, "server"), enabled, auto, skipped)
	if shadowed > 0 {
		out += fmt.Sprintf(", %d shadowed", shadowed)
	}
	return out
}

// FindSources: without a config file named, dir's app/config/mcp_config.json.
func (profile) FindSources(dir string, opts *compile.Options) error {
	if opts.Config == "" {
		opts.Config = filepath.Join(dir, DefaultPath)
	}
	return nil
}

// Detect: dir's app/config/mcp_config.json.
func (profile) Detect(dir string) (compile.Options, string, bool) {
	fi, err := os.Stat(filepath.Join(dir, DefaultPath))
	if err != nil || !fi.Mode().IsRegular() {
		return compile.Options{}, DefaultPath, false
	}
	return compile.Options{Config: filepath.ToSlash(DefaultPath)}, DefaultPath, true
}

// Recompile: the config file p's sources name (a relative path from the
// current directory, else from the plan file's), this run's host
// environment and deny-list, and this machine's OS, where the servers are
// launched.
func (profile) Recompile(p *plan.Plan, run compile.RunSources) (compile.Options, []string, error) {
	path, err := ConfigPath(run.PlanFile, p)
	if err != nil {
		return compile.Options{}, nil, err
	}
	opts := compile.Options{Profile: plan.ProfileCraftbot, Config: path, EnvFiles: run.EnvFiles, Env: run.Env,
		CleanEnv: run.CleanEnv, DenyList: run.DenyList}
	if !opts.CleanEnv {
		opts.Environ = run.Environ
	}
	if ValidTargetOS(goruntime.GOOS) {
		opts.TargetOS = goruntime.GOOS
	}
	return opts, []string{path}, nil
}

// ConfigPath is the config file a craftbot plan names in its sources. A
// relative path is taken from the current directory, else from the plan
// file's.
func ConfigPath(planFile string, p *plan.Plan) (string, error) {
	path := ""
	for _, s := range p.Sources {
		if s.Kind == "config" {
			path = s.Path
		}
	}
	if path == "" {
		return "", fmt.Errorf("--plan %s names no config file (sources): write the plan again with mcpc plan --profile craftbot", planFile)
	}
	if !filepath.IsAbs(path) {
		if _, err := os.Stat(path); err != nil {
			alt := filepath.Join(filepath.Dir(planFile), path)
			if st, err := os.Stat(alt); err == nil && st.Mode().IsRegular() {
				path = alt
			}
		}
	}
	return path, nil
}
