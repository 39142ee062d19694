package cli

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/internal/watch"
	"github.com/mcpc-dev/mcpc/policies/lint"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// mcpc run --watch: the gateway takes the --plan file again whenever it
// changes (`mcpc plan -o` writes it atomically, an editor by rename; the
// watcher sees both), and applies the difference to the running engine
// (gateway.Engine.Apply). A plan that is not valid, or that the engine
// cannot take, is logged with its diagnostics and the running plan stays.
// What is watched besides, and compiled again, is the profile's
// (planSource): a volcanic plan's sources, a craftbot plan's config file.
//
// The plan's sources (appsettings files, env files, settings.json) are
// watched too when compiling them here reproduces the plan: same digest,
// with the options the plan records (which files, whether the process
// environment and --env were read) and the values it cannot record taken
// from this mcpc run (its process environment, its --env values, its
// --deny-list), or from the mcpc.cue mcpc plan read (runSources). A change of a source is then compiled and applied; a plan
// that those sources do not reproduce is followed by its file only, and
// the log says why.

// testHookReloaded, when set, is called after each reload of the plan
// with whether it changed what runs (tests count reloads through it).
var testHookReloaded func(applied bool, err error)

// startWatch watches files for mcpc run --watch, one reload at a time
// (reload says whether the change was applied, for testHookReloaded), and
// logs the watcher's own errors through redact.
func startWatch(ctx context.Context, files []string, reload func(context.Context) (bool, error), redact func(string) string, logw *lockedWriter) (*watch.Watcher, error) {
	w, err := watch.Start(ctx, watch.Options{
		Files: files,
		Reload: func(ctx context.Context) error {
			applied, err := reload(ctx)
			if testHookReloaded != nil {
				testHookReloaded(applied, err)
			}
			return err
		},
		OnError: func(err error) {
			logw.printf("mcpc: error: %s\n", term.Escape(redact(err.Error())))
		},
	})
	if err != nil {
		return nil, usageError("--watch: %v", err)
	}
	return w, nil
}

// planSource is what mcpc run --watch watches for a plan's profile, and
// what a change of those files gives. The watcher runs one reload at a
// time, so a source needs no lock.
type planSource interface {
	// files are the files to watch; watching is the line that says so.
	files() []string
	watching() string
	// next acts on the files that changed since the last call: it returns
	// the plan to apply, where its ${config:KEY} values are read, the file
	// it came from (for errors) and what changed (for "nothing to do";
	// "" for no such line). A nil plan without error: nothing changed.
	// Its diagnostics are logged already.
	next(ctx context.Context) (p *plan.Plan, config runtime.ConfigLookup, from, what string, err error)
	// applied is told that p, from the last next, runs now.
	applied(p *plan.Plan)
}

// keptPlan ends the error of a reload that applied nothing.
const keptPlan = "the running plan stays"

// planApplier is what a reload applies a plan to (gateway.Engine).
type planApplier interface {
	Apply(ctx context.Context, p *plan.Plan, config runtime.ConfigLookup) (bool, error)
	Redact(string) string
}

// startPlanWatch watches src's files for mcpc run --watch and applies each
// change to eng, one at a time. The watcher ends with ctx or Close, which
// waits for a reload in progress.
func startPlanWatch(ctx context.Context, src planSource, eng planApplier, logw *lockedWriter) (*watch.Watcher, error) {
	reload := func(ctx context.Context) (bool, error) { return reloadFrom(ctx, src, eng, logw) }
	w, err := startWatch(ctx, src.files(), reload, eng.Redact, logw)
	if err != nil {
		return nil, err
	}
	logw.printf("%s", src.watching())
	return w, nil
}

