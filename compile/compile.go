// Package compile turns an agent host's MCP configuration sources into a
// frozen launch plan: it reads the sources with positions, binds the host
// configuration as .NET would, checks every entry against the CUE schema,
// applies the Playwright preset, merges by precedence and checks templates.
// Problems come back as diagnostics; unreadable inputs as an *InputError.
//
// It imports the vocabulary packages (diag, node, rules, schema, plan, redact,
// policies/denylist, internal/inputfile) and craftbot (the reader of
// mcp_config.json); the runtime and the CLI import it, never the other way
// round.
package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/mcpc-dev/mcpc/compile/plan"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/schema"
)

// ProfileVolcanic compiles the host configuration, the Playwright preset and
// the agent's settings.json (SPEC §2).
const ProfileVolcanic = plan.ProfileVolcanic

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
	ReadFile    func(string) ([]byte, error) // nil: inputfile.Read (a regular file, at most 16 MiB)
	// Config is mcp_config.json (craftbot); "" → craftbot.DefaultPath.
	Config string
	// TargetOS (craftbot: linux, darwin or windows) marks launch paths
	// invalid there; "" marks none.
	TargetOS string
	// KeepPlanJSON keeps the canonical encoding the digest is computed
	// over, so that PlanJSON writes the plan without encoding it again
	// (`mcpc plan`). Without it the plan is hashed as it is encoded and no
	// copy of its encoding is held: at 50 000 servers that copy was a
	// quarter of the memory a compilation holds.
	KeepPlanJSON bool
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
	Origin  plan.Origin
	// tree holds the entry's fields under their schema names, typed and
	// positioned in the user's input, until the entry is checked; packed
	// holds them from then on, and unpacked the one tree Node builds from
	// it (see Node).
	tree     *node.Node
	packed   node.Packed
	unpack   sync.Once
	unpacked *node.Node
	// Notes explain fields a preset computed.
	Notes map[string]string
	// Winner is the entry that took the name, when this one is shadowed.
	Winner *Entry
	// Skip (craftbot) is the rule id of why the host skips this entry; ""
	// when it loads. A shadowed entry has Winner set too.
	Skip     string
	craftbot *craftbot.Entry
	naming   schema.Naming
}

// Node returns the entry's fields under their schema names, typed and
// positioned in the user's input: one tree, the same at every call (do not
// change it). Once a compilation has checked an entry it keeps the tree
// packed (a sixth of its size, docs/decisions.md "Server trees packed");
// the first call after the compilation builds the tree again and keeps it.
func (e *Entry) Node() *node.Node {
	if e.tree != nil {
		return e.tree
	}
	e.unpack.Do(func() { e.unpacked = e.packed.Unpack() })
	return e.unpacked
}

// nodeIn is Node for a reader of every entry that keeps no tree (the
// merge, the diagnostics by server): a packed tree is built in s, valid
// until s is used again, and not kept.
func (e *Entry) nodeIn(s *node.Scratch) *node.Node {
	if e.tree != nil {
		return e.tree
	}
	return e.packed.UnpackInto(s)
}

// pack keeps e's tree in its packed form only: every value of every server
// positioned until the end was most of what a compilation of a large
// deployment held (docs/decisions.md, "Server trees packed").
func (e *Entry) pack() {
	if e.tree != nil {
		e.packed = node.Pack(e.tree)
		e.tree = nil
	}
}

// Shadowed reports whether an earlier source took this entry's name.
func (e *Entry) Shadowed() bool { return e.Winner != nil }

// Result is everything one compilation found.
type Result struct {
	Profile string
	// Plan is nil when there are errors: the host would refuse to start.
	Plan        *plan.Plan
	Diagnostics []diag.Diagnostic
	// Entries are every definition in source order (host, preset, settings).
	Entries  []*Entry
	Env      *HostEnv
	Files    *FileSet
	Redactor *redact.Redactor
	// PlaywrightLog is the line the host logs about the preset.
	PlaywrightLog string
	AgentDir      string
	Deny          *denylist.List
	Sources       []plan.SourceRef
	// Craftbot is mcp_config.json as read (profile craftbot).
	Craftbot *craftbot.Config
	draft    *plan.Plan
	// unsealed is the canonical JSON of Plan without its digest, what the
	// digest was computed over (see seal), kept with Options.KeepPlanJSON.
	unsealed []byte
}

