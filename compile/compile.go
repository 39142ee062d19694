// Package compile turns an agent host's MCP configuration sources into a
// frozen launch plan: it reads the sources with positions, binds the host
// configuration as .NET would, checks every entry against the CUE schema,
// applies the Playwright preset, merges by precedence and checks templates.
// Problems come back as diagnostics; unreadable inputs as an *InputError.
package compile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agnivade/levenshtein"

	"github.com/mcpc-dev/mcpc/compile/diag"
	"github.com/mcpc-dev/mcpc/compile/node"
	"github.com/mcpc-dev/mcpc/policies/denylist"
	"github.com/mcpc-dev/mcpc/schema"
)

// ProfileVolcanic is the only profile the compiler builds plans for today.
const ProfileVolcanic = "volcanic"

// Options are the sources of one deployment (SPEC §8 source flags).
type Options struct {
	Profile     string
	AppSettings []string // layered in order
	EnvFiles    []string
	Env         []string // --env KEY=VALUE, in order
	CleanEnv    bool
	Environ     []string // the process environment; ignored with CleanEnv
	AgentDir    string   // --agent-dir; else VOLCANIC_AGENT_DIR; else ~/.volcanic/agent
	HomeDir     string   // for ~; "" → the host environment's HOME, else the user's home
	DenyList    *denylist.List
	ReadFile    func(string) ([]byte, error)
}

// InputError is an input that could not be read at all (exit code 2).
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("cannot read %s: %v", e.Path, unwrapPathError(e.Err))
}
func (e *InputError) Unwrap() error { return e.Err }

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Entry is one server definition from one source, kept whether it wins its
// name or is shadowed.
type Entry struct {
	Name    string
	Source  string // host, preset, settings
	NamePos diag.Pos
	Origin  Origin
	// Node holds the entry's fields under their schema names, typed and
	// positioned in the user's input.
	Node *node.Node
	// Notes explain fields a preset computed.
	Notes map[string]string
	// Winner is the entry that took the name, when this one is shadowed.
	Winner *Entry
	naming schema.Naming
}

// Shadowed reports whether an earlier source took this entry's name.
func (e *Entry) Shadowed() bool { return e.Winner != nil }

// Result is everything one compilation found.
type Result struct {
	// Plan is nil when there are errors: the host would refuse to start.
	Plan        *Plan
	Diagnostics []diag.Diagnostic
	// Entries are every definition in source order (host, preset, settings).
	Entries  []*Entry
	Env      *HostEnv
	Files    *FileSet
	Redactor *Redactor
	// PlaywrightLog is the line the host logs about the preset.
	PlaywrightLog string
	AgentDir      string
	Deny          *denylist.List
	Sources       []SourceRef
	draft         *Plan
}

// Draft is the plan built so far even when there are errors, for explain.
func (r *Result) Draft() *Plan { return r.draft }

// HasErrors reports whether any diagnostic is an error.
func (r *Result) HasErrors() bool {
	for _, d := range r.Diagnostics {
		if d.Severity == diag.Error {
			return true
		}
	}
	return false
}

// Compile reads and checks every source of a volcanic deployment.
func Compile(opts Options) (*Result, error) {
	if opts.Profile == "" {
		opts.Profile = ProfileVolcanic
	}
	if opts.Profile != ProfileVolcanic {
		return nil, fmt.Errorf("profile %q: only %q plans are compiled", opts.Profile, ProfileVolcanic)
	}
	read := opts.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	deny := opts.DenyList
	if deny == nil {
		deny = denylist.Default()
	}
	c := &compiler{opts: opts, read: read, res: &Result{Files: newFileSet(), Deny: deny}}
	v, err := getValidator()
	if err != nil {
		return nil, err
	}
	defer validators.Put(v)
	c.v = v
	if err := c.run(); err != nil {
		return nil, err
	}
	return c.res, nil
}

type compiler struct {
	opts   Options
	read   func(string) ([]byte, error)
	v      *schema.Validator
	res    *Result
	cfg    *config
	layers []layerInfo
	ds     []diag.Diagnostic
	checks []checkJob
	// settingsPath is set when settings.json was read.
	settingsPath string
	settingsData []byte
	// varAt finds the host variable whose line starts at a position.
	varAt map[diag.Pos]string
	// texts are the inputs read so far, searched for ${env:NAME}.
	texts [][]byte
	// planRedactor takes host secrets out of plan strings.
	planRedactor *Redactor
}