// reloadFrom applies what a change of src's files gives. It reports
// whether anything that runs changed; an error means the running plan
// stays (its diagnostics are logged already).
func reloadFrom(ctx context.Context, src planSource, eng planApplier, logw *lockedWriter) (bool, error) {
	p, config, from, what, err := src.next(ctx)
	if err != nil || p == nil {
		return false, err
	}
	changed, err := eng.Apply(ctx, p, config)
	switch {
	case err != nil && (errors.Is(err, runtime.ErrHostClosed) || ctx.Err() != nil):
		return false, nil // shutting down
	case err != nil:
		return false, fmt.Errorf("reload: %s: %s; %s", from, eng.Redact(err.Error()), keptPlan)
	}
	if !changed && what != "" {
		logw.printf("mcpc: reload: %s, nothing to do for the running servers\n", what)
	}
	src.applied(p)
	return changed, nil
}

// fileSum is the hash of a file's bytes; a file that cannot be read has
// the hash of why (its reload says why): a change from one reason to
// another (a directory, then a named pipe) is a change, logged once, and
// the same reason again is not.
func fileSum(path string) [sha256.Size]byte {
	data, err := inputfile.Read(path)
	if err != nil {
		return sha256.Sum256([]byte("\x00unreadable: " + unwrapPath(err).Error()))
	}
	return sha256.Sum256(data)
}

// readPlanFile checks a plan file's new text for a reload; a plan that is
// not valid has its diagnostics logged (redacted) and is an error.
func readPlanFile(planFile string, data []byte, out diagOutput, redact func(string) string, logw *lockedWriter) (*plan.Plan, error) {
	p, ds := plan.Read(planFile, data)
	if p == nil {
		var b bytes.Buffer
		if err := printDiagnostics(&b, out, ds, sourcesOf().withFile(planFile, data), redact); err != nil {
			return nil, err
		}
		logw.printf("%s", b.String())
		return nil, fmt.Errorf("reload: %s is not a valid plan (%s); %s", planFile, report.Summary(ds), keptPlan)
	}
	return p, nil
}

// compileForReload compiles with opts for a reload. Its diagnostics are
// logged (redacted), as mcpc plan would print them; what names the
// sources in an error.
func compileForReload(opts compile.Options, what string, out diagOutput, redact func(string) string, logw *lockedWriter) (*compile.Result, error) {
	res, err := compile.Compile(opts)
	if err != nil {
		return nil, fmt.Errorf("reload: %s: %s; %s", what, redact(err.Error()), keptPlan)
	}
	if len(res.Diagnostics) > 0 {
		var b bytes.Buffer
		red := func(s string) string { return redact(res.Redactor.Redact(s)) }
		if err := printDiagnostics(&b, out, res.Diagnostics, res.Files, red); err != nil {
			return nil, err
		}
		logw.printf("%s", b.String())
	}
	return res, nil
}

// volcanicSource is what mcpc run --watch watches for a volcanic plan: the
// plan file, and the plan's sources when compiling them here reproduces
// the plan.
type volcanicSource struct {
	planFile string
	out      diagOutput
	redact   func(string) string
	logw     *lockedWriter
	// sources are the files the plan was compiled from, compiled again
	// with opts on a change; none when they do not reproduce the plan.
	sources []string
	opts    compile.Options
	// prof and run give the sources of a plan (the profile's Recompile).
	prof compile.Profile
	run  compile.RunSources
	// sums are the hashes of the plan file and the sources as last read:
	// a reload acts on the files that changed.
	sums map[string][sha256.Size]byte
	// fromPlanFile: the last next read the plan file, not the sources.
	fromPlanFile bool
}

func (v *volcanicRun) source(c *ucli.Context, s runSettings, eng *gateway.Engine, logw *lockedWriter) planSource {
	out := diagFlags(c)
	out.color = nil // log lines: never colored
	r := &volcanicSource{planFile: v.planFile, out: out, redact: eng.Redact, logw: logw,
		sums: map[string][sha256.Size]byte{v.planFile: sha256.Sum256(v.planData)}}
	var err error
	if r.run, err = runSources(c, s, v.p.Profile); err == nil {
		if r.prof, err = compile.Lookup(v.p.Profile); err == nil {
			r.opts, r.sources, err = r.prof.Recompile(v.p, r.run)
		}
	}
	why := ""
	if err != nil {
		why = "its sources cannot be compiled here: " + err.Error()
	} else {
		why = r.reproduces(v.p)
	}
	if why != "" {
		logw.printf("mcpc: --watch: %s; only the plan file is watched\n", eng.Redact(why))
		r.sources = nil
	}
	for _, f := range r.sources {
		r.sums[f] = fileSum(f)
	}
	return r
}

