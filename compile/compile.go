// Package compile turns an agent host's MCP configuration sources into a
// frozen launch plan, through the host profile the deployment names: it is
// the engine every profile shares (the host environment, the excerpts, the
// sealed plan) and the registry of profiles (Profile). Problems come back
// as diagnostics; unreadable inputs as an *InputError.
//
// Each profile is a package of its own that registers itself
// (compile/volcanic, the default, and compile/craftbot); a program links
// them all with one import of compile/profiles.
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

	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/schema"
)

// ProfileVolcanic is the default profile's name (compile/volcanic): the host
// configuration, the Playwright preset and the agent's settings.json
// (SPEC §2).
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
	Skip string
	// Model is the profile's own reading of the entry (craftbot: a
	// *craftbot.Entry); nil for volcanic.
	Model any
	// Naming writes a path of the entry's fields as its source spells
	// them (Args:0 in appsettings, args[0] in settings.json); nil: as the
	// schema names them.
	Naming schema.Naming
}

// Node returns the entry's fields under their schema names, typed and
// positioned in the user's input: one tree, the same at every call (do not
// change it). Once a compilation has checked an entry it keeps the tree
// packed (docs/decisions/0041-compiler-memory.md);
// the first call after the compilation builds the tree again and keeps it.
func (e *Entry) Node() *node.Node {
	if e.tree != nil {
		return e.tree
	}
	e.unpack.Do(func() { e.unpacked = e.packed.Unpack() })
	return e.unpacked
}

// SetNode makes n the entry's fields: for a profile that reads an entry in
// full only when it checks it (settings.json's servers are read shallow
// first).
func (e *Entry) SetNode(n *node.Node) { e.tree, e.packed = n, node.Packed{} }

// NodeIn is Node for a reader of every entry that keeps no tree (the
// merge, the diagnostics by server): a packed tree is built in s, valid
// until s is used again, and not kept.
func (e *Entry) NodeIn(s *node.Scratch) *node.Node {
	if e.tree != nil {
		return e.tree
	}
	return e.packed.UnpackInto(s)
}

// Pack keeps e's tree in its packed form only, once a profile has checked
// it: every value of every server positioned until the end was most of
// what a compilation of a large deployment held (docs/decisions/0041-compiler-memory.md).
func (e *Entry) Pack() {
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
	// Plan is nil when there are errors the host would refuse to start
	// with; a host that runs the rest of its servers (craftbot) has a
	// plan beside errors about one server (Compilation.FinishRunning).
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
	// Model is the profile's own reading of its sources (craftbot: the
	// *craftbot.Config of mcp_config.json); nil for volcanic.
	Model   any
	profile Profile
	draft   *plan.Plan
	// unsealed is the canonical JSON of Plan without its digest, what the
	// digest was computed over (see seal), kept with Options.KeepPlanJSON.
	unsealed []byte
	// winners are the Entries that won their names, by name, built by the
	// first Locate: a lint with a finding per server locates each one, and
	// a scan of Entries per finding grew with findings × servers. A
	// pointer, so that a copy of the Result shares it.
	winners *entryIndex
}

// entryIndex is Result.winners.
type entryIndex struct {
	once   sync.Once
	byName map[string]*Entry
	// mu guards scratch, where Locate builds an entry's packed tree for
	// one look-up and does not keep it (a tree kept per finding's entry
	// held most of a lint's memory when every server had a finding).
	mu      sync.Mutex
	scratch node.Scratch
}

// Summary is what validate's last line says of the servers, as the
// profile counts them.
func (r *Result) Summary() string { return r.profile.Summary(r) }

// Draft is the plan built so far even when there are errors, for explain.
func (r *Result) Draft() *plan.Plan { return r.draft }

// blocks reports whether an error in ds keeps the plan from being sealed:
// any error, but those runsDespite accepts.
func blocks(ds []diag.Diagnostic, runsDespite func(diag.Diagnostic) bool) bool {
	for _, d := range ds {
		if d.Severity == diag.Error && (runsDespite == nil || !runsDespite(d)) {
			return true
		}
	}
	return false
}

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
	prof, err := Lookup(opts.Profile)
	if err != nil {
		return nil, err
	}
	opts.Profile = prof.Name()
	read := opts.ReadFile
	if read == nil {
		read = inputfile.Read
	}
	deny := opts.DenyList
	if deny == nil {
		deny = denylist.Default()
	}
	c := &compiler{opts: opts, read: withoutBOM(read), readAsIs: read, res: &Result{Profile: opts.Profile, profile: prof, Files: newFileSet(), Deny: deny, winners: &entryIndex{}}}
	if err := prof.Compile(&Compilation{c}); err != nil {
		return nil, err
	}
	return c.res, nil
}

type compiler struct {
	opts Options
	read func(string) ([]byte, error)
	// readAsIs reads a file with its byte order mark: mcp_config.json,
	// whose one mark the craftbot profile drops itself, as for every other
	// reader of that file (mcpc config, mcpc ui, mcpc run).
	readAsIs func(string) ([]byte, error)
	res      *Result
	ds       []diag.Diagnostic
}

// finish ends a compilation of either profile with its merged plan: every
// message redacted, the diagnostics sorted, and the plan sealed when there
// is no error (the host would refuse to start otherwise).
func (c *compiler) finish(p *plan.Plan, runsDespite func(diag.Diagnostic) bool) error {
	res := c.res
	res.draft = p
	for i := range c.ds {
		c.ds[i].Message = res.Redactor.Redact(c.ds[i].Message)
		c.ds[i].Suggestion = res.Redactor.Redact(c.ds[i].Suggestion)
	}
	diag.Sort(c.ds)
	res.Diagnostics = c.ds
	if !blocks(res.Diagnostics, runsDespite) {
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
