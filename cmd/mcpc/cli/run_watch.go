package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
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
	"github.com/mcpc-dev/mcpc/runtime"
)

// mcpc run --watch: the gateway takes the --plan file again whenever it
// changes (`mcpc plan -o` writes it atomically, an editor by rename; the
// watcher sees both), and applies the difference to the running host
// (runtime.Host.Apply). A plan that is not valid, or that the host cannot
// take, is logged with its diagnostics and the running plan stays.
//
// The plan's sources (appsettings files, env files, settings.json) are
// watched too when compiling them here reproduces the plan: same digest,
// with the options the plan records (which files, whether the process
// environment and --env were read) and the values it cannot record taken
// from this mcpc run (its process environment, its --env values, its
// --deny-list). A change of a source is then compiled and applied; a plan
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

// volcanicReloader is the state of mcpc run --watch for a volcanic plan.
// The watcher runs one reload at a time, so it needs no lock.
type volcanicReloader struct {
	planFile string
	host     *runtime.Host
	out      diagOutput
	logw     *lockedWriter
	// sources are the files the plan was compiled from, compiled again
	// with opts on a change; none when they do not reproduce the plan.
	sources []string
	opts    compile.Options
	// sums are the hashes of the plan file and the sources as last read:
	// a reload acts on the files that changed.
	sums map[string][sha256.Size]byte
}

// startPlanWatch watches planFile (read as planData, holding p), and the
// sources that reproduce it, for mcpc run --watch. The watcher ends with
// ctx or Close, which waits for a reload in progress.
func startPlanWatch(ctx context.Context, c *ucli.Context, planFile string, planData []byte, p *plan.Plan, deny *denylist.List, host *runtime.Host, logw *lockedWriter) (*watch.Watcher, error) {
	out := diagFlags(c)
	out.color = nil // log lines: never colored
	r := &volcanicReloader{planFile: planFile, host: host, out: out, logw: logw,
		sums: map[string][sha256.Size]byte{planFile: sha256.Sum256(planData)}}
	r.opts, r.sources = volcanicSourceOptions(c, p, deny)
	if why := r.reproduces(p); why != "" {
		logw.printf("mcpc: --watch: %s; only the plan file is watched\n", host.Redact(why))
		r.sources = nil
	}
	files := append([]string{planFile}, r.sources...)
	for _, f := range r.sources {
		r.sums[f] = fileSum(f)
	}
	w, err := startWatch(ctx, files, r.reload, host.Redact, logw)
	if err != nil {
		return nil, err
	}
	if len(r.sources) > 0 {
		logw.printf("mcpc: watching %s and its sources %s: a change is applied to the running gateway\n", planFile, strings.Join(r.sources, ", "))
	} else {
		logw.printf("mcpc: watching %s: a change is applied to the running gateway\n", planFile)
	}
	return w, nil
}

// volcanicSourceOptions are the compiler options that compile p's sources
// again: the files and choices its sources record, and what they cannot
// record from this mcpc run (the process environment, the --env values,
// the deny-list). It returns the source files to watch.
func volcanicSourceOptions(c *ucli.Context, p *plan.Plan, deny *denylist.List) (compile.Options, []string) {
	opts := compile.Options{Profile: compile.ProfileVolcanic, CleanEnv: true, DenyList: deny}
	for _, s := range p.Sources {
		switch s.Kind {
		case "environment":
			opts.CleanEnv = false
			opts.Environ = environ()
		case "env":
			opts.Env = c.StringSlice("env")
		case "appsettings":
			opts.AppSettings = append(opts.AppSettings, s.Path)
		case "env-file":
			opts.EnvFiles = append(opts.EnvFiles, s.Path)
		case "settings":
			opts.AgentDir = filepath.Dir(s.Path)
		}
	}
	files := volcanicSourceFiles(p)
	// Without a settings source the agent directory is found as mcpc plan
	// finds it (VOLCANIC_AGENT_DIR, else HOME): a settings.json there that
	// mcpc plan did not read makes another plan, and the digest says so.
	return opts, files
}