func (r *volcanicSource) files() []string { return append([]string{r.planFile}, r.sources...) }

func (r *volcanicSource) watching() string {
	if len(r.sources) > 0 {
		return fmt.Sprintf("mcpc: watching %s and its sources %s: a change is applied to the running gateway\n", r.planFile, strings.Join(r.sources, ", "))
	}
	return fmt.Sprintf("mcpc: watching %s: a change is applied to the running gateway\n", r.planFile)
}

// next acts on the files that changed since the last reload: a changed
// source is compiled, else a changed plan file read.
func (r *volcanicSource) next(context.Context) (*plan.Plan, runtime.ConfigLookup, string, string, error) {
	sourceChanged := false
	for _, f := range r.sources {
		if sum := fileSum(f); sum != r.sums[f] {
			r.sums[f], sourceChanged = sum, true
		}
	}
	planSum := fileSum(r.planFile)
	planChanged := planSum != r.sums[r.planFile]
	r.sums[r.planFile] = planSum
	r.fromPlanFile = false
	switch {
	case sourceChanged:
		res, err := compileForReload(r.opts, "the sources of "+r.planFile, r.out, r.redact, r.logw)
		if err != nil {
			return nil, nil, "", "", err
		}
		if res.Plan == nil {
			return nil, nil, "", "", fmt.Errorf("reload: the sources of %s do not compile (%s); %s", r.planFile, report.Summary(res.Diagnostics), keptPlan)
		}
		return res.Plan, nil, "the sources of " + r.planFile, "a source of " + r.planFile + " changed", nil
	case planChanged:
		data, err := inputfile.ReadText(r.planFile)
		if err != nil {
			return nil, nil, "", "", fmt.Errorf("reload: cannot read --plan %s: %v; %s", r.planFile, unwrapPath(err), keptPlan)
		}
		p, err := readPlanFile(r.planFile, data, r.out, r.redact, r.logw)
		if err != nil {
			return nil, nil, "", "", err
		}
		r.fromPlanFile = true
		return p, nil, r.planFile, r.planFile + " changed", nil
	}
	return nil, nil, "", "", nil // rewritten with the same bytes
}

// applied stops following the sources once the plan file names others.
func (r *volcanicSource) applied(p *plan.Plan) {
	if !r.fromPlanFile || len(r.sources) == 0 {
		return
	}
	if _, files, err := r.prof.Recompile(p, r.run); err != nil || !slices.Equal(files, r.sources) {
		r.logw.printf("mcpc: --watch: %s reads other sources than the plan mcpc run started with; from now on only the plan file is watched (restart mcpc run to watch its sources)\n", r.planFile)
		r.sources = nil
	}
}

// runSources are what this mcpc run gives a profile's Recompile: what a
// plan cannot record of its sources. Each of --env, --env-file,
// --clean-env and --deny-list given wins; the rest are those of the
// mcpc.cue found upward from the current directory, as mcpc plan takes
// them there (deploymentIn), so a plan made from that mcpc.cue reproduces.
// An mcpc.cue that does not load, or is another profile's, is an error:
// the sources are then not watched, and the log says why.
func runSources(c *ucli.Context, s runSettings, profile string) (compile.RunSources, error) {
	run := compile.RunSources{PlanFile: s.planFile, Environ: environ(), Env: c.StringSlice("env"),
		EnvFiles: c.StringSlice("env-file"), CleanEnv: c.Bool("clean-env"), DenyList: s.deny}
	file := lint.Find(".")
	if file == "" {
		return run, nil
	}
	d, ds := lint.Load(file)
	if len(ds) > 0 {
		return run, fmt.Errorf("%s: the deployment's configuration is not valid (%s)", file, report.Summary(ds))
	}
	if cueProfile := cmp.Or(d.Profile, compile.ProfileVolcanic); cueProfile != cmp.Or(profile, compile.ProfileVolcanic) {
		return run, fmt.Errorf("%s is a deployment of profile %s, and the plan's profile is %s", file, cueProfile, cmp.Or(profile, compile.ProfileVolcanic))
	}
	if !c.IsSet("env") {
		run.Env = d.Sources.Env
	}
	if !c.IsSet("env-file") {
		run.EnvFiles = d.Sources.EnvFiles
	}
	if !c.IsSet("clean-env") {
		run.CleanEnv = d.Sources.CleanEnv
	}
	if !c.IsSet("deny-list") && d.Sources.DenyList != "" {
		l, err := denylist.Load(d.Sources.DenyList)
		if err != nil {
			return run, fmt.Errorf("%s: denyList: %v", file, err)
		}
		run.DenyList = l
	}
	return run, nil
}