// checkJob is one schema check, run in parallel with the others.
type checkJob struct {
	def     string
	data    *node.Node
	subject string
	naming  schema.Naming
}

func (c *compiler) run() error {
	res := c.res
	if err := c.readHostEnv(); err != nil {
		return err
	}
	if err := c.readAppSettings(); err != nil {
		return err
	}
	if err := c.loadSettings(); err != nil {
		return err
	}
	// Known secrets (SPEC §2.4): values of deny-listed host variables and of
	// every ${env:NAME} the inputs reference. They are known before binding,
	// so that a message quoting a value redacts it before cutting it short.
	c.learnSecrets()
	hostEntries, pw := c.bindHost()

	p := &preset{env: res.Env, cfg: pw, quote: c.quote}
	p.resolve()
	c.ds = append(c.ds, p.ds...)

	settingsEntries, err := c.readSettings()
	if err != nil {
		return err
	}
	res.PlaywrightLog = res.Redactor.Redact(p.LogLine())

	var entries []*Entry
	entries = append(entries, hostEntries...)
	if p.enabled {
		entries = append(entries, p.entry())
		res.Sources = append(res.Sources, SourceRef{Kind: "preset"})
	}
	entries = append(entries, settingsEntries...)
	if c.settingsPath != "" {
		res.Sources = append(res.Sources, SourceRef{Kind: "settings", Path: c.settingsPath})
	}
	res.Entries = entries

	c.runChecks()
	for _, e := range entries {
		c.checkEntry(e)
	}
	plan := c.merge(entries)
	res.draft = plan

	for i := range c.ds {
		c.ds[i].Message = res.Redactor.Redact(c.ds[i].Message)
		c.ds[i].Suggestion = res.Redactor.Redact(c.ds[i].Suggestion)
	}
	diag.Sort(c.ds)
	res.Diagnostics = c.ds
	if !res.HasErrors() {
		if err := plan.Seal(); err != nil {
			return err
		}
		res.Plan = plan
	}
	return nil
}

// readHostEnv builds the host environment and its configuration layers.
func (c *compiler) readHostEnv() error {
	env := newHostEnv()
	c.res.Env = env
	if !c.opts.CleanEnv {
		vars := processEnvVars(c.opts.Environ)
		env.addLayer(vars)
		c.res.Files.addPseudo(ProcessEnvFile, envLines(vars, func(string) bool { return false }))
		c.res.Sources = append(c.res.Sources, SourceRef{Kind: "environment"})
	}
	for _, f := range c.opts.EnvFiles {
		data, err := c.read(f)
		if err != nil {
			return &InputError{Path: f, Err: err}
		}
		vars, ds, masks := parseDotenv(f, data, c.res.Deny.Denied)
		c.ds = append(c.ds, ds...)
		env.addLayer(vars)
		c.res.Files.add(f, data)
		for line, text := range masks {
			c.res.Files.mask(f, line, text)
		}
		c.res.Sources = append(c.res.Sources, SourceRef{Kind: "env-file", Path: f})
	}
	if len(c.opts.Env) > 0 {
		vars, ds := entryVars(EnvFlagFile, "env", c.opts.Env, "env-file-syntax")
		c.ds = append(c.ds, ds...)
		env.addLayer(vars)
		c.res.Files.addPseudo(EnvFlagFile, c.opts.Env)
		c.res.Sources = append(c.res.Sources, SourceRef{Kind: "env"})
	}
	return nil
}

// readAppSettings layers the appsettings files, then the environment layers,
// into one .NET configuration.
func (c *compiler) readAppSettings() error {
	c.cfg = newConfig()
	var fileSources []SourceRef
	for _, f := range c.opts.AppSettings {
		data, err := c.read(f)
		if err != nil {
			return &InputError{Path: f, Err: err}
		}
		c.res.Files.add(f, data)
		c.texts = append(c.texts, data)
		fileSources = append(fileSources, SourceRef{Kind: "appsettings", Path: f})
		layer := len(c.layers)
		c.layers = append(c.layers, layerInfo{kind: "appsettings", path: f})
		root, d := node.ParseJSON(f, data, true)
		if d != nil {
			c.ds = append(c.ds, *d)
			continue
		}
		c.cfg.addJSON(root, layer)
	}
	// Files first: the environment overrides them (SPEC §2.1).
	c.res.Sources = append(fileSources, c.res.Sources...)
	for i, vars := range c.res.Env.Layers() {
		layer := len(c.layers)
		info := layerInfo{kind: "environment"}
		if len(vars) > 0 {
			info = layerInfo{kind: vars[0].Source, path: vars[0].Pos.File}
		} else if !c.opts.CleanEnv && i == 0 {
			info = layerInfo{kind: "environment"}
		}
		c.layers = append(c.layers, info)
		c.cfg.addEnv(vars, layer)
	}
	c.ds = append(c.ds, c.cfg.ds...)
	return nil
}