// Draft is the plan built so far even when there are errors, for explain.
func (r *Result) Draft() *plan.Plan { return r.draft }

// HasErrors reports whether any diagnostic is an error.
func (r *Result) HasErrors() bool {
	for _, d := range r.Diagnostics {
		if d.Severity == diag.Error {
			return true
		}
	}
	return false
}

// Compile reads and checks every source of a deployment of opts.Profile.
func Compile(opts Options) (*Result, error) {
	if opts.Profile == "" {
		opts.Profile = ProfileVolcanic
	}
	if opts.Profile != ProfileVolcanic && opts.Profile != ProfileCraftbot {
		return nil, fmt.Errorf("profile %q: the profiles are %s and %s", opts.Profile, ProfileVolcanic, ProfileCraftbot)
	}
	read := opts.ReadFile
	if read == nil {
		read = inputfile.Read
	}
	deny := opts.DenyList
	if deny == nil {
		deny = denylist.Default()
	}
	c := &compiler{opts: opts, read: withoutBOM(read), readAsIs: read, res: &Result{Profile: opts.Profile, Files: newFileSet(), Deny: deny}}
	v, err := schema.Acquire()
	if err != nil {
		return nil, err
	}
	defer schema.Release(v)
	defer c.stopChecks() // after an input error too: no goroutine left waiting
	c.v = v
	run := c.run
	if opts.Profile == ProfileCraftbot {
		run = c.runCraftbot
	}
	if err := run(); err != nil {
		return nil, err
	}
	return c.res, nil
}

type compiler struct {
	opts Options
	read func(string) ([]byte, error)
	// readAsIs reads a file with its byte order mark: mcp_config.json,
	// whose one mark craftbot.Check drops itself, as for every other
	// reader of that file (mcpc config, mcpc ui, mcpc run).
	readAsIs func(string) ([]byte, error)
	v        *schema.Validator
	// checks runs the schema checks while the entries are bound and read.
	checks *checkPool
	res    *Result
	cfg    *config
	layers []layerInfo
	ds     []diag.Diagnostic
	// settingsPath is set when settings.json was read.
	settingsPath string
	settingsData []byte
	// texts are the inputs read so far, searched for ${env:NAME}.
	texts [][]byte
	// hostSecrets finds the values of deny-listed host variables (named by
	// hostSecretNames, in the same order) in config values.
	hostSecrets *redact.Redactor
	// knownSecrets are the values the redactor knows; literalSecrets the
	// credentials found written into configuration values.
	knownSecrets, literalSecrets []string
	hostSecretNames              []string
	// secretFrom (craftbot) says where each known secret comes from, in
	// the order the redactor was given them.
	secretFrom []string
}

// checkJob is one schema check, run in parallel with the others.
type checkJob struct {
	def     string
	data    *node.Node
	subject string
	naming  schema.Naming
	// entry, when set, is packed once its tree is checked.
	entry *Entry
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
	// The configuration tree has served: the entries hold what was bound.
	// Holding it while settings.json is parsed made the largest part of the
	// peak heap.
	c.cfg = nil

	p := &preset{env: res.Env, cfg: pw, quote: c.quote}
	p.resolve()
	c.ds = append(c.ds, p.ds...)

	settingsEntries, src, err := c.readSettings()
	if err != nil {
		return err
	}
	res.PlaywrightLog = res.Redactor.Redact(p.LogLine())

	entries := make([]*Entry, 0, len(hostEntries)+1+len(settingsEntries))
	entries = append(entries, hostEntries...)
	var presetEntry []*Entry
	if p.enabled {
		presetEntry = []*Entry{p.entry()}
		entries = append(entries, presetEntry...)
		res.Sources = append(res.Sources, plan.SourceRef{Kind: "preset"})
	}
	entries = append(entries, settingsEntries...)
	if c.settingsPath != "" {
		res.Sources = append(res.Sources, plan.SourceRef{Kind: "settings", Path: c.settingsPath})
	}
	res.Entries = entries

	for _, e := range presetEntry {
		c.checkEntry(e)
		c.checkPromptWorkspace(e)
		e.pack()
	}
	c.settleSettings(settingsEntries, src)
	c.waitChecks()
	c.checkEnvKeys()
	c.checkNameCase(entries)
	explainForeign(c.ds)
	return c.finish(c.merge(entries))
}

