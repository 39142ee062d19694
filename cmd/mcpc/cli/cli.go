// Package cli is mcpc's command line: flags → library call → printer → exit
// code. It holds no logic of its own, so tests call Run in-process.
//
// It may import every package of mcpc; none imports it.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	_ "github.com/mcpc-dev/mcpc/compile/profiles" // every host profile, registered with compile
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/policies/lint"
	ucli "github.com/urfave/cli/v2"
)

// Exit codes (SPEC §7).
const (
	ExitOK       = 0 // no errors (warnings allowed)
	ExitProblems = 1 // errors found (with --strict, warnings too)
	ExitUsage    = 2 // usage error or unreadable input
	ExitInternal = 3 // internal failure
)

// Version is mcpc's version, shown by --version and in SARIF output.
var Version = "0.1.0-dev"

// exitError carries an exit code out of a command action.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...)}
}

// env is the process environment Run was started with; tests replace it.
var environ = os.Environ

// Run runs mcpc with args (args[0] is the program name) and returns the exit
// code. It never panics: an internal failure is reported and exits 3.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			// The panic value may quote input (and so a secret): show its
			// type and where it happened, not its text.
			fmt.Fprintf(stderr, "mcpc: internal error (%T); please report it with this stack:\n%s", r, debug.Stack())
			code = ExitInternal
		}
	}()
	out := &countingWriter{w: stdout}
	app := newApp(stdin, out, stderr)
	app.Metadata = map[string]any{"args": args}
	addColorFlag(app.Commands)
	briefUsageErrors(app.Commands, "mcpc")
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") && app.Command(args[1]) == nil {
		var names []string
		for _, c := range app.Commands {
			if !c.Hidden {
				names = append(names, c.Name)
			}
		}
		meant := ""
		if best := lint.Closest(args[1], names); best != "" {
			meant = fmt.Sprintf(" (did you mean %q?)", best)
		}
		fmt.Fprintf(stderr, "mcpc: unknown command %q%s; the commands are %s (mcpc --help)\n", args[1], meant, strings.Join(names, ", "))
		return ExitUsage
	}
	err := app.Run(completionArgs(app, args))
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) || ee.code >= ExitUsage {
		printFailedRun(out, args, err.Error())
	}
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "mcpc: "+term.EscapeLines(ee.msg))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "mcpc: "+term.EscapeLines(err.Error()))
	return ExitUsage
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *ucli.App {
	return &ucli.App{
		Name:    "mcpc",
		Usage:   "compile, validate and lint the MCP-server configuration of agent hosts",
		Version: Version,
		UsageText: `mcpc validate --appsettings appsettings.json --env-file .env --agent-dir agent
   mcpc plan --appsettings appsettings.json -o plan.json
   mcpc explain github --appsettings appsettings.json`,
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// The completion scripts of `mcpc completion` ask the binary.
		EnableBashCompletion: true,
		// Values such as PLAYWRIGHT_EXTRA_ARGS=--viewport-size 1280,720
		// contain commas: one flag is one value.
		DisableSliceFlagSeparator: true,
		ExitErrHandler:            func(*ucli.Context, error) {},
		OnUsageError: func(c *ucli.Context, err error, _ bool) error {
			return usageError("%v (see mcpc %s --help)", err, c.Command.Name)
		},
		Commands: []*ucli.Command{
			validateCommand(),
			lintCommand(),
			planCommand(),
			explainCommand(),
			rulesCommand(),
			policyCommand(),
			toolsCommand(),
			remoteCommand(),
			configCommand(),
			runCommand(),
			statusCommand(),
			uiCommand(),
			guardCommand(),
			importCommand(),
			diffCommand(),
			schemaCommand(),
			versionCommand(),
			completionCommand(),
		},
	}
}

// briefUsageErrors makes a wrong flag print one line and the command's
// usage line, instead of the command's whole help (urfave/cli's default for
// a command without OnUsageError): the error is what the operator needs,
// and --help is one flag away.
func briefUsageErrors(cmds []*ucli.Command, parent string) {
	for _, cmd := range cmds {
		name := parent + " " + cmd.Name
		usage := cmd.UsageText
		if i := strings.IndexByte(usage, '\n'); i >= 0 {
			usage = usage[:i]
		}
		if usage == "" {
			usage = name + " [options]"
		}
		if cmd.OnUsageError == nil {
			cmd.OnUsageError = func(_ *ucli.Context, err error, _ bool) error {
				msg := strings.Replace(err.Error(), "flag provided but not defined: -", "unknown flag --", 1)
				msg = strings.Replace(msg, "flag needs an argument: -", "flag needs an argument: --", 1)
				return usageError("%s (%s --help)\nusage: %s", msg, name, usage)
			}
		}
		briefUsageErrors(cmd.Subcommands, name)
	}
}

