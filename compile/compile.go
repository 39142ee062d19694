// Package compile turns an agent host's MCP configuration sources into a
// frozen launch plan: it reads the sources with positions, binds the host
// configuration as .NET would, checks every entry against the CUE schema,
// applies the Playwright preset, merges by precedence and checks templates.
// Problems come back as diagnostics; unreadable inputs as an *InputError.
//
// It imports the vocabulary packages (diag, node, schema, plan, redact,
// policies/denylist, internal/inputfile); the runtime and the CLI import it,
// never the other way round.
package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/mcpc-dev/mcpc/plan"

	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/node"
	"github.com/mcpc-dev/mcpc/policies/denylist"
	"github.com/mcpc-dev/mcpc/redact"
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
	ReadFile    func(string) ([]byte, error) // nil: inputfile.Read (a regular file, at most 16 MiB)
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
	draft         *plan.Plan
	// unsealed is the canonical JSON of Plan without its digest, what the
	// digest was computed over (see seal).
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
		read = inputfile.Read
	}
	deny := opts.DenyList
	if deny == nil {
		deny = denylist.Default()
	}
	c := &compiler{opts: opts, read: withoutBOM(read), res: &Result{Files: newFileSet(), Deny: deny}}
	v, err := schema.Acquire()
	if err != nil {
		return nil, err
	}
	defer schema.Release(v)
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
	// hostSecrets finds the values of deny-listed host variables (named by
	// hostSecretNames, in the same order) in config values.
	hostSecrets     *redact.Redactor
	hostSecretNames []string
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
	// The configuration tree has served: the entries hold what was bound.
	// Holding it while settings.json is parsed made the largest part of the
	// peak heap.
	c.cfg = nil

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
		res.Sources = append(res.Sources, plan.SourceRef{Kind: "preset"})
	}
	entries = append(entries, settingsEntries...)
	if c.settingsPath != "" {
		res.Sources = append(res.Sources, plan.SourceRef{Kind: "settings", Path: c.settingsPath})
	}
	res.Entries = entries

	c.runChecks()
	for _, e := range entries {
		c.checkEntry(e)
	}
	merged := c.merge(entries)
	res.draft = merged

	for i := range c.ds {
		c.ds[i].Message = res.Redactor.Redact(c.ds[i].Message)
		c.ds[i].Suggestion = res.Redactor.Redact(c.ds[i].Suggestion)
	}
	diag.Sort(c.ds)
	res.Diagnostics = c.ds
	if !res.HasErrors() {
		if err := res.seal(merged); err != nil {
			return err
		}
		res.Plan = merged
	}
	return nil
}

// seal sets p's digest as plan.Seal does (sha256 of the canonical plan
// without digest) and keeps the canonical JSON it hashed, from which
// PlanJSON writes the plan without encoding it a second time.
func (r *Result) seal(p *plan.Plan) error {
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
// gives, made from the encoding its digest was computed over: the digest
// is the first key of the plan, so it is one line inserted after the
// opening brace. A plan is encoded once per compilation, not once to seal
// it and again to print it.
func (r *Result) PlanJSON() ([]byte, error) {
	if r.Plan == nil {
		return nil, errors.New("no plan: the compilation found errors")
	}
	const open = "{\n"
	if !bytes.HasPrefix(r.unsealed, []byte(open)) {
		return r.Plan.Canonical()
	}
	field := "  \"digest\": \"" + r.Plan.Digest + "\",\n"
	out := make([]byte, 0, len(r.unsealed)+len(field))
	out = append(out, open...)
	out = append(out, field...)
	return append(out, r.unsealed[len(open):]...), nil
}