// bindHost binds Mcp:Servers (sorted by .NET key order) and Mcp:Playwright.
func (c *compiler) bindHost() ([]*Entry, *node.Node) {
	mcp := c.cfg.lookup("Mcp")
	if mcp == nil {
		return nil, nil
	}
	b := &binder{v: c.v, layers: c.layers, quote: c.quote}
	// The section itself: Servers and Playwright, nothing else.
	top := &node.Node{Kind: node.Object, Pos: mcp.pos}
	var pw *node.Node
	var servers *cfgNode
	for _, ch := range mcp.order {
		switch foldKey(ch.key) {
		case "SERVERS":
			servers = ch
			top.Members = append(top.Members, node.Member{Key: "Servers", KeyPos: ch.keyPos, Value: &node.Node{Kind: node.Object, Pos: ch.pos}})
		case "PLAYWRIGHT":
			pw = b.bindEntry(ch, schema.Playwright, []string{"Mcp", "Playwright"}, "Mcp:Playwright")
			top.Members = append(top.Members, node.Member{Key: "Playwright", KeyPos: ch.keyPos, Value: pw})
		default:
			top.Members = append(top.Members, node.Member{Key: ch.key, KeyPos: ch.keyPos, Value: genericNode(ch)})
		}
	}
	c.checks = append(c.checks, checkJob{def: schema.Mcp, data: top, subject: "Mcp", naming: func(p []string) string { return strings.Join(p, ":") }})
	var entries []*Entry
	if servers != nil {
		for _, sn := range servers.sortedChildren() {
			subject := fmt.Sprintf("server %q", sn.key)
			n := b.bindEntry(sn, schema.Server, []string{"Mcp", "Servers", sn.key}, subject)
			e := &Entry{Name: sn.key, Source: "host", NamePos: sn.keyPos, Node: n, naming: hostNaming}
			e.Origin = c.hostOrigin(sn)
			entries = append(entries, e)
			c.checks = append(c.checks, checkJob{def: schema.Server, data: n, subject: subject, naming: hostNaming})
		}
	}
	c.ds = append(c.ds, b.ds...)
	return entries, pw
}

// hostOrigin is the plan origin of a host server: the layer that first
// mentions it.
func (c *compiler) hostOrigin(sn *cfgNode) Origin {
	info := layerInfo{kind: "appsettings"}
	if sn.firstLayer >= 0 && sn.firstLayer < len(c.layers) {
		info = c.layers[sn.firstLayer]
	}
	o := Origin{Source: info.kind, Path: sn.keyPos.File, Line: sn.keyPos.Line, Column: sn.keyPos.Column}
	if info.kind != "appsettings" {
		// The variable that first defined the server.
		if c.varAt == nil {
			c.varAt = map[diag.Pos]string{}
			for _, vars := range c.res.Env.Layers() {
				for _, v := range vars {
					c.varAt[v.Pos] = v.Name
				}
			}
		}
		o.Key = c.varAt[diag.Pos{File: sn.keyPos.File, Line: sn.keyPos.Line, Column: 1}]
	}
	return o
}

// loadSettings reads <agentDir>/settings.json, before anything is bound, so
// that the variables it references are known secrets from the start. A
// missing file means no servers.
func (c *compiler) loadSettings() error {
	dir := c.agentDir()
	c.res.AgentDir = dir
	path := filepath.Join(dir, "settings.json")
	data, err := c.read(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return &InputError{Path: path, Err: err}
	}
	c.settingsPath, c.settingsData = path, data
	c.res.Files.add(path, data)
	c.texts = append(c.texts, data)
	return nil
}