// sourceFlags are shared by every command that reads a deployment.
func sourceFlags() []ucli.Flag {
	return flags([]ucli.Flag{
		&ucli.StringFlag{Name: "profile", Value: compile.ProfileVolcanic, Usage: "host profile: volcanic|craftbot"},
		&ucli.StringSliceFlag{Name: "appsettings", Usage: "volcanic: host configuration `FILE` (JSON with comments); repeat to layer, later files win"},
		&ucli.StringFlag{Name: "agent-dir", Usage: "volcanic: agent `DIR` holding settings.json (default: $VOLCANIC_AGENT_DIR, else ~/.volcanic/agent)"},
	}, craftbotFlags(), hostEnvFlags(), []ucli.Flag{denyListFlag()})
}

// hostEnvFlags make the host environment: mcpc's own (unless --clean-env),
// then --env-file, then --env.
func hostEnvFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringSliceFlag{Name: "env-file", Usage: "dotenv `FILE` overlaid on the host environment; repeatable"},
		&ucli.StringSliceFlag{Name: "env", Usage: "host variable `KEY=VALUE`, overlaid last; repeatable"},
		&ucli.BoolFlag{Name: "clean-env", Usage: "start from an empty host environment instead of mcpc's own"},
	}
}

func denyListFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "deny-list", Usage: "deny-list `FILE` (CUE or JSON: names, patterns) added to the built-in one; replace: true in the file replaces it (the sealing keys stay denied)"}
}

func formatFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "format", Value: "text", Usage: "diagnostics format: " + strings.Join(report.Formats, "|")},
		&ucli.BoolFlag{Name: "oneline", Usage: "text format: one line per diagnostic, without the source excerpt"},
	}
}

