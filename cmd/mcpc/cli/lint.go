package cli

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/craftbot"
	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/lint"
	"github.com/mcpc-dev/mcpc/policies"
	"github.com/mcpc-dev/mcpc/policies/denylist"
	"github.com/mcpc-dev/mcpc/report"
	"github.com/mcpc-dev/mcpc/rules"
)

func lintCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "lint",
		Usage: "validate a deployment and run the deployment checks and policy packs over it, configured by mcpc.cue",
		UsageText: `mcpc lint [DIR…] [source flags] [--format text|json|sarif|github] [--strict] [--policy DIR]… [--target-os OS] [--path PATH] [--client NAME]… [--lock FILE]
mcpc lint --init [DIR]

Each DIR (default: the current directory) is a deployment: mcpc.cue is looked for there and in its
parents; it names the sources, rule severities, ignores, the target and the policy packs. Without
mcpc.cue and without source flags, DIR/appsettings.json and DIR/appsettings.$DOTNET_ENVIRONMENT.json
(else $ASPNETCORE_ENVIRONMENT) are read, as a .NET host layers them.

Examples:
   mcpc lint                                  # the deployment of the current directory (its mcpc.cue)
   mcpc lint deploy/prod deploy/staging --format github
   mcpc lint --init                           # write mcpc.cue for the sources found here
   mcpc lint --appsettings appsettings.json --agent-dir agent --policy policies/team --client cursor`,
		Flags: flags(sourceFlags(), formatFlags(), []ucli.Flag{
			&ucli.BoolFlag{Name: "strict", Usage: "exit 1 on warnings too"},
			&ucli.BoolFlag{Name: "init", Usage: "write mcpc.cue for the sources found in DIR (default: the current directory)"},
			&ucli.StringSliceFlag{Name: "policy", Usage: "a team's policy pack `DIR` (CUE files declaring rules); repeatable"},
			&ucli.StringFlag{Name: "path", Usage: "the target's `PATH` when it is not this machine (an image): commands are looked up there"},
			&ucli.StringSliceFlag{Name: "client", Usage: "a target client whose tool limits apply (" + clientNames() + "); repeatable"},
			&ucli.StringFlag{Name: "lock", Usage: "the tool lock `FILE` (from mcpc tools --lock) the tool rules read"},
		}),
		Action: lintAction,
	}
}

func clientNames() string {
	var names []string
	for _, c := range policies.ClientLimits {
		names = append(names, c.Name)
	}
	return strings.Join(names, "|")
}

// sourceFlagNames are the flags that describe a deployment's sources; each
// one given overrides the same source of mcpc.cue.
var sourceFlagNames = []string{"profile", "appsettings", "agent-dir", "config", "env-file", "env", "clean-env", "deny-list"}

func lintAction(c *ucli.Context) error {
	dirs := c.Args().Slice()
	if c.Bool("init") {
		if len(dirs) > 1 {
			return usageError("lint --init writes one mcpc.cue: give at most one DIR")
		}
		dir := "."
		if len(dirs) == 1 {
			dir = dirs[0]
		}
		return lintInit(c, dir)
	}
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	fromFlags := false
	for _, f := range sourceFlagNames {
		fromFlags = fromFlags || c.IsSet(f)
	}
	if fromFlags && len(dirs) > 1 {
		return usageError("source flags describe one deployment: give them with one DIR, or put each deployment's sources in its mcpc.cue")
	}
	var all []diag.Diagnostic
	for _, dir := range dirs {
		ds, err := lintOne(c, dir)
		if err != nil {
			return err
		}
		all = append(all, ds...)
	}
	return exitFor(all, c.Bool("strict"))
}

// lintOne lints the deployment of dir and prints its report.
func lintOne(c *ucli.Context, dir string) ([]diag.Diagnostic, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, usageError("lint %s: not a directory", dir)
	}
	var d *lint.Deployment
	src := sourcesOf()
	if file := lint.Find(dir); file != "" {
		var ds []diag.Diagnostic
		d, ds = lint.Load(file)
		if data, err := inputfile.ReadText(file); err == nil {
			src.withFile(file, data)
		}
		if len(ds) > 0 {
			return nil, deploymentError(c, ds, src)
		}
	}
	opts, err := lintSources(c, d, dir)
	if err != nil {
		return nil, err
	}
	packs, pds := d.LoadPacks(c.StringSlice("policy"))
	if len(pds) > 0 {
		return nil, deploymentError(c, pds, src)
	}
	known, err := knownRules(packs)
	if err != nil {
		return nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	if d != nil {
		if ds := d.CheckRules(ruleIDs(known)); len(ds) > 0 {
			return nil, deploymentError(c, ds, src)
		}
	}
	target, lockFile, err := lintTarget(c, d, opts)
	if err != nil {
		return nil, err
	}
	rep, err := lint.Run(lint.Options{Compile: opts, Deployment: d, Packs: packs, Target: target, LockFile: lockFile})
	if err != nil {
		return nil, compileError(err)
	}
	src.others = append(src.others, rep.Result.Files)
	for file, data := range rep.Files {
		src.withFile(file, data)
	}
	p, err := report.New(c.String("format"), report.Options{Sources: src, OneLine: c.Bool("oneline"), ToolVersion: Version,
		Redact: rep.Result.Redactor.Redact, Rules: lookupIn(known)})
	if err != nil {
		return nil, usageError("--format: %v", err)
	}
	if err := p.Print(c.App.Writer, rep.Diagnostics); err != nil {
		return nil, err
	}
	name := dir
	if d != nil {
		name = d.File
	}
	fmt.Fprintf(c.App.ErrWriter, "%s: %s, %s%s\n", name, plural(len(rep.Result.Names()), "server"), report.Summary(rep.Diagnostics), dropped(rep.Applied))
	return rep.Diagnostics, nil
}