// volcanicSourceFiles are the files p's sources name, in order.
func volcanicSourceFiles(p *plan.Plan) []string {
	var files []string
	for _, s := range p.Sources {
		switch s.Kind {
		case "appsettings", "env-file", "settings":
			files = append(files, s.Path)
		}
	}
	return files
}

// reproduces returns why compiling the sources here does not give p
// ("" when it does, and there are sources to watch).
func (r *volcanicReloader) reproduces(p *plan.Plan) string {
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
		return "its sources compile here to another plan than --plan " + r.planFile + " (the process environment, --env or --deny-list differ from mcpc plan's, or a source changed since)"
	}
	return ""
}

// reload acts on the files that changed since the last reload: a changed
// source is compiled, else a changed plan file read. It reports whether
// anything that runs changed; an error means the running plan stays (its
// diagnostics are logged already).
func (r *volcanicReloader) reload(ctx context.Context) (bool, error) {
	sourceChanged := false
	for _, f := range r.sources {
		if sum := fileSum(f); sum != r.sums[f] {
			r.sums[f], sourceChanged = sum, true
		}
	}
	planSum := fileSum(r.planFile)
	planChanged := planSum != r.sums[r.planFile]
	r.sums[r.planFile] = planSum
	switch {
	case sourceChanged:
		return r.recompile(ctx)
	case planChanged:
		applied, p, err := reloadPlan(ctx, r.planFile, r.host, r.out, r.logw)
		if p != nil && len(r.sources) > 0 {
			if !slices.Equal(volcanicSourceFiles(p), r.sources) {
				r.logw.printf("mcpc: --watch: %s reads other sources than the plan mcpc run started with; from now on only the plan file is watched (restart mcpc run to watch its sources)\n", r.planFile)
				r.sources = nil
			}
		}
		return applied, err
	}
	return false, nil // rewritten with the same bytes
}

