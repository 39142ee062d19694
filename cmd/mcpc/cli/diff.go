package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/compile/plandiff"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/policies/lint"
	"github.com/mcpc-dev/mcpc/runtime"
)

// ExitChanged is the exit of mcpc diff --exit-code when a runtime would do
// something to go from OLD to NEW.
const ExitChanged = 1

func diffCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "diff",
		Usage: "compare two launch plans or deployments: servers added, removed, enabled, disabled, changed, and what a runtime would do",
		UsageText: `mcpc diff OLD NEW [--exit-code] [--format text|json]

OLD and NEW are each a plan file (written by mcpc plan -o) or a deployment directory, compiled from
its mcpc.cue (there or in a parent, as mcpc lint finds it; without one, its appsettings.json). Each
server that differs shows how (added, removed, enabled, disabled, changed), what a runtime would do
(connect, disconnect, restart, reregister, update, nothing) and, field by field, old → new; an env
value that is not a template (${env:NAME}, ${config:KEY}, ${workspace}) shows as [REDACTED]. A
server that only moved in its file is unchanged.

The values servers start with are compared too, where a side gives them: a credential changed in
mcp_config.json under ${config:KEY}, an env file's value under ${env:NAME}, an inherited host
variable (env.KEY: [REDACTED] → [REDACTED], and where it comes from). Deployments give them; a
craftbot plan file gives the config file it names. Where they cannot be known (two plan files
naming one config file, a volcanic plan file against a deployment) a "not compared:" line says so.

Examples:
   mcpc diff main-plan.json plan.json
   mcpc diff deploy/prod deploy/staging --format json
   mcpc diff --exit-code main-plan.json plan.json   # CI: exit 1 when the change would make a runtime act`,
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "exit-code", Usage: "exit 1 when a runtime would do anything (0 when the plans are alike, or only where servers are written moved, or values were not compared)"},
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "output format: text|json"},
		},
		Action: diffAction,
	}
}

func diffAction(c *ucli.Context) error {
	if c.NArg() != 2 {
		return usageError("diff takes two arguments, OLD and NEW (plan files or deployment directories), got %d", c.NArg())
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return usageError("--format %s: diff writes text or json", format)
	}
	oldArg, newArg := c.Args().Get(0), c.Args().Get(1)
	if oldCue, newCue := deploymentFileOf(oldArg), deploymentFileOf(newArg); oldCue != "" && oldCue == newCue {
		return usageError("%s and %s are one deployment (both read %s): compare two deployments, or two plans (mcpc plan -o)", oldArg, newArg, oldCue)
	}
	oldSide, err := diffSide(c, oldArg)
	if err != nil {
		return err
	}
	newSide, err := diffSide(c, newArg)
	if err != nil {
		return err
	}
	oldPlan, newPlan := oldSide.plan, newSide.plan
	if oldPlan.Profile != newPlan.Profile {
		return usageError("%s is a %s plan and %s a %s plan: diff compares two plans of one profile", oldArg, oldPlan.Profile, newArg, newPlan.Profile)
	}
	d, err := plandiff.CompareLaunches(oldPlan, newPlan, diffLaunches(oldSide, newSide))
	if err != nil {
		return usageError("%v", err)
	}
	if format == "json" {
		out, err := d.JSON()
		if err != nil {
			return &exitError{code: ExitInternal, msg: err.Error()}
		}
		if _, err := c.App.Writer.Write(out); err != nil {
			return err
		}
	} else if err := d.WriteText(c.App.Writer); err != nil {
		return err
	}
	if c.Bool("exit-code") && d.Changed() {
		return &exitError{code: ExitChanged}
	}
	return nil
}

// deploymentFileOf is the mcpc.cue a directory argument reads; "" for a
// file or a directory without one.
func deploymentFileOf(arg string) string {
	if fi, err := os.Stat(arg); err != nil || !fi.IsDir() {
		return ""
	}
	if f := lint.Find(arg); f != "" {
		abs, _ := filepath.Abs(f)
		return abs
	}
	return ""
}