// settle makes the checks of e that the schema does not express, then
// has its schema check run (job), after which its tree is packed: the
// entries are settled one by one as they are bound or read, so that the
// trees of every entry are never whole at once.
func (c *compiler) settle(e *Entry, job checkJob) {
	c.checkEntry(e)
	c.checkPromptWorkspace(e)
	job.entry = e
	c.check(job)
}

// finish ends a compilation of either profile with its merged plan: every
// message redacted, the diagnostics sorted, and the plan sealed when there
// is no error (the host would refuse to start otherwise).
func (c *compiler) finish(p *plan.Plan) error {
	c.learnLiteralSecrets()
	res := c.res
	res.draft = p
	for i := range c.ds {
		c.ds[i].Message = res.Redactor.Redact(c.ds[i].Message)
		c.ds[i].Suggestion = res.Redactor.Redact(c.ds[i].Suggestion)
	}
	diag.Sort(c.ds)
	res.Diagnostics = c.ds
	if !res.HasErrors() {
		if err := res.seal(p, c.opts.KeepPlanJSON); err != nil {
			return err
		}
		res.Plan = p
	}
	return nil
}

// seal sets p's digest as plan.Seal does (sha256 of the canonical plan
// without digest). With keep it keeps the canonical JSON it hashed, from
// which PlanJSON writes the plan without encoding it a second time.
func (r *Result) seal(p *plan.Plan, keep bool) error {
	if !keep {
		return p.Seal()
	}
	p.Digest = ""
	b, err := p.Canonical()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	p.Digest = "sha256:" + hex.EncodeToString(sum[:])
	r.unsealed = b
	return nil
}

// PlanJSON returns the plan's canonical JSON, the bytes Plan.Canonical
// gives. With Options.KeepPlanJSON it is made from the encoding its digest
// was computed over: the digest is one line inserted among the plan's
// top-level keys, in sorted order (first for volcanic plans; after
// autoConnect for craftbot ones), so that a plan is encoded once per
// compilation, not once to seal it and again to print it. Without it the
// plan is encoded again.
func (r *Result) PlanJSON() ([]byte, error) {
	if r.Plan == nil {
		return nil, errors.New("no plan: the compilation found errors")
	}
	if r.unsealed == nil {
		return r.Plan.Canonical()
	}
	at := digestLine(r.unsealed)
	if at < 0 {
		return r.Plan.Canonical()
	}
	field := "  \"digest\": \"" + r.Plan.Digest + "\",\n"
	out := make([]byte, 0, len(r.unsealed)+len(field))
	out = append(out, r.unsealed[:at]...)
	out = append(out, field...)
	return append(out, r.unsealed[at:]...), nil
}

// digestLine is the offset of the first top-level key of the canonical
// plan that sorts after "digest" (where the digest line goes), or -1 when
// the text is not a canonical plan.
func digestLine(plan []byte) int {
	if !bytes.HasPrefix(plan, []byte("{\n")) {
		return -1
	}
	for off := 2; off < len(plan); {
		end := bytes.IndexByte(plan[off:], '\n')
		if end < 0 {
			return -1
		}
		line := plan[off : off+end]
		if bytes.HasPrefix(line, []byte(`  "`)) {
			key := line[3:]
			if q := bytes.IndexByte(key, '"'); q >= 0 && string(key[:q]) > "digest" {
				return off
			}
		}
		off += end + 1
	}
	return -1
}
