package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/atomicfile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/policies/lint"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

func lintCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "lint",
		Usage: "validate a deployment and run the deployment checks and policy packs over it, configured by mcpc.cue",
		UsageText: `mcpc lint [DIR…|DIR/...] [source flags] [--workspace DIR [--scope SCOPE]] [--format text|json|sarif|github|junit|gitlab] [--strict] [--policy DIR]… [--target-os OS] [--path PATH] [--client NAME]… [--lock FILE]
mcpc lint --files FILE…
mcpc lint --init [DIR]

Each DIR (default: the current directory) is a deployment: its mcpc.cue, else the deployment its
host's files make there (an appsettings.json with an Mcp section, agent/settings.json with
mcpServers, a CraftBot app/config/mcp_config.json), else the mcpc.cue found in its parents. mcpc.cue
names the sources, rule severities, ignores, the target and the policy packs. Without mcpc.cue and
without appsettings named, DIR/appsettings.json and DIR/appsettings.{Environment}.json are read,
as a .NET host layers them (Environment: the host environment's DOTNET_ENVIRONMENT, else
ASPNETCORE_ENVIRONMENT, else Production; --env and --env-file count), with DIR/agent, or DIR's
CraftBot config; an env file alone is a deployment too. A DIR with no deployment of its own, and DIR/..., lint every deployment below (each
mcpc.cue, and each directory whose host's files no mcpc.cue reads), skipping hidden directories,
node_modules, vendor and testdata; the exit is the worst of all. With --files (a pre-commit
hook's), the deployments below the current directory that read one of the files are linted; none
is exit 0. A craftbot deployment is also checked by the version pack craftbot-605efb4 (what
CraftBot 605efb4 does where its code breaks its manual); mcpc.cue switches it off:
policies: versionPacks: "craftbot-605efb4": "off".

Examples:
   mcpc lint                                  # the deployment of the current directory, else each below it
   mcpc lint ./... --strict                   # every deployment in the repository
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
			&ucli.StringFlag{Name: "workspace", Usage: "also lint the chat workspace `DIR`'s .volcanic/mcp/servers.json"},
			&ucli.StringFlag{Name: "scope", Usage: "the chat's session `SCOPE`: with the host secret, sealed entries are opened"},
			&ucli.BoolFlag{Name: "files", Usage: "the arguments are changed files (a pre-commit hook's): lint the deployments below the current directory that read them; none is exit 0"},
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
	found, err := lintTargets(c, dirs)
	if err != nil {
		return err
	}
	var results []*lintResult
	for _, f := range found {
		results = append(results, lintOne(c, f))
	}
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	return printLint(c, dirs, results)
}

// lintTargets are the deployments the arguments name. With --files they are
// changed files (a pre-commit hook's): the deployments below the current
// directory that read one. Else each is a DIR, whose deployment is its
// mcpc.cue, the one its host's files make, or the mcpc.cue found upward
// (lint.Of); a DIR with none is each deployment below it, as DIR/... is
// (lint.Discover). Source flags describe one deployment.
func lintTargets(c *ucli.Context, args []string) ([]lint.Found, error) {
	fromFlags := ""
	for _, f := range slices.Concat(sourceFlagNames, []string{"workspace", "scope"}) {
		if fromFlags == "" && c.IsSet(f) {
			fromFlags = f
		}
	}
	if c.Bool("files") {
		if fromFlags != "" {
			return nil, usageError("--files lints the deployments that read the files: give their sources in their mcpc.cue, not --%s", fromFlags)
		}
		found, err := lint.Containing(".", args)
		if err != nil {
			return nil, usageError("lint --files: %v", err)
		}
		if len(found) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "lint --files: no deployment reads the %s given\n", plural(len(args), "file"))
		}
		return found, nil
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	var found []lint.Found
	for _, arg := range args {
		dir, below := strings.CutSuffix(filepath.ToSlash(arg), "/...")
		if arg == "..." {
			dir, below = ".", true
		}
		dir = filepath.FromSlash(dir)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, usageError("lint %s: not a directory", arg)
		}
		own, ok := lint.Of(dir)
		switch {
		case fromFlags != "" && !below:
			found = append(found, lint.Found{Dir: dir, File: lint.Find(dir)})
		case ok && !below:
			found = append(found, own)
		default:
			all, err := lint.Discover(dir)
			if err != nil {
				return nil, usageError("lint %s: %v", arg, err)
			}
			if len(all) == 0 {
				return nil, usageError("lint %s: nothing to check: no mcpc.cue there or in a parent, and no deployment there or below (%s); mcpc lint --init writes mcpc.cue for the sources found", arg, lint.Recognisable)
			}
			found = append(found, all...)
		}
	}
	if fromFlags != "" && len(found) > 1 {
		return nil, usageError("source flags describe one deployment (--%s): give them with one DIR, or put each deployment's sources in its mcpc.cue", fromFlags)
	}
	return found, nil
}

// lintResult is what linting one deployment gave: its report, or the error
// that stopped it (exit 2 or 3).
type lintResult struct {
	found lint.Found
	rep   *lint.Report
	known []rules.Rule
	src   *excerpts
	err   error
	notes []string // for stderr, after the report
}

// printLint prints the run's one document (every deployment's findings,
// and the problems of a configuration that stopped one), then each
// deployment's summary line or what stopped it, and exits with the worst
// outcome of all.
func printLint(c *ucli.Context, args []string, results []*lintResult) error {
	out := &lintReport{src: sourcesOf()}
	code := ExitOK
	var failures []string
	for _, r := range results {
		if r.err != nil {
			ec := ExitInternal
			var ee *exitError
			if errors.As(r.err, &ee) {
				ec = ee.code
			}
			var cf *configFailure
			if errors.As(r.err, &cf) {
				out.run.Diagnostics = append(out.run.Diagnostics, cf.ds...)
				out.src.others = append(out.src.others, cf.src)
			}
			if msg := r.err.Error(); msg != "" {
				if len(results) > 1 {
					msg = r.found.Name() + ": " + msg
				}
				failures = append(failures, msg)
			}
			code = max(code, ec)
			continue
		}
		rep := r.rep
		summary := fmt.Sprintf("%s: %s, %s%s", r.found.Name(), plural(serverCount(rep.Result), "server"), report.Summary(rep.Diagnostics), dropped(rep.Applied))
		out.add(rep, r.src, r.known, append(r.notes, summary))
		code = max(code, problemsCode(rep.Diagnostics, c.Bool("strict")))
	}
	if len(failures) > 0 {
		out.run.Failure = strings.Join(failures, "; ")
	}
	if err := out.print(c, args); err != nil {
		return err
	}
	for _, msg := range failures {
		fmt.Fprintln(c.App.ErrWriter, "mcpc: "+term.EscapeLines(msg))
	}
	if code != ExitOK {
		return &exitError{code: code}
	}
	return nil
}

// lintReport is what lint found in the deployments of one run, printed as
// one document at its end, whatever the number of deployments.
type lintReport struct {
	run       report.Run
	src       *excerpts
	redact    []func(string) string
	known     []rules.Rule
	summaries []string // lines for stderr after the document
}

// serverCount is len(res.Names()), without the list.
func serverCount(res *compile.Result) int {
	n := 0
	for _, e := range res.Entries {
		if !e.Shadowed() && e.Skip == "" {
			n++
		}
	}
	return n
}

// add takes in the report of one deployment.
func (l *lintReport) add(rep *lint.Report, src *excerpts, known []rules.Rule, summary []string) {
	if l.run.Diagnostics == nil {
		// The first deployment's findings as they are, clipped: those of
		// the next are appended to a copy.
		l.run.Diagnostics = slices.Clip(rep.Diagnostics)
	} else {
		l.run.Diagnostics = append(l.run.Diagnostics, rep.Diagnostics...)
	}
	for _, s := range rep.Suppressed {
		l.run.Suppressed = append(l.run.Suppressed, report.Suppressed{Diagnostic: s.Diagnostic, Reason: s.Reason})
	}
	l.src.others = append(l.src.others, src)
	l.redact = append(l.redact, rep.Result.Redactor.Redact)
	l.addRules(known)
	l.summaries = append(l.summaries, summary...)
}

func (l *lintReport) addRules(known []rules.Rule) {
	for _, r := range known {
		if _, ok := lookupIn(l.known)(r.ID); !ok {
			l.known = append(l.known, r)
		}
	}
}

// print prints the run's document, then each deployment's summary.
func (l *lintReport) print(c *ucli.Context, dirs []string) error {
	documented, err := lint.Rules()
	if err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
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
	p, err := report.New(c.String("format"), report.Options{Sources: l.src, OneLine: c.Bool("oneline"), ToolVersion: Version,
		Redact: redact, Rules: lookupIn(l.known), HelpURI: helpURI, Root: repoRoot(dirs), Strict: c.Bool("strict"),
		Color: useColor(c, c.App.Writer)})
	if err != nil {
		return usageError("--format: %v", err)
	}
	if err := p.PrintRun(c.App.Writer, l.run); err != nil {
		return err
	}
	for _, s := range l.summaries {
		fmt.Fprintln(c.App.ErrWriter, s)
	}
	return nil
}

// lintOne lints the deployment f.
func lintOne(c *ucli.Context, f lint.Found) *lintResult {
	r := &lintResult{found: f}
	r.rep, r.known, r.src, r.notes, r.err = lintDeployment(c, f)
	return r
}

func lintDeployment(c *ucli.Context, f lint.Found) (*lint.Report, []rules.Rule, *excerpts, []string, error) {
	dir := f.Dir
	var d *lint.Deployment
	src := sourcesOf()
	if file := f.File; file != "" {
		var ds []diag.Diagnostic
		d, ds = lint.Load(file)
		if data, err := inputfile.ReadText(file); err == nil {
			src.withFile(file, data)
		}
		if len(ds) > 0 {
			return nil, nil, nil, nil, configError(ds, src)
		}
	}
	flags, err := lintFlags(c)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	opts, err := lint.CompileOptions(d, dir, flags)
	if err != nil {
		return nil, nil, nil, nil, inputErr(err)
	}
	var notes []string
	if note := lint.AppSettingsNote(d, flags, opts); note != "" {
		notes = append(notes, note)
	}
	opts.ReadFile = readFileOrStdin(c)
	packs, pds := d.LoadPacks(c.StringSlice("policy"))
	if len(pds) > 0 {
		return nil, nil, nil, nil, configError(pds, src)
	}
	known, err := lint.KnownRules(packs)
	if err != nil {
		return nil, nil, nil, nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	if d != nil {
		if ds := d.CheckRules(ruleIDs(known)); len(ds) > 0 {
			return nil, nil, nil, nil, configError(ds, src)
		}
	}
	target, lockFile, err := lint.TargetOf(d, flags, opts)
	if err != nil {
		return nil, nil, nil, nil, inputErr(err)
	}
	var workspaceErr error
	more := func(res *compile.Result) ([]diag.Diagnostic, error) {
		ds, note, err := lintWorkspace(c, res, src)
		if err != nil {
			workspaceErr = err // a usage error of --workspace, kept as it is
			return nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		return ds, nil
	}
	rep, err := lint.Run(lint.Options{Compile: opts, Deployment: d, Packs: packs, Target: target, LockFile: lockFile,
		VersionPacks: d.VersionPacks(opts.Profile), More: more})
	if workspaceErr != nil {
		return nil, nil, nil, nil, workspaceErr
	}
	if err != nil {
		return nil, nil, nil, nil, inputErr(err)
	}
	src.others = append(src.others, rep.Result.Files)
	for file, data := range rep.Files {
		src.withFile(file, data)
	}
	return rep, known, src, notes, nil
}

// lintWorkspace gives the findings of --workspace's servers.json, as
// validate checks it (lint.Options.More: the deployment's configuration
// applies to them with the rest), and the note validate prints of it.
func lintWorkspace(c *ucli.Context, compiled *compile.Result, src *excerpts) ([]diag.Diagnostic, string, error) {
	if c.String("workspace") == "" {
		return nil, "", nil
	}
	res := *compiled
	res.Diagnostics = nil
	ds, files, note, err := remoteValidation(c, &res)
	if err != nil {
		return nil, "", err
	}
	src.others = append(src.others, files)
	return ds, note, nil
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