// reproduces returns why compiling the sources here does not give p
// ("" when it does, and there are sources to watch).
func (r *volcanicSource) reproduces(p *plan.Plan) string {
	if len(r.sources) == 0 {
		return "the plan names no source file"
	}
	res, err := compile.Compile(r.opts)
	switch {
	case err != nil:
		return "its sources cannot be compiled here: " + err.Error()
	case res.Plan == nil:
		return "its sources do not compile here (" + report.Summary(res.Diagnostics) + ")"
	case res.Plan.Digest != p.Digest:
		return "its sources compile here to another plan than --plan " + r.planFile + " (the process environment, --env or --deny-list, or mcpc.cue's, differ from mcpc plan's, or a source changed since)"
	}
	return ""
}

// mcpc run --watch with a craftbot plan watches two files: the --plan file
// and the mcp_config.json it names in its sources, which CraftBot's own
// `/mcp enable|disable|env` and `mcpc config …` edit. A change of the
// config file is compiled here, as `mcpc plan --profile craftbot --config
// FILE` would (the runtime never compiles: layers_test.go), with the host
// environment and deny-list of this mcpc run and this machine's OS; the
// entries CraftBot would skip are skipped (their warnings logged), the rest
// applied with the file's new env values (gateway.Craftbot.Apply restarts a
// server whose value changed). A change of the plan file alone is applied as
// it is written. When both changed in one burst (`mcpc plan -o` after an
// edit), the config file wins: the plan is compiled from it.

// craftbotSources are the files a craftbot gateway runs from, as read when
// it started.
type craftbotSources struct {
	plan, config         string
	planData, configData []byte
}

// craftbotSource is what mcpc run --watch watches for a craftbot plan.
type craftbotSource struct {
	files_ craftbotSources
	redact func(string) string
	// opts compile the config file: this run's host environment and
	// deny-list, this machine's OS (the profile's Recompile); optsErr is
	// why there are none.
	opts    compile.Options
	optsErr error
	out     diagOutput
	logw    *lockedWriter
	// planSum and configSum are the hashes of the files as last read: a
	// reload acts on the file that changed, and a burst that rewrote the
	// same bytes does nothing.
	planSum, configSum [sha256.Size]byte
}

func (r *craftbotRun) source(c *ucli.Context, s runSettings, eng *gateway.Engine, logw *lockedWriter) planSource {
	files := r.files
	out := diagFlags(c)
	out.color = nil // log lines: never colored
	src := &craftbotSource{files_: files, redact: eng.Redact, out: out, logw: logw,
		planSum: sha256.Sum256(files.planData), configSum: sha256.Sum256(inputfile.TrimBOM(files.configData))}
	prof, err := compile.Lookup(r.p.Profile)
	var run compile.RunSources
	if err == nil {
		run, err = runSources(c, s, r.p.Profile)
	}
	if err == nil {
		src.opts, _, err = prof.Recompile(r.p, run)
	}
	// The config file compiled is the one read at the start and watched
	// (the same path: craftbot.ConfigPath found both).
	src.opts.Config, src.optsErr = files.config, err
	return src
}

func (r *craftbotSource) files() []string { return []string{r.files_.plan, r.files_.config} }

