package compile

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
)

// Profile is what is specific to one host design: how its sources are
// found, read and checked into a plan, how a field of the plan is
// explained, and which files a plan's sources are (what `mcpc run --watch`
// watches and compiles again). Everything else of a compilation (the host
// environment, the excerpts, redacting the messages, sealing the plan) is
// the engine's, in this package; a profile finds its own secrets and gives
// the engine its redactor (Compilation.SetRedactor). A profile registers itself by its name
// (Register); package compile/profiles links every profile in, and a
// program that compiles imports it (or the profiles it needs).
type Profile interface {
	// Name is the profile's --profile value and its plans' "profile".
	Name() string
	// Compile reads and checks the sources c.Options() names, and ends
	// with c.Finish(plan).
	Compile(c *Compilation) error
	// Explain says where each field of the server named name came from.
	Explain(r *Result, name string) (*Explanation, bool)
	// Summary is what validate's last line says of r's servers, before
	// the count of problems ("3 servers, 1 shadowed").
	Summary(r *Result) string
	// FindSources fills in the sources of the deployment in dir that opts
	// leaves empty: the files the host reads there by default, as the host
	// environment opts describes chooses them. Nothing to check is an
	// error: a lint that checked nothing must not pass.
	FindSources(dir string, opts *Options) error
	// Detect finds the sources of a deployment of this profile in dir
	// (mcpc lint --init), as slash paths relative to dir; found is false
	// when dir holds none. Looked says what the profile looks for, for the
	// message when no profile finds anything.
	Detect(dir string) (sources Options, looked string, found bool)
	// Recompile returns the options that compile p's sources again, and
	// the source files a watcher watches (besides the plan file). What a
	// plan cannot record comes from run: the process environment, the
	// --env values, the deny-list. Files is nil when p names no source
	// file.
	Recompile(p *plan.Plan, run RunSources) (opts Options, files []string, err error)
}

// RunSources are what `mcpc run` knows of the sources beside its plan.
type RunSources struct {
	PlanFile string   // --plan, where a relative source path may be taken from
	Environ  []string // the process environment
	Env      []string // --env KEY=VALUE
	EnvFiles []string // --env-file
	CleanEnv bool
	DenyList *denylist.List
}

var (
	profilesMu sync.RWMutex
	profiles   = map[string]Profile{}
)

// Register makes p the profile of its name. Registering a name twice is a
// programming error.
func Register(p Profile) {
	profilesMu.Lock()
	defer profilesMu.Unlock()
	if _, dup := profiles[p.Name()]; dup {
		panic("compile: profile " + p.Name() + " registered twice")
	}
	profiles[p.Name()] = p
}

// Lookup returns the profile named name; "" is volcanic, the default.
// An unknown name is an error that lists the profiles.
func Lookup(name string) (Profile, error) {
	if name == "" {
		name = ProfileVolcanic
	}
	profilesMu.RLock()
	p, ok := profiles[name]
	profilesMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("profile %q: the profiles are %s", name, strings.Join(ProfileNames(), " and "))
	}
	return p, nil
}

// ProfileNames are the registered profiles' names, sorted, the default
// first.
func ProfileNames() []string {
	profilesMu.RLock()
	defer profilesMu.RUnlock()
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == ProfileVolcanic) != (names[j] == ProfileVolcanic) {
			return names[i] == ProfileVolcanic
		}
		return names[i] < names[j]
	})
	return names
}

// Compilation is one compilation as a profile sees it: its options, its
// result so far, and the engine's steps a profile uses.
type Compilation struct{ c *compiler }

// Options are the compilation's options, defaults filled in.
func (c *Compilation) Options() Options { return c.c.opts }

// Result is what the compilation found so far.
func (c *Compilation) Result() *Result { return c.c.res }

// ReadHostEnv reads the host environment (the process environment unless
// CleanEnv, --env-file, --env) into Result().Env, and records its
// sources.
func (c *Compilation) ReadHostEnv() error { return c.c.readHostEnv() }

// Read reads a source file as Options.ReadFile does, without a byte order
// mark (as .NET and JSON readers skip it).
func (c *Compilation) Read(path string) ([]byte, error) { return c.c.read(path) }

// ReadAsIs reads a source file as the profile's host does, byte order mark
// included.
func (c *Compilation) ReadAsIs(path string) ([]byte, error) { return c.c.readAsIs(path) }

// Report adds diagnostics.
func (c *Compilation) Report(ds ...diag.Diagnostic) { c.c.ds = append(c.c.ds, ds...) }

// SetRedactor makes r the redactor of every message and excerpt.
func (c *Compilation) SetRedactor(r *redact.Redactor) {
	c.c.res.Redactor = r
	c.c.res.Files.redactor = r
}

// Finish ends the compilation with its merged plan: every message
// redacted, the diagnostics sorted, and the plan sealed when there is no
// error.
func (c *Compilation) Finish(p *plan.Plan) error { return c.c.finish(p, nil) }

// FinishRunning ends the compilation like Finish, for a host that runs
// the rest of its servers where one of them is wrong (CraftBot skips an
// entry, or fails to start it, and starts the others): the plan is sealed
// unless an error is one that runsDespite does not accept. The errors stay
// in the report (the deployment does not do what it says), and the plan
// says what runs.
func (c *Compilation) FinishRunning(p *plan.Plan, runsDespite func(diag.Diagnostic) bool) error {
	return c.c.finish(p, runsDespite)
}

// NewEntry is a server definition a profile read: its fields under their
// schema names, typed and positioned in the user's input.
func NewEntry(name, source string, namePos diag.Pos, origin plan.Origin, tree *node.Node) *Entry {
	return &Entry{Name: name, Source: source, NamePos: namePos, Origin: origin, tree: tree}
}

// Plural writes "1 server" or "3 servers".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "s") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