// recompile compiles the sources and applies the plan. Diagnostics are
// logged (redacted), as mcpc plan would print them.
func (r *volcanicReloader) recompile(ctx context.Context) (bool, error) {
	const kept = "the running plan stays"
	res, err := compile.Compile(r.opts)
	if err != nil {
		return false, fmt.Errorf("reload: %s; %s", r.host.Redact(err.Error()), kept)
	}
	if len(res.Diagnostics) > 0 {
		var b bytes.Buffer
		redact := func(s string) string { return r.host.Redact(res.Redactor.Redact(s)) }
		if err := printDiagnostics(&b, r.out, res.Diagnostics, res.Files, redact); err != nil {
			return false, err
		}
		r.logw.printf("%s", b.String())
	}
	if res.Plan == nil {
		return false, fmt.Errorf("reload: the sources of %s do not compile (%s); %s", r.planFile, report.Summary(res.Diagnostics), kept)
	}
	out, err := r.host.Apply(ctx, res.Plan)
	if err != nil && (errors.Is(err, runtime.ErrHostClosed) || ctx.Err() != nil) {
		return false, nil // shutting down
	}
	if err != nil {
		return false, fmt.Errorf("reload: the sources of %s: %s; %s", r.planFile, r.host.Redact(err.Error()), kept)
	}
	if !out.Changed() {
		r.logw.printf("mcpc: reload: a source of %s changed, nothing to do for the running servers\n", r.planFile)
	}
	return out.Changed(), nil
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

// reloadPlan reads planFile again and applies it to host. It reports
// whether anything that runs changed; an error means the running plan
// stays (its diagnostics are logged already).
func reloadPlan(ctx context.Context, planFile string, host *runtime.Host, out diagOutput, logw *lockedWriter) (bool, *plan.Plan, error) {
	const kept = "the running plan stays"
	data, err := inputfile.ReadText(planFile)
	if err != nil {
		return false, nil, fmt.Errorf("reload: cannot read --plan %s: %v; %s", planFile, unwrapPath(err), kept)
	}
	p, ds := plan.Read(planFile, data)
	if p == nil {
		var b bytes.Buffer
		if err := printDiagnostics(&b, out, ds, sourcesOf().withFile(planFile, data), host.Redact); err != nil {
			return false, nil, err
		}
		logw.printf("%s", b.String())
		return false, nil, fmt.Errorf("reload: %s is not a valid plan (%s); %s", planFile, report.Summary(ds), kept)
	}
	res, err := host.Apply(ctx, p)
	if err != nil && (errors.Is(err, runtime.ErrHostClosed) || ctx.Err() != nil) {
		return false, nil, nil // shutting down
	}
	if err != nil {
		return false, nil, fmt.Errorf("reload: %s: %s; %s", planFile, host.Redact(err.Error()), kept)
	}
	if !res.Changed() {
		logw.printf("mcpc: reload: %s changed, nothing to do for the running servers\n", planFile)
	}
	return res.Changed(), p, nil
}

// mcpc run --watch with a craftbot plan watches two files: the --plan file
// and the mcp_config.json it names in its sources, which CraftBot's own
// `/mcp enable|disable|env` and `mcpc config …` edit. A change of the
// config file is compiled here, as `mcpc plan --profile craftbot --config
// FILE` would (the runtime never compiles: layers_test.go), with the host
// environment and deny-list of this mcpc run and this machine's OS; the
// entries CraftBot would skip are skipped (their warnings logged), the rest
// applied with the file's new env values (runtime.Craftbot.Apply restarts a
// server whose value changed). A change of the plan file alone is applied as
// it is written. When both changed in one burst (`mcpc plan -o` after an
// edit), the config file wins: the plan is compiled from it.

// craftbotSources are the files a craftbot gateway runs from, as read when
// it started.
type craftbotSources struct {
	plan, config         string
	planData, configData []byte
}

// craftbotReloader is the state of mcpc run --watch for a craftbot plan.
// The watcher runs one reload at a time, so it needs no lock.
type craftbotReloader struct {
	files craftbotSources
	cb    *runtime.Craftbot
	// opts compile the config file: this run's host environment and
	// deny-list, this machine's OS.
	opts compile.Options
	out  diagOutput
	logw *lockedWriter
	// planSum and configSum are the hashes of the files as last read: a
	// reload acts on the file that changed, and a burst that rewrote the
	// same bytes does nothing.
	planSum, configSum [sha256.Size]byte
}

// startCraftbotWatch watches the plan file and its config file for mcpc
// run --watch with a craftbot plan.
func startCraftbotWatch(ctx context.Context, c *ucli.Context, files craftbotSources, cb *runtime.Craftbot, deny *denylist.List, logw *lockedWriter) (*watch.Watcher, error) {
	out := diagFlags(c)
	out.color = nil // log lines: never colored
	r := &craftbotReloader{files: files, cb: cb, out: out, logw: logw,
		planSum: sha256.Sum256(files.planData), configSum: sha256.Sum256(inputfile.TrimBOM(files.configData))}
	r.opts = compile.Options{Profile: plan.ProfileCraftbot, Config: files.config,
		EnvFiles: c.StringSlice("env-file"), Env: c.StringSlice("env"), CleanEnv: c.Bool("clean-env"), DenyList: deny}
	if !r.opts.CleanEnv {
		r.opts.Environ = environ()
	}
	if craftbot.ValidTargetOS(goruntime.GOOS) {
		r.opts.TargetOS = goruntime.GOOS // the servers are launched here
	}
	w, err := startWatch(ctx, []string{files.plan, files.config}, r.reload, cb.Redact, logw)
	if err != nil {
		return nil, err
	}
	logw.printf("mcpc: watching %s and its config file %s: a change is applied to the running gateway\n", files.plan, files.config)
	return w, nil
}

// reload acts on the file that changed since the last reload: the config
// file is compiled, the plan file read. It reports whether a new plan was
// applied; an error means the running plan stays (its diagnostics are
// logged already).
func (r *craftbotReloader) reload(ctx context.Context) (bool, error) {
	const kept = "the running plan stays"
	// Read as the compiler reads it: what is hashed is what is compiled.
	cfgData, err := inputfile.Read(r.files.config)
	if err != nil {
		return false, fmt.Errorf("reload: cannot read the config file %s: %v; %s", r.files.config, unwrapPath(err), kept)
	}
	planData, err := inputfile.ReadText(r.files.plan)
	if err != nil {
		return false, fmt.Errorf("reload: cannot read --plan %s: %v; %s", r.files.plan, unwrapPath(err), kept)
	}
	cfgSum, planSum := sha256.Sum256(inputfile.TrimBOM(cfgData)), sha256.Sum256(planData)
	cfgChanged, planChanged := cfgSum != r.configSum, planSum != r.planSum
	r.configSum, r.planSum = cfgSum, planSum
	switch {
	case cfgChanged:
		return r.applyConfig(ctx, cfgData, kept)
	case planChanged:
		return r.applyPlanFile(ctx, planData, cfgData, kept)
	}
	return false, nil // rewritten with the same bytes
}

// applyConfig compiles the config file as mcpc plan --profile craftbot
// would, and applies the plan. Diagnostics are logged (redacted): the
// errors of an edit that does not compile, the warnings of the entries
// CraftBot skips.
func (r *craftbotReloader) applyConfig(ctx context.Context, cfgData []byte, kept string) (bool, error) {
	opts := r.opts
	opts.ReadFile = func(path string) ([]byte, error) {
		if path == r.files.config {
			return cfgData, nil
		}
		return inputfile.Read(path)
	}
	res, err := compile.Compile(opts)
	if err != nil {
		return false, fmt.Errorf("reload: %s: %s; %s", r.files.config, r.cb.Redact(err.Error()), kept)
	}
	if len(res.Diagnostics) > 0 {
		var b bytes.Buffer
		redact := func(s string) string { return r.cb.Redact(res.Redactor.Redact(s)) }
		if err := printDiagnostics(&b, r.out, res.Diagnostics, res.Files, redact); err != nil {
			return false, err
		}
		r.logw.printf("%s", b.String())
	}
	if res.Plan == nil {
		return false, fmt.Errorf("reload: the config file %s does not compile (%s); %s", r.files.config, report.Summary(res.Diagnostics), kept)
	}
	return r.apply(ctx, r.files.config, res.Plan, craftbot.ConfigOf(res).EnvValue, kept)
}

// applyPlanFile applies the plan file as written, its env values read from
// the config file as it is. A plan that names another config file than the
// one watched is refused: this gateway watches the file it started with.
func (r *craftbotReloader) applyPlanFile(ctx context.Context, planData, cfgData []byte, kept string) (bool, error) {
	p, ds := plan.Read(r.files.plan, planData)
	if p == nil {
		var b bytes.Buffer
		if err := printDiagnostics(&b, r.out, ds, sourcesOf().withFile(r.files.plan, planData), r.cb.Redact); err != nil {
			return false, err
		}
		r.logw.printf("%s", b.String())
		return false, fmt.Errorf("reload: %s is not a valid plan (%s); %s", r.files.plan, report.Summary(ds), kept)
	}
	if p.Profile == plan.ProfileCraftbot {
		path, err := craftbotConfigPath(r.files.plan, p)
		if err != nil {
			return false, fmt.Errorf("reload: %v; %s", err, kept)
		}
		if !samePath(path, r.files.config) {
			return false, fmt.Errorf("reload: %s names the config file %s, and this gateway reads %s; %s (restart mcpc run to take another config file)", r.files.plan, path, r.files.config, kept)
		}
	}
	cfg, _, err := craftbot.Check(r.files.config, cfgData, craftbot.Options{})
	if err != nil {
		return false, fmt.Errorf("reload: %s: %s; %s", r.files.config, r.cb.Redact(err.Error()), kept)
	}
	return r.apply(ctx, r.files.plan, p, cfg.EnvValue, kept)
}

// apply makes p the running plan; from names the file it came from.
func (r *craftbotReloader) apply(ctx context.Context, from string, p *plan.Plan, config runtime.ConfigLookup, kept string) (bool, error) {
	_, err := r.cb.Apply(ctx, p, config)
	switch {
	case err != nil && (errors.Is(err, runtime.ErrHostClosed) || ctx.Err() != nil):
		return false, nil // shutting down
	case err != nil:
		return false, fmt.Errorf("reload: %s: %s; %s", from, r.cb.Redact(err.Error()), kept)
	}
	return true, nil
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