// readSettings reads mcpServers of settings.json, in file order.
func (c *compiler) readSettings() ([]*Entry, error) {
	if c.settingsPath == "" {
		return nil, nil
	}
	path, data := c.settingsPath, c.settingsData
	root, d := node.ParseJSON(path, data, false)
	if d != nil {
		c.ds = append(c.ds, *d)
		return nil, nil
	}
	if root.Kind != node.Object {
		c.ds = append(c.ds, diag.At(root.Pos, diag.Error, "type-mismatch", "settings.json must hold a JSON object, not "+node.Describe(root), ""))
		return nil, nil
	}
	c.dropDuplicateKeys(root, "")
	c.checks = append(c.checks, checkJob{def: schema.Settings, data: shallow(root), subject: "settings.json", naming: settingsNaming})
	servers := root.Get("mcpServers")
	if servers == nil {
		// Other top-level keys belong to others, but one that looks like
		// mcpServers is most likely a typo that loses every server.
		for _, m := range root.Members {
			if m.Key != "mcpServers" && looksLike(m.Key, "mcpServers") {
				c.ds = append(c.ds, diag.At(m.KeyPos, diag.Warning, "unknown-field",
					fmt.Sprintf("settings.json: %q is ignored; the extension reads its servers from mcpServers only", m.Key),
					`did you mean "mcpServers"?`))
			}
		}
	}
	if servers == nil || servers.Kind != node.Object {
		return nil, nil
	}
	var entries []*Entry
	for _, m := range servers.Members {
		if m.Value.Kind != node.Object {
			continue // the #Settings check reports it
		}
		subject := fmt.Sprintf("server %q", m.Key)
		e := &Entry{Name: m.Key, Source: "settings", NamePos: m.KeyPos, Node: m.Value, naming: settingsNaming,
			Origin: Origin{Source: "settings", Path: path, Line: m.KeyPos.Line, Column: m.KeyPos.Column}}
		entries = append(entries, e)
		c.checks = append(c.checks, checkJob{def: schema.Server, data: m.Value, subject: subject, naming: settingsNaming})
	}
	return entries, nil
}

// shallow keeps the top level of settings.json and mcpServers' keys, so that
// the #Settings check does not walk server entries (checked on their own).
func shallow(root *node.Node) *node.Node {
	out := &node.Node{Kind: node.Object, Pos: root.Pos}
	for _, m := range root.Members {
		if m.Key == "mcpServers" && m.Value.Kind == node.Object {
			inner := &node.Node{Kind: node.Object, Pos: m.Value.Pos}
			for _, s := range m.Value.Members {
				v := s.Value
				if v.Kind == node.Object {
					v = &node.Node{Kind: node.Object, Pos: v.Pos}
				}
				inner.Members = append(inner.Members, node.Member{Key: s.Key, KeyPos: s.KeyPos, Value: v})
			}
			m.Value = inner
		}
		out.Members = append(out.Members, m)
	}
	return out
}

func (c *compiler) agentDir() string {
	if c.opts.AgentDir != "" {
		return c.opts.AgentDir
	}
	if v, ok := c.res.Env.Lookup("VOLCANIC_AGENT_DIR"); ok && v.Value != "" {
		return v.Value
	}
	home := c.opts.HomeDir
	if home == "" {
		home = c.res.Env.Value("HOME")
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".volcanic", "agent")
}

// validators hands each checking goroutine its own compiled schemas: CUE
// values must not be shared between goroutines.
var validators = sync.Pool{New: func() any {
	v, err := schema.New()
	if err != nil {
		return err
	}
	return v
}}

func getValidator() (*schema.Validator, error) {
	switch v := validators.Get().(type) {
	case *schema.Validator:
		return v, nil
	case error:
		return nil, v
	}
	return nil, errors.New("schema: no validator")
}

// runChecks runs the schema checks on up to GOMAXPROCS goroutines and
// collects their diagnostics in job order.
func (c *compiler) runChecks() {
	jobs := c.checks
	results := make([][]diag.Diagnostic, len(jobs))
	workers := min(runtime.GOMAXPROCS(0), 1+len(jobs)/64)
	if workers <= 1 {
		for i, j := range jobs {
			results[i] = c.v.Check(j.def, j.data, j.subject, j.naming)
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int, len(jobs))
		for i := range jobs {
			next <- i
		}
		close(next)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := getValidator()
				if err != nil {
					v = nil
				}
				for i := range next {
					j := jobs[i]
					if v == nil {
						// Cannot happen: the same schemas compiled for c.v.
						results[i] = []diag.Diagnostic{diag.At(j.data.Pos, diag.Error, "type-mismatch", "internal: schema unavailable: "+err.Error(), "")}
						continue
					}
					results[i] = v.Check(j.def, j.data, j.subject, j.naming)
				}
				if v != nil {
					validators.Put(v)
				}
			}()
		}
		wg.Wait()
	}
	for _, r := range results {
		c.ds = append(c.ds, r...)
	}
}