// lintSources are the compiler options of one deployment: mcpc.cue's
// sources, each overridden by its source flag when that is given (a flag
// wins over the file, as on every command), else the appsettings files a
// .NET host would read in dir. Nothing to check is a usage error: a lint
// that checked nothing must not pass.
func lintSources(c *ucli.Context, d *lint.Deployment, dir string) (compile.Options, error) {
	opts := compile.Options{Profile: compile.ProfileVolcanic}
	if d != nil {
		s := d.Sources
		if d.Profile != "" {
			opts.Profile = d.Profile
		}
		opts.AppSettings, opts.EnvFiles, opts.Env, opts.CleanEnv, opts.AgentDir, opts.Config =
			s.AppSettings, s.EnvFiles, s.Env, s.CleanEnv, s.AgentDir, s.Config
		if s.DenyList != "" {
			l, err := denylist.Load(s.DenyList)
			if err != nil {
				return opts, usageError("%s: denyList: %v", d.File, err)
			}
			opts.DenyList = l
		}
	}
	flagged, err := optionsFromFlags(c)
	if err != nil {
		return opts, err
	}
	if c.IsSet("profile") {
		opts.Profile = flagged.Profile
	}
	for _, f := range []struct {
		flag string
		set  func()
	}{
		{"appsettings", func() { opts.AppSettings = flagged.AppSettings }},
		{"env-file", func() { opts.EnvFiles = flagged.EnvFiles }},
		{"env", func() { opts.Env = flagged.Env }},
		{"clean-env", func() { opts.CleanEnv = flagged.CleanEnv }},
		{"agent-dir", func() { opts.AgentDir = flagged.AgentDir }},
		{"config", func() { opts.Config = flagged.Config }},
		{"deny-list", func() { opts.DenyList = flagged.DenyList }},
	} {
		if c.IsSet(f.flag) {
			f.set()
		}
	}
	if opts.Profile == compile.ProfileCraftbot {
		if opts.Config == "" {
			opts.Config = filepath.Join(dir, craftbot.DefaultPath)
		}
		opts.TargetOS = targetOS(c, d)
	} else if len(opts.AppSettings) == 0 {
		opts.AppSettings = dotnetAppSettings(dir)
		if len(opts.AppSettings) == 0 && opts.AgentDir == "" {
			return opts, usageError("lint %s: nothing to check: no appsettings.json in %s, and neither mcpc.cue (mcpc lint --init writes one) nor the source flags name a source", dir, dir)
		}
	}
	if opts.AgentDir != "" {
		if fi, err := os.Stat(opts.AgentDir); err != nil || !fi.IsDir() {
			return opts, usageError("agent dir %s does not exist", opts.AgentDir)
		}
	}
	opts.Environ = nil
	if !opts.CleanEnv {
		opts.Environ = environ()
	}
	return opts, nil
}

// dotnetAppSettings are the appsettings files a .NET host reads in dir:
// appsettings.json, then appsettings.<Environment>.json (DOTNET_ENVIRONMENT,
// else ASPNETCORE_ENVIRONMENT), those that exist.
func dotnetAppSettings(dir string) []string {
	var out []string
	candidates := []string{filepath.Join(dir, "appsettings.json")}
	env := os.Getenv("DOTNET_ENVIRONMENT")
	if env == "" {
		env = os.Getenv("ASPNETCORE_ENVIRONMENT")
	}
	if env != "" {
		candidates = append(candidates, filepath.Join(dir, "appsettings."+env+".json"))
	}
	for _, f := range candidates {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			out = append(out, f)
		}
	}
	return out
}