func flags(groups ...[]ucli.Flag) []ucli.Flag {
	var out []ucli.Flag
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// compileDeployment compiles the deployment the command reads
// (deploymentOptions).
func compileDeployment(c *ucli.Context) (*compile.Result, error) {
	opts, err := deploymentOptions(c)
	if err != nil {
		return nil, err
	}
	return compileWith(opts)
}

// deploymentOptions are the compiler options of the deployment a command
// reads: that of the current directory (deploymentIn).
func deploymentOptions(c *ucli.Context) (compile.Options, error) {
	opts, _, err := deploymentIn(c, ".")
	return opts, err
}

// deploymentIn reads the deployment of dir as mcpc lint does (lint.Find,
// lint.Load, lint.CompileOptions): each source flag given, over the sources
// of the mcpc.cue found upward from dir (d, nil when there is none), else
// the files the host reads in dir. "-" names standard input. A directory
// flag that names no directory, an mcpc.cue that does not load (its
// problems printed on stderr) and nothing to check are usage errors (exit
// 2): a command that read nothing never answers "0 servers".
func deploymentIn(c *ucli.Context, dir string) (opts compile.Options, d *lint.Deployment, err error) {
	if err := existingDirs(c, "agent-dir"); err != nil {
		return opts, nil, err
	}
	if file := lint.Find(dir); file != "" {
		var ds []diag.Diagnostic
		if d, ds = lint.Load(file); len(ds) > 0 {
			src := sourcesOf()
			if data, err := inputfile.ReadText(file); err == nil {
				src.withFile(file, data)
			}
			if c.Command != nil && c.Command.Name == "validate" {
				return opts, nil, deploymentError(c, ds, src) // its report is on stdout, a document in the document formats
			}
			if err := printDiagnostics(c.App.ErrWriter, plainText(c), ds, src, nil); err != nil {
				return opts, nil, err
			}
			return opts, nil, usageError("%s: the deployment's configuration is not valid (%s)", file, report.Summary(ds))
		}
	}
	f, err := lintFlags(c)
	if err != nil {
		return opts, nil, err
	}
	if opts, err = lint.CompileOptions(d, dir, f); err != nil {
		return opts, nil, inputErr(err)
	}
	if note := lint.AppSettingsNote(d, f, opts); note != "" {
		fmt.Fprintln(c.App.ErrWriter, "mcpc: "+note)
	}
	// The flags that belong to another profile than the deployment's are
	// refused, whichever named the profile.
	check := opts
	if err := profileOptions(c, &check); err != nil {
		return opts, nil, err
	}
	opts.ReadFile = readFileOrStdin(c)
	return opts, d, nil
}

// existingDirs refuses a directory flag that names no directory: a typo
// (--agent-dir agnet) must not quietly read nothing.
func existingDirs(c *ucli.Context, names ...string) error {
	for _, name := range names {
		dir := c.String(name)
		if dir == "" {
			continue
		}
		if fi, err := os.Stat(dir); err != nil {
			return usageError("--%s %s: %v", name, dir, unwrapPath(err))
		} else if !fi.IsDir() {
			return usageError("--%s %s: not a directory", name, dir)
		}
	}
	return nil
}

// optionsFromFlags turns the command's source flags into compiler options.
func optionsFromFlags(c *ucli.Context) (compile.Options, error) {
	opts := compile.Options{
		Profile:     c.String("profile"),
		AppSettings: c.StringSlice("appsettings"),
		EnvFiles:    c.StringSlice("env-file"),
		Env:         c.StringSlice("env"),
		CleanEnv:    c.Bool("clean-env"),
		AgentDir:    c.String("agent-dir"),
	}
	if err := profileOptions(c, &opts); err != nil {
		return opts, err
	}
	if err := checkEnvFlags(c); err != nil {
		return opts, err
	}
	if !opts.CleanEnv {
		opts.Environ = environ()
	}
	if f := c.String("deny-list"); f != "" {
		l, err := denylist.Load(f)
		if err != nil {
			return opts, usageError("%v", err)
		}
		opts.DenyList = l
	}
	return opts, nil
}

// compileWith runs the compiler; an input it cannot read is a usage error
// (exit 2).
func compileWith(opts compile.Options) (*compile.Result, error) {
	res, err := compile.Compile(opts)
	if err != nil {
		var ie *compile.InputError
		if errors.As(err, &ie) {
			return nil, usageError("%v", err)
		}
		return nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	return res, nil
}

// problemsCode is the exit code for a set of diagnostics.
func problemsCode(ds []diag.Diagnostic, strict bool) int {
	errs, warns, _ := diag.Count(ds)
	if errs > 0 || strict && warns > 0 {
		return ExitProblems
	}
	return ExitOK
}

// plural writes "1 server" or "3 servers".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "s") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// interspersed moves a command's positional arguments after its flags, so
// that `mcpc explain github --appsettings a.json` works: urfave/cli stops
// reading flags at the first positional argument. For a command with
// subcommands (mcpc remote) the first positional argument names the
// subcommand, and that subcommand's flags may stand before or after it.
func interspersed(app *ucli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args
	}
	known := cmd.Flags
	for _, sub := range cmd.Subcommands {
		known = append(known[:len(known):len(known)], sub.Flags...)
	}
	flagArgs, positional := splitArgs(args[2:], known)
	out := append([]string{}, args[:2]...)
	if len(cmd.Subcommands) > 0 {
		if len(positional) == 0 || cmd.Command(positional[0]) == nil {
			// No subcommand: the command's own action says so, unless
			// help is asked for.
			if len(positional) == 0 && hasHelp(flagArgs) {
				return append(out, "--help")
			}
			flagArgs = nil
		} else {
			out = append(out, positional[0])
			positional = positional[1:]
		}
	}
	out = append(out, flagArgs...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

// splitArgs separates flags (with their values) from positional arguments.
func splitArgs(args []string, known []ucli.Flag) (flagArgs, positional []string) {
	takesValue := map[string]bool{}
	for _, f := range known {
		_, isBool := f.(*ucli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flagArgs, append(positional, args[i+1:]...)
		case strings.HasPrefix(a, "-") && a != "-":
			flagArgs = append(flagArgs, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(args) {
				flagArgs = append(flagArgs, args[i+1])
				i++
			}
		default:
			positional = append(positional, a)
		}
	}
	return flagArgs, positional
}

func hasHelp(args []string) bool {
	for _, a := range args {
		if a == "--help" || a == "-h" || a == "-help" {
			return true
		}
	}
	return false
}

// loadHostEnv makes the host environment of hostEnvFlags, filtered through
// deny (nil: the built-in deny-list), as the compiler makes it.
func loadHostEnv(c *ucli.Context, deny *denylist.List) (*compile.HostEnv, *compile.FileSet, []diag.Diagnostic, error) {
	opts := compile.HostEnvOptions{EnvFiles: c.StringSlice("env-file"), Env: c.StringSlice("env"), CleanEnv: c.Bool("clean-env"), DenyList: deny}
	if !opts.CleanEnv {
		opts.Environ = environ()
	}
	env, files, ds, err := compile.LoadHostEnv(opts)
	if err != nil {
		return nil, nil, nil, usageError("%v", err)
	}
	return env, files, ds, nil
}

// checkEnvFlags refuses an --env that is not KEY=VALUE.
func checkEnvFlags(c *ucli.Context) error {
	for i, kv := range c.StringSlice("env") {
		// Its text is not quoted: a value given without its name may be
		// a secret.
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return usageError("--env number %d is not KEY=VALUE (its text is not shown: it may be a value)", i+1)
		}
	}
	return nil
}

// unwrapPath drops the path an *os.PathError repeats (the message names
// the file already).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