// checkEntry makes the checks of one entry that the schema does not express.
func (c *compiler) checkEntry(e *Entry) {
	subject := fmt.Sprintf("server %q", e.Name)
	name := func(f string) string { return e.naming([]string{f}) }
	if strings.TrimSpace(e.Name) == "" {
		sugg := `give it a name: "mcpServers": {"github": {…}}`
		if e.Source == "host" {
			sugg = `give it a name: "Servers": {"github": {…}}, or Mcp__Servers__github__Command in the environment (the name goes between the double underscores)`
		}
		c.ds = append(c.ds, diag.At(e.NamePos, diag.Error, "server-name-empty", "a server has an empty name", sugg))
	}
	cmd := e.Node.Get(FieldCommand)
	switch {
	case cmd == nil:
		sugg := fmt.Sprintf("add %q: \"npx\" (or the program that runs the server)", name(FieldCommand))
		for _, m := range e.Node.Members {
			if looksLike(m.Key, FieldCommand) && !strings.EqualFold(m.Key, FieldCommand) {
				sugg = fmt.Sprintf("rename %q to %q", m.Key, name(FieldCommand))
			}
		}
		c.ds = append(c.ds, diag.At(e.NamePos, diag.Error, "missing-command",
			fmt.Sprintf("%s has no %s; the host cannot start it (disabled entries are checked too)", subject, name(FieldCommand)), sugg))
	case cmd.Kind == node.String && strings.TrimSpace(cmd.Text) == "":
		c.ds = append(c.ds, diag.At(cmd.Pos, diag.Error, "missing-command",
			fmt.Sprintf("%s has an empty %s; the host cannot start it", subject, name(FieldCommand)),
			"write the program that runs the server, such as npx"))
	}
	if tp := e.Node.Get(FieldToolPrefix); tp != nil && tp.Kind == node.String && strings.HasPrefix(tp.Text, "mcp__") {
		c.ds = append(c.ds, diag.At(tp.Pos, diag.Error, "tool-prefix-reserved",
			fmt.Sprintf("%s: %s %q starts with mcp__, the namespace the provider gives every MCP tool (mcp__volcanic__<name>)", subject, name(FieldToolPrefix), tp.Text),
			fmt.Sprintf("use %q", strings.TrimPrefix(tp.Text, "mcp__"))))
	}
	for _, f := range []string{FieldStartup, FieldCall, FieldIdle} {
		if v := e.Node.Get(f); v != nil && v.Kind == node.Number && !strings.ContainsAny(v.Text, ".eE") {
			if _, ok := parseDotnetInt(v.Text); !ok {
				c.ds = append(c.ds, diag.At(v.Pos, diag.Error, "type-mismatch",
					fmt.Sprintf("%s: %s is %s, which does not fit a 32-bit integer", subject, name(f), v.Text),
					"write a number of seconds up to 2147483647"))
			}
		}
	}
	if e.Source == "preset" {
		return // built from checked settings
	}
	t := &templateChecker{env: c.res.Env, subject: subject}
	t.check(cmd, name(FieldCommand), false)
	if args := e.Node.Get(FieldArgs); args != nil && args.Kind == node.Array {
		for i, a := range args.Elems {
			t.check(a, e.naming([]string{FieldArgs, strconv.Itoa(i)}), false)
		}
	}
	t.check(e.Node.Get(FieldCwd), name(FieldCwd), false)
	if env := e.Node.Member(FieldEnv); env != nil && env.Value.Kind == node.Object {
		for _, m := range env.Value.Members {
			if !validEnvName(m.Key) {
				c.ds = append(c.ds, diag.At(m.KeyPos, diag.Error, "env-name-invalid",
					fmt.Sprintf("%s: %q is not a valid environment variable name: use letters, digits and _, not starting with a digit", subject, m.Key),
					fmt.Sprintf("did you mean %q?", suggestEnvName(m.Key))))
			}
			t.check(m.Value, e.naming([]string{FieldEnv, m.Key}), true)
		}
	}
	c.ds = append(c.ds, t.ds...)
}