func (r *craftbotSource) watching() string {
	return fmt.Sprintf("mcpc: watching %s and its config file %s: a change is applied to the running gateway\n", r.files_.plan, r.files_.config)
}

func (r *craftbotSource) applied(*plan.Plan) {}

// next acts on the file that changed since the last reload: the config
// file is compiled, the plan file read.
func (r *craftbotSource) next(context.Context) (*plan.Plan, runtime.ConfigLookup, string, string, error) {
	// Read as the compiler reads it: what is hashed is what is compiled.
	cfgData, err := inputfile.Read(r.files_.config)
	if err != nil {
		return nil, nil, "", "", fmt.Errorf("reload: cannot read the config file %s: %v; %s", r.files_.config, unwrapPath(err), keptPlan)
	}
	planData, err := inputfile.ReadText(r.files_.plan)
	if err != nil {
		return nil, nil, "", "", fmt.Errorf("reload: cannot read --plan %s: %v; %s", r.files_.plan, unwrapPath(err), keptPlan)
	}
	cfgSum, planSum := sha256.Sum256(inputfile.TrimBOM(cfgData)), sha256.Sum256(planData)
	cfgChanged, planChanged := cfgSum != r.configSum, planSum != r.planSum
	r.configSum, r.planSum = cfgSum, planSum
	switch {
	case cfgChanged:
		p, config, err := r.compileConfig(cfgData)
		return p, config, r.files_.config, r.files_.config + " changed", err
	case planChanged:
		p, config, err := r.readPlan(planData, cfgData)
		return p, config, r.files_.plan, r.files_.plan + " changed", err
	}
	return nil, nil, "", "", nil // rewritten with the same bytes
}

// compileConfig compiles the config file as mcpc plan --profile craftbot
// would. Its diagnostics are logged (redacted): the errors of an edit that
// does not compile, the warnings of the entries CraftBot skips.
func (r *craftbotSource) compileConfig(cfgData []byte) (*plan.Plan, runtime.ConfigLookup, error) {
	if r.optsErr != nil {
		return nil, nil, fmt.Errorf("reload: %s: %s; %s", r.files_.config, r.redact(r.optsErr.Error()), keptPlan)
	}
	opts := r.opts
	opts.ReadFile = func(path string) ([]byte, error) {
		if path == r.files_.config {
			return cfgData, nil
		}
		return inputfile.Read(path)
	}
	res, err := compileForReload(opts, r.files_.config, r.out, r.redact, r.logw)
	if err != nil {
		return nil, nil, err
	}
	if res.Plan == nil {
		return nil, nil, fmt.Errorf("reload: the config file %s does not compile (%s); %s", r.files_.config, report.Summary(res.Diagnostics), keptPlan)
	}
	return res.Plan, craftbot.ConfigOf(res).EnvValue, nil
}

// readPlan takes the plan file as written, its env values read from the
// config file as it is. A plan that names another config file than the one
// watched is refused: this gateway watches the file it started with.
func (r *craftbotSource) readPlan(planData, cfgData []byte) (*plan.Plan, runtime.ConfigLookup, error) {
	p, err := readPlanFile(r.files_.plan, planData, r.out, r.redact, r.logw)
	if err != nil {
		return nil, nil, err
	}
	if p.Profile == plan.ProfileCraftbot {
		path, err := craftbot.ConfigPath(r.files_.plan, p)
		if err != nil {
			return nil, nil, fmt.Errorf("reload: %v; %s", err, keptPlan)
		}
		if !samePath(path, r.files_.config) {
			return nil, nil, fmt.Errorf("reload: %s names the config file %s, and this gateway reads %s; %s (restart mcpc run to take another config file)", r.files_.plan, path, r.files_.config, keptPlan)
		}
	}
	cfg, _, err := craftbot.Check(r.files_.config, cfgData, craftbot.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("reload: %s: %s; %s", r.files_.config, r.redact(err.Error()), keptPlan)
	}
	return p, cfg.EnvValue, nil
}

// samePath reports whether two paths name one file.
func samePath(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