func targetOS(c *ucli.Context, d *lint.Deployment) string {
	switch {
	case c.IsSet("target-os"):
		return c.String("target-os")
	case d != nil && d.Target.OS != "":
		return d.Target.OS
	}
	return goruntime.GOOS
}

// lintTarget describes where the deployment runs, and the lock to read.
func lintTarget(c *ucli.Context, d *lint.Deployment, opts compile.Options) (policies.Target, string, error) {
	goos := targetOS(c, d)
	if !craftbot.ValidTargetOS(goos) {
		return policies.Target{}, "", usageError("--target-os %s: one of %s", goos, strings.Join(craftbot.TargetOSes, ", "))
	}
	clients := c.StringSlice("client")
	lockFile := c.String("lock")
	path, image := c.String("path"), c.IsSet("path")
	if d != nil {
		if len(clients) == 0 {
			clients = d.Target.Clients
		}
		if lockFile == "" {
			lockFile = d.Target.Lock
		}
		if !image && d.Target.Path != "" {
			path, image = d.Target.Path, true
			path = joinPathList(d.Dir, path, goos)
		}
	}
	for _, name := range clients {
		if !validClient(name) {
			return policies.Target{}, "", usageError("--client %s: one of %s", name, clientNames())
		}
	}
	if image || goos != goruntime.GOOS {
		return policies.ImageTarget(goos, path, clients), lockFile, nil
	}
	env, _, _, err := hostEnvOf(opts)
	if err != nil {
		return policies.Target{}, "", err
	}
	path = env["PATH"]
	if _, ok := env["PATH"]; !ok {
		// A described host environment without PATH (--clean-env) is not
		// how a host runs: its commands are found on this machine's PATH.
		path = os.Getenv("PATH")
	}
	return policies.LocalTarget(path, env, clients), lockFile, nil
}

func validClient(name string) bool {
	for _, c := range policies.ClientLimits {
		if c.Name == name {
			return true
		}
	}
	return false
}

// joinPathList makes the relative directories of a PATH relative to dir.
func joinPathList(dir, path, goos string) string {
	sep := string(os.PathListSeparator)
	if goos == "windows" {
		sep = ";"
	}
	parts := strings.Split(path, sep)
	for i, p := range parts {
		if p != "" && !filepath.IsAbs(p) {
			parts[i] = filepath.Join(dir, p)
		}
	}
	return strings.Join(parts, sep)
}

// hostEnvOf is the host environment the deployment's servers inherit from,
// as a map: the PATH they look commands up on.
func hostEnvOf(opts compile.Options) (map[string]string, *compile.FileSet, []diag.Diagnostic, error) {
	env, files, ds, err := compile.LoadHostEnv(compile.HostEnvOptions{CleanEnv: opts.CleanEnv, Environ: opts.Environ, EnvFiles: opts.EnvFiles, Env: opts.Env})
	if err != nil {
		return nil, nil, nil, compileError(err)
	}
	return env.Map(), files, ds, nil
}

// compileError maps an error of the compiler to an exit.
func compileError(err error) error {
	if _, ok := err.(*compile.InputError); ok {
		return usageError("%v", err)
	}
	return &exitError{code: ExitInternal, msg: err.Error()}
}

// knownRules are the rules a deployment may name: mcpc's and those of the
// packs it runs.
func knownRules(packs []*policies.Pack) ([]rules.Rule, error) {
	all, err := lint.Rules()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range all {
		seen[r.ID] = true
	}
	for _, p := range packs {
		for _, r := range p.Rules() {
			if !seen[r.ID] {
				all = append(all, r)
				seen[r.ID] = true
			}
		}
	}
	return all, nil
}

func ruleIDs(rs []rules.Rule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	sort.Strings(out)
	return out
}

func lookupIn(rs []rules.Rule) func(string) (rules.Rule, bool) {
	return func(id string) (rules.Rule, bool) {
		for _, r := range rs {
			if r.ID == id {
				return r, true
			}
		}
		return rules.Rule{}, false
	}
}