// diffInput is one side of a diff: its plan, and what its servers start
// with beyond it, as far as that side says.
type diffInput struct {
	arg  string
	plan *plan.Plan
	// host is the host environment a deployment's servers start with (as
	// its sources give it); nil for a plan file, which mcpc run launches
	// with its own.
	host *runtime.HostEnv
	// config reads a craftbot side's ${config:KEY} values, from the file
	// configPath; unknown says why there are none.
	config     runtime.ConfigLookup
	configPath string
	unknown    string
}

// diffSide reads one side of a diff: a plan file, or a deployment
// directory compiled to its plan. Input that gives no plan (a plan file
// that is not valid or was edited, a deployment with errors) is printed
// as positioned diagnostics on stderr and exits 2: exit 1 means "changed".
func diffSide(c *ucli.Context, arg string) (*diffInput, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, usageError("cannot read %s: %v", arg, unwrapPath(err))
	}
	if fi.IsDir() {
		return diffDeployment(c, arg)
	}
	data, err := inputfile.ReadText(arg)
	if err != nil {
		return nil, usageError("cannot read %s: %v", arg, unwrapPath(err))
	}
	p, ds := plan.Read(arg, data)
	if p == nil {
		if err := printDiagnostics(c.App.ErrWriter, plainText(c), ds, sourcesOf().withFile(arg, data), nil); err != nil {
			return nil, err
		}
		return nil, usageError("%s is not a plan this mcpc can compare (%s)", arg, report.Summary(ds))
	}
	in := &diffInput{arg: arg, plan: p}
	if p.Profile == plan.ProfileCraftbot {
		in.readConfig(arg)
	}
	return in, nil
}

// readConfig reads the config file a craftbot plan file names, where a
// runtime reads its servers' env values when it starts them. A file that
// cannot be read is not an error of the diff: the plans still compare,
// and the diff says which values it could not.
func (in *diffInput) readConfig(planFile string) {
	path, err := craftbot.ConfigPath(planFile, in.plan)
	if err != nil {
		in.unknown = err.Error()
		return
	}
	in.configPath = path
	data, err := inputfile.Read(path)
	if err != nil {
		in.unknown = fmt.Sprintf("%s: cannot read its config file %s, where its servers' env values are read: %v", planFile, path, unwrapPath(err))
		return
	}
	cfg, _, err := craftbot.Check(path, data, craftbot.Options{})
	if err != nil {
		in.unknown = fmt.Sprintf("%s: %v", path, err)
		return
	}
	in.config = cfg.EnvValue
}