// merge keeps the first definition of each name (host, preset, settings)
// and builds the plan.
func (c *compiler) merge(entries []*Entry) *Plan {
	plan := &Plan{PlanVersion: PlanVersion, Profile: ProfileVolcanic, Sources: c.res.Sources, Servers: []Server{}, Shadowed: []Shadowed{}}
	if plan.Sources == nil {
		plan.Sources = []SourceRef{}
	}
	winners := map[string]*Entry{}
	for _, e := range entries {
		if w, taken := winners[e.Name]; taken {
			e.Winner = w
			plan.Shadowed = append(plan.Shadowed, Shadowed{Name: e.Name, Origin: e.Origin, Winner: w.Origin})
			if strings.TrimSpace(e.Name) == "" {
				continue // server-name-empty already says it
			}
			c.ds = append(c.ds, diag.At(e.NamePos, diag.Warning, "name-shadowed",
				fmt.Sprintf("server %q from %s is dropped: %s already defines it at %s, and the first source wins",
					e.Name, describeSource(e), describeSource(w), w.NamePos),
				"rename one of them, or remove the definition that does not run"))
			continue
		}
		winners[e.Name] = e
		plan.Servers = append(plan.Servers, c.toServer(e))
	}
	return plan
}

func describeSource(e *Entry) string {
	switch e.Source {
	case "host":
		return "the host configuration"
	case "preset":
		return "the Playwright preset"
	}
	return "settings.json"
}

// toServer fills in defaults; values of the wrong type (already reported)
// count as absent.
func (c *compiler) toServer(e *Entry) Server {
	n := e.Node
	s := Server{
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
	// A plan never carries a host secret, even one written into a file.
	red := c.planRedactor
	s.Command = red.Redact(s.Command)
	for i := range s.Args {
		s.Args[i] = red.Redact(s.Args[i])
	}
	s.Cwd = red.Redact(s.Cwd)
	for k, v := range s.Env {
		if v != nil {
			r := red.Redact(*v)
			s.Env[k] = &r
		}
	}
	if s.PromptSection != nil {
		r := red.Redact(*s.PromptSection)
		s.PromptSection = &r
	}
	return s
}

// dropDuplicateKeys reports every key that an object of settings.json
// repeats and keeps only its first occurrence, so that later checks see one
// value per key.
func (c *compiler) dropDuplicateKeys(n *node.Node, where string) {
	switch n.Kind {
	case node.Array:
		for _, e := range n.Elems {
			c.dropDuplicateKeys(e, where)
		}
	case node.Object:
		seen := map[string]diag.Pos{}
		kept := n.Members[:0]
		for _, m := range n.Members {
			if first, dup := seen[m.Key]; dup {
				what := fmt.Sprintf("the key %q", m.Key)
				if where != "" {
					what += " of " + where
				}
				c.ds = append(c.ds, diag.At(m.KeyPos, diag.Error, "duplicate-key",
					fmt.Sprintf("%s appears twice in this object; this one is ignored", what),
					"remove one of them; the first is at "+first.String()))
				continue
			}
			seen[m.Key] = m.KeyPos
			kept = append(kept, m)
			c.dropDuplicateKeys(m.Value, m.Key)
		}
		n.Members = kept
	}
}

// looksLike reports whether key is a plausible misspelling of want.
func looksLike(key, want string) bool {
	if strings.EqualFold(key, want) {
		return true
	}
	return levenshtein.ComputeDistance(strings.ToLower(key), strings.ToLower(want)) <= 2
}

var envRefRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// learnSecrets (re)builds the redactor from the deny-listed host variables
// and the variables the inputs read so far reference with ${env:NAME}.
func (c *compiler) learnSecrets() {
	res := c.res
	var secrets []string
	for _, name := range res.Env.Names() {
		if res.Deny.Denied(name) {
			secrets = append(secrets, res.Env.Value(name))
		}
	}
	refs := map[string]bool{}
	for _, t := range c.texts {
		for _, m := range envRefRE.FindAllSubmatch(t, -1) {
			refs[string(m[1])] = true
		}
	}
	for _, layer := range res.Env.Layers() {
		for _, v := range layer {
			for _, m := range envRefRE.FindAllStringSubmatch(v.Value, -1) {
				refs[m[1]] = true
			}
		}
	}
	// A plan holds configuration, not resolutions: only host secrets are
	// taken out of it (a referenced DEBUG=true must not blank every "true").
	c.planRedactor = NewRedactor(secrets)
	for name := range refs {
		secrets = append(secrets, res.Env.Value(name))
	}
	sort.Strings(secrets)
	res.Redactor = NewRedactor(secrets)
	res.Files.redactor = res.Redactor
}

// quote shows a value in a message: redacted first, then cut to 40
// characters (cutting first could leave a secret's beginning).
func (c *compiler) quote(s string) string {
	return quoteShort(c.res.Redactor.Redact(s))
}
