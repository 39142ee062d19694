package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/atomicfile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/policies/lint"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

func lintCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "lint",
		Usage: "validate a deployment and run the deployment checks and policy packs over it, configured by mcpc.cue",
		UsageText: `mcpc lint [DIR…] [source flags] [--format text|json|sarif|github|junit|gitlab] [--strict] [--policy DIR]… [--target-os OS] [--path PATH] [--client NAME]… [--lock FILE]
mcpc lint --init [DIR]

Each DIR (default: the current directory) is a deployment: mcpc.cue is looked for there and in its
parents; it names the sources, rule severities, ignores, the target and the policy packs. Without
mcpc.cue and without source flags, DIR/appsettings.json and DIR/appsettings.$DOTNET_ENVIRONMENT.json
(else $ASPNETCORE_ENVIRONMENT) are read, as a .NET host layers them. A craftbot deployment is
also checked by the version pack craftbot-605efb4 (what CraftBot 605efb4 does where its code
breaks its manual); mcpc.cue switches it off: policies: versionPacks: "craftbot-605efb4": "off".

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
			&ucli.StringSliceFlag{Name: "client", Usage: "a target client whose tool limits apply (" + lint.ClientNames() + "); repeatable"},
			&ucli.StringFlag{Name: "lock", Usage: "the tool lock `FILE` (from mcpc tools --lock) the tool rules read"},
		}),
		Action: lintAction,
	}
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
	out := &lintReport{src: sourcesOf()}
	var err error
	for _, dir := range dirs {
		if err = lintOne(c, dir, out); err != nil {
			break
		}
	}
	return out.print(c, dirs, err)
}

// lintReport is what lint found in the deployments of one run, printed as
// one document at its end, whatever the number of deployments.
type lintReport struct {
	run       report.Run
	src       *excerpts
	redact    []func(string) string
	known     []rules.Rule
	summaries []string
}

// add takes in the report of one deployment.
func (l *lintReport) add(rep *lint.Report, src *excerpts, known []rules.Rule, summary string) {
	l.run.Diagnostics = append(l.run.Diagnostics, rep.Diagnostics...)
	for _, s := range rep.Suppressed {
		l.run.Suppressed = append(l.run.Suppressed, report.Suppressed{Diagnostic: s.Diagnostic, Reason: s.Reason})
	}
	l.src.others = append(l.src.others, src)
	l.redact = append(l.redact, rep.Result.Redactor.Redact)
	l.addRules(known)
	l.summaries = append(l.summaries, summary)
}

func (l *lintReport) addRules(known []rules.Rule) {
	for _, r := range known {
		if _, ok := lookupIn(l.known)(r.ID); !ok {
			l.known = append(l.known, r)
		}
	}
}

// print prints the run's document, then each deployment's summary, and
// returns the run's exit: err, which ended the run early (the document says
// it failed), else the findings'.
func (l *lintReport) print(c *ucli.Context, dirs []string, err error) error {
	var cf *configFailure
	if errors.As(err, &cf) {
		l.run.Diagnostics = append(l.run.Diagnostics, cf.ds...)
		l.src.others = append(l.src.others, cf.src)
	}
	if err != nil {
		l.run.Failure = err.Error()
	}
	documented, rerr := lint.Rules()
	if rerr != nil {
		return &exitError{code: ExitInternal, msg: rerr.Error()}
	}
	l.addRules(documented)
	helpURI := func(id string) string {
		if _, ok := lookupIn(documented)(id); ok {
			return report.RulesDocURI(id)
		}
		return ""
	}
	redact := func(s string) string {
		for _, r := range l.redact {
			s = r(s)
		}
		return s
	}
	p, perr := report.New(c.String("format"), report.Options{Sources: l.src, OneLine: c.Bool("oneline"), ToolVersion: Version,
		Redact: redact, Rules: lookupIn(l.known), HelpURI: helpURI, Root: repoRoot(dirs), Strict: c.Bool("strict"),
		Color: useColor(c, c.App.Writer)})
	if perr != nil {
		return usageError("--format: %v", perr)
	}
	if perr := p.PrintRun(c.App.Writer, l.run); perr != nil {
		return perr
	}
	for _, s := range l.summaries {
		fmt.Fprintln(c.App.ErrWriter, s)
	}
	if err != nil {
		return err
	}
	return exitFor(l.run.Diagnostics, c.Bool("strict"))
}

// lintOne lints the deployment of dir and adds its report to out.
func lintOne(c *ucli.Context, dir string, out *lintReport) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageError("lint %s: not a directory", dir)
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
			return configError(ds, src)
		}
	}
	flags, err := lintFlags(c)
	if err != nil {
		return err
	}
	opts, err := lint.CompileOptions(d, dir, flags)
	if err != nil {
		return inputErr(err)
	}
	opts.ReadFile = readFileOrStdin(c)
	packs, pds := d.LoadPacks(c.StringSlice("policy"))
	if len(pds) > 0 {
		return configError(pds, src)
	}
	known, err := lint.KnownRules(packs)
	if err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	if d != nil {
		if ds := d.CheckRules(ruleIDs(known)); len(ds) > 0 {
			return configError(ds, src)
		}
	}
	target, lockFile, err := lint.TargetOf(d, flags, opts)
	if err != nil {
		return inputErr(err)
	}
	rep, err := lint.Run(lint.Options{Compile: opts, Deployment: d, Packs: packs, Target: target, LockFile: lockFile,
		VersionPacks: d.VersionPacks(opts.Profile)})
	if err != nil {
		return inputErr(err)
	}
	src.others = append(src.others, rep.Result.Files)
	for file, data := range rep.Files {
		src.withFile(file, data)
	}
	name := dir
	if d != nil {
		name = d.File
	}
	out.add(rep, src, known, fmt.Sprintf("%s: %s, %s%s", name, plural(len(rep.Result.Names()), "server"), report.Summary(rep.Diagnostics), dropped(rep.Applied)))
	return nil
}

// lintFlags are the command line's say about a deployment.
func lintFlags(c *ucli.Context) (lint.Flags, error) {
	f := lint.Flags{Set: map[string]bool{}, Path: c.String("path"), HasPath: c.IsSet("path"),
		Clients: c.StringSlice("client"), Lock: c.String("lock"), TargetOS: c.String("target-os"), Environ: environ()}
	given := false
	for _, name := range sourceFlagNames {
		f.Set[name] = c.IsSet(name)
		given = given || f.Set[name]
	}
	if given {
		opts, err := optionsFromFlags(c)
		if err != nil {
			return f, err
		}
		f.Sources = opts
	}
	return f, nil
}

// inputErr maps an error of the lint library to an exit: an input it cannot
// use is a usage error (2), anything else internal (3).
func inputErr(err error) error {
	var ie *lint.InputError
	var ce *compile.InputError
	if errors.As(err, &ie) || errors.As(err, &ce) {
		return usageError("%v", err)
	}
	return &exitError{code: ExitInternal, msg: err.Error()}
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
// stops: a command does not guess what a broken configuration meant. The
// report is of a failed run.
func deploymentError(c *ucli.Context, ds []diag.Diagnostic, src *excerpts) error {
	cf := configError(ds, src).(*configFailure)
	if err := printRun(c.App.Writer, diagFlags(c), report.Run{Diagnostics: ds, Failure: cf.msg}, cf.src, nil); err != nil {
		return err
	}
	return cf.exitError
}

// configFailure is a broken mcpc.cue or policy pack (exit 2): its problems
// go into the report of the run it stops.
type configFailure struct {
	*exitError
	ds  []diag.Diagnostic
	src *excerpts
}

func (cf *configFailure) Unwrap() error { return cf.exitError }

// configError is the failure of a broken configuration with problems ds,
// excerpts from src (and the files they name).
func configError(ds []diag.Diagnostic, src *excerpts) error {
	for _, d := range ds {
		if _, ok := src.files[d.File]; !ok {
			if data, err := inputfile.ReadText(d.File); err == nil {
				src.withFile(d.File, data)
			}
		}
	}
	return &configFailure{exitError: &exitError{code: ExitUsage, msg: "the deployment's configuration is not valid (" + report.Summary(ds) + ")"}, ds: ds, src: src}
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
	if err := atomicfile.Replace(file, []byte(text), 0o644, nil); err != nil {
		return usageError("%v", err)
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
	found, err := lint.Detect(dir)
	if err != nil {
		return found, inputErr(err)
	}
	return found, nil
}

func describeInit(d lint.Deployment) string {
	n := len(d.Sources.AppSettings) + len(d.Sources.EnvFiles)
	if d.Sources.AgentDir != "" || d.Sources.Config != "" {
		n++
	}
	return fmt.Sprintf("profile %s, %s", d.Profile, plural(n, "source"))
}

// readFileOrStdin reads input files as the compiler does, and "-" as
// standard input, once, under the same size cap: a CI step can pipe one
// file (mcpc lint --appsettings - < appsettings.json).
func readFileOrStdin(c *ucli.Context) func(string) ([]byte, error) {
	var stdin []byte
	var stdinErr error
	read := false
	return func(path string) ([]byte, error) {
		if path != "-" {
			return inputfile.Read(path)
		}
		if !read {
			read = true
			stdin, stdinErr = io.ReadAll(io.LimitReader(c.App.Reader, inputfile.MaxSize+1))
			if stdinErr == nil && int64(len(stdin)) > inputfile.MaxSize {
				stdinErr = fmt.Errorf("standard input is larger than %s", inputfile.Size(inputfile.MaxSize))
			}
		}
		return stdin, stdinErr
	}
}