// diffLaunches are what the two sides' stdio servers start with, as each
// side's runtime would launch them (runtime.CraftbotLaunch,
// plan.LaunchEnv), so that a value changed under an unchanged reference
// is a change (docs/decisions/0035-diff.md). Where a side cannot know its
// values the diff says so.
func diffLaunches(o, n *diffInput) plandiff.Launches {
	if o.plan.Profile == plan.ProfileCraftbot {
		switch {
		case o.configPath != "" && n.configPath != "" && samePath(o.configPath, n.configPath):
			return plandiff.Launches{Unknown: fmt.Sprintf("the values of ${config:KEY}: both sides read them from %s as it is when a server starts, "+
				"so a change made to it between them is not seen; compare two deployments, each with its copy of the file", o.configPath)}
		case o.unknown != "":
			return plandiff.Launches{Unknown: o.unknown}
		case n.unknown != "":
			return plandiff.Launches{Unknown: n.unknown}
		}
		// A plan file fixes no host environment: mcpc run's is alike for
		// both sides, so a plan file's side inherits the other side's.
		oh, nh := o.host, n.host
		switch {
		case oh == nil && nh == nil:
			oh = &runtime.HostEnv{Vars: map[string]string{}, Deny: denylist.Default()}
			nh = oh
		case oh == nil:
			oh = nh
		case nh == nil:
			nh = oh
		}
		cb := func(env *runtime.HostEnv, config runtime.ConfigLookup) plandiff.LaunchEnv {
			return func(s *plan.Server) ([]string, error) {
				spec, err := runtime.CraftbotLaunch(s, *env, config)
				return spec.Env, err
			}
		}
		return plandiff.Launches{Old: cb(oh, o.config), New: cb(nh, n.config)}
	}
	switch {
	case o.host == nil && n.host == nil:
		// Two plan files: one runtime launches either with its own
		// environment, so what they name alike resolves alike.
		return plandiff.Launches{}
	case o.host == nil || n.host == nil:
		file, dir := o.arg, n.arg
		if n.host == nil {
			file, dir = n.arg, o.arg
		}
		return plandiff.Launches{Unknown: fmt.Sprintf("the values of ${env:NAME}: %s is a plan file, launched with the environment mcpc run is given, not with %s's", file, dir)}
	}
	vol := func(env *runtime.HostEnv) plandiff.LaunchEnv {
		return func(s *plan.Server) ([]string, error) {
			// ${workspace} is the runtime's, alike for both sides.
			return plan.LaunchEnv(s, "${workspace}", env.Vars, env.Deny), nil
		}
	}
	return plandiff.Launches{Old: vol(o.host), New: vol(n.host)}
}

// diffDeployment compiles the deployment of dir, as mcpc lint reads it
// (without source flags: each side names its own sources), and makes the
// paths of its plan relative to the deployment, so that two deployments
// with the same layout compare server by server and not path by path. It
// keeps the host environment and, for craftbot, the config file's values
// its servers start with.
func diffDeployment(c *ucli.Context, dir string) (*diffInput, error) {
	opts, d, err := deploymentIn(c, dir)
	if err != nil {
		return nil, err
	}
	base := dir
	if d != nil {
		base = d.Dir
	}
	res, err := compileWith(opts)
	if err != nil {
		return nil, err
	}
	if res.Plan == nil {
		if err := printDiagnostics(c.App.ErrWriter, plainText(c), res.Diagnostics, sourcesOf(res.Files), res.Redactor.Redact); err != nil {
			return nil, err
		}
		return nil, usageError("%s: no plan to compare: fix the errors above (%s)", dir, report.Summary(res.Diagnostics))
	}
	in := &diffInput{arg: dir, host: &runtime.HostEnv{Vars: map[string]string{}, Deny: res.Deny}}
	if res.Env != nil {
		in.host.Vars = res.Env.Map()
	}
	if cfg := craftbot.ConfigOf(res); cfg != nil {
		in.config, in.configPath = cfg.EnvValue, opts.Config
	}
	in.plan = rebase(res.Plan, base)
	return in, nil
}

// rebase makes the paths a plan records (sources, origins of servers,
// shadowed and skipped definitions) relative to base, where they lie under
// it.
func rebase(p *plan.Plan, base string) *plan.Plan {
	rel := func(path string) string {
		if path == "" {
			return path
		}
		r, err := filepath.Rel(base, path)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return path
		}
		return filepath.ToSlash(r)
	}
	for i := range p.Sources {
		p.Sources[i].Path = rel(p.Sources[i].Path)
	}
	for i := range p.Servers {
		p.Servers[i].Origin.Path = rel(p.Servers[i].Origin.Path)
	}
	for i := range p.Shadowed {
		p.Shadowed[i].Origin.Path = rel(p.Shadowed[i].Origin.Path)
		p.Shadowed[i].Winner.Path = rel(p.Shadowed[i].Winner.Path)
	}
	for i := range p.Skipped {
		p.Skipped[i].Origin.Path = rel(p.Skipped[i].Origin.Path)
	}
	return p
}