// dropped says what the deployment's configuration left out of the report.
func dropped(a lint.Applied) string {
	n := func(m map[string]int) int {
		t := 0
		for _, v := range m {
			t += v
		}
		return t
	}
	var parts []string
	if i := n(a.Ignored); i > 0 {
		parts = append(parts, fmt.Sprintf("%d ignored", i))
	}
	if o := n(a.Off); o > 0 {
		parts = append(parts, fmt.Sprintf("%d of rules set off", o))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// deploymentError prints the problems of mcpc.cue or of a policy pack and
// stops: lint does not guess what a broken configuration meant.
func deploymentError(c *ucli.Context, ds []diag.Diagnostic, src *excerpts) error {
	for _, d := range ds {
		if _, ok := src.files[d.File]; !ok {
			if data, err := inputfile.ReadText(d.File); err == nil {
				src.withFile(d.File, data)
			}
		}
	}
	if err := printDiagnostics(c.App.Writer, diagFlags(c), ds, src, nil); err != nil {
		return err
	}
	return &exitError{code: ExitUsage, msg: "the deployment's configuration is not valid (" + report.Summary(ds) + ")"}
}

// lintInit writes mcpc.cue for the sources found in dir (or given by the
// source flags): the appsettings files a .NET host reads, env files, the
// agent dir, or a CraftBot config. It never overwrites a file, and what it
// writes must load.
func lintInit(c *ucli.Context, dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError("lint --init %s: not a directory", dir)
	}
	file := filepath.Join(dir, lint.FileName)
	if _, err := os.Lstat(file); err == nil {
		return usageError("%s exists; lint --init does not overwrite it", file)
	}
	found, err := initSources(c, dir)
	if err != nil {
		return err
	}
	text := lint.InitFile(found)
	if _, ds := lint.Parse(file, []byte(text)); len(ds) > 0 {
		return &exitError{code: ExitInternal, msg: "lint --init wrote an mcpc.cue that does not load: " + ds[0].Message}
	}
	if err := writeAtomic(file, []byte(text)); err != nil {
		return usageError("cannot write %s: %v", file, unwrapPath(err))
	}
	fmt.Fprintf(c.App.ErrWriter, "wrote %s (%s); check it with mcpc lint %s\n", file, describeInit(found), dir)
	return nil
}

// initSources finds a deployment's sources: the source flags when given
// (paths made relative to dir), else what is in dir.
func initSources(c *ucli.Context, dir string) (lint.Deployment, error) {
	var d lint.Deployment
	rel := func(p string) string {
		if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	given := false
	for _, f := range sourceFlagNames {
		given = given || c.IsSet(f)
	}
	if given {
		d.Profile = c.String("profile")
		for _, f := range c.StringSlice("appsettings") {
			d.Sources.AppSettings = append(d.Sources.AppSettings, rel(f))
		}
		for _, f := range c.StringSlice("env-file") {
			d.Sources.EnvFiles = append(d.Sources.EnvFiles, rel(f))
		}
		d.Sources.Env, d.Sources.CleanEnv = c.StringSlice("env"), c.Bool("clean-env")
		if v := c.String("agent-dir"); v != "" {
			d.Sources.AgentDir = rel(v)
		}
		if v := c.String("config"); v != "" {
			d.Sources.Config = rel(v)
		}
		if v := c.String("deny-list"); v != "" {
			d.Sources.DenyList = rel(v)
		}
		return d, nil
	}
	if fi, err := os.Stat(filepath.Join(dir, craftbot.DefaultPath)); err == nil && fi.Mode().IsRegular() {
		d.Profile = compile.ProfileCraftbot
		d.Sources.Config = filepath.ToSlash(craftbot.DefaultPath)
		return d, nil
	}
	d.Profile = compile.ProfileVolcanic
	matches, _ := filepath.Glob(filepath.Join(dir, "appsettings*.json"))
	sort.Slice(matches, func(i, j int) bool {
		bi, bj := filepath.Base(matches[i]) == "appsettings.json", filepath.Base(matches[j]) == "appsettings.json"
		if bi != bj {
			return bi
		}
		return matches[i] < matches[j]
	})
	for _, f := range matches {
		d.Sources.AppSettings = append(d.Sources.AppSettings, rel(f))
	}
	envs, _ := filepath.Glob(filepath.Join(dir, "*.env"))
	if fi, err := os.Stat(filepath.Join(dir, ".env")); err == nil && fi.Mode().IsRegular() {
		envs = append([]string{filepath.Join(dir, ".env")}, envs...)
	}
	for _, f := range envs {
		d.Sources.EnvFiles = append(d.Sources.EnvFiles, rel(f))
	}
	for _, agent := range []string{"agent", filepath.Join(".volcanic", "agent")} {
		if fi, err := os.Stat(filepath.Join(dir, agent, "settings.json")); err == nil && fi.Mode().IsRegular() {
			d.Sources.AgentDir = filepath.ToSlash(agent)
			break
		}
	}
	if len(d.Sources.AppSettings) == 0 && d.Sources.AgentDir == "" {
		return d, usageError("lint --init %s: no sources found (appsettings*.json, agent/settings.json, %s); give them with the source flags", dir, craftbot.DefaultPath)
	}
	return d, nil
}

func describeInit(d lint.Deployment) string {
	n := len(d.Sources.AppSettings) + len(d.Sources.EnvFiles)
	if d.Sources.AgentDir != "" || d.Sources.Config != "" {
		n++
	}
	return fmt.Sprintf("profile %s, %s", d.Profile, plural(n, "source"))
}
