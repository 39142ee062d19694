package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/craftbot/actions"
	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/atomicfile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/policies/toollock"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/toolreport"
	"github.com/mcpc-dev/mcpc/schema"
)

func toolsCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "tools",
		Usage: "start each enabled server, list its tools and show the names the agent sees; write or check a tool lock",
		UsageText: `mcpc tools [source flags | --plan FILE] [--format text|json] [--builtin-tools LIST] [--lock FILE [--check]]
      [--workspace DIR --scope SCOPE]
   mcpc tools --profile craftbot [--config FILE] [--format text|json] [--builtin-actions LIST] [--lock FILE [--check]]

With --workspace and --scope, the chat's remote servers (DIR/.volcanic/mcp/servers.json,
entries sealed for SCOPE) are connected too and their allowed tools listed after the
stdio tools, named <server>__<tool>. They are not part of the lock.

With --profile craftbot, every enabled server of mcp_config.json is started (stdio, its
env read from the file) or connected to (sse), and the action registry CraftBot would
build is printed: action mcp_<server>_<tool> in set mcp_<server> (or action_set_name),
its description and its input schema exactly as CraftBot's adapter builds them (read at
605efb4), and what CraftBot does not register. Only the first page of a server's
tools/list counts: CraftBot reads no other.

Examples:
   mcpc tools --appsettings appsettings.json --env-file host.env --agent-dir agent
   mcpc tools --plan plan.json --lock mcpc.lock.json          # write the lock
   mcpc tools --plan plan.json --lock mcpc.lock.json --check  # exit 1 when a tool changed
   mcpc tools --plan plan.json --env-file host.env --workspace /srv/chats/42 --scope 42
   mcpc tools --profile craftbot --config app/config/mcp_config.json --format json`,
		Flags: flags(sourceFlags(), []ucli.Flag{
			&ucli.StringFlag{Name: "plan", Usage: "read the plan `FILE` (from mcpc plan -o) instead of compiling the sources; --env-file/--env/--clean-env still make the host environment"},
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "output: text (a table) or json (an array, one object per tool)"},
			&ucli.StringFlag{Name: "builtin-tools", Value: strings.Join(naming.DefaultBuiltins, ","), Usage: "the host's built-in tool `NAMES`, comma-separated (empty: none)"},
			&ucli.StringFlag{Name: "builtin-actions", Usage: "craftbot: the host's built-in and integration action `NAMES`, comma-separated, that an MCP action must not take (default: none)"},
			&ucli.StringFlag{Name: "lock", Usage: "write the tool lock to `FILE` (with --check: compare with it)"},
			&ucli.BoolFlag{Name: "check", Usage: "with --lock: re-discover and exit 1 on every added, removed or changed tool"},
			&ucli.BoolFlag{Name: "strict", Usage: "exit 1 on warnings too"},
			&ucli.BoolFlag{Name: "quiet", Usage: "no progress on stderr"},
			&ucli.IntFlag{Name: "concurrency", Value: 8, Usage: "servers started at once"},
			&ucli.StringFlag{Name: "workspace", Usage: "also connect the remote servers of the chat workspace `DIR` (.volcanic/mcp/servers.json); needs --scope"},
			&ucli.StringFlag{Name: "scope", Usage: "with --workspace: the chat's session `SCOPE`, which the remote entries are sealed for"},
		}),
		Action: toolsAction,
	}
}

func toolsAction(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usageError("tools takes no arguments, got %q", c.Args().First())
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return usageError("--format %q: tools prints text or json", format)
	}
	if c.Bool("check") && c.String("lock") == "" {
		return usageError("--check needs --lock FILE")
	}
	workspace, scope := c.String("workspace"), c.String("scope")
	switch {
	case workspace != "" && scope == "":
		return usageError("--workspace needs --scope SCOPE: the chat's session scope, which its remote servers are sealed for")
	case workspace == "" && c.IsSet("scope"):
		return usageError("--scope goes with --workspace DIR: the chat workspace whose remote servers to list")
	}
	if err := existingDirs(c, "workspace"); err != nil { // with --plan too
		return err
	}
	in, err := planForTools(c)
	if err != nil {
		return err
	}
	pl, sources, ds := in.plan, in.sources, in.ds
	craftbotPlan := pl != nil && pl.Profile == plan.ProfileCraftbot
	stderr := c.App.ErrWriter
	if pl == nil {
		if err := printDiagnostics(stderr, plainText(c), ds, sources, nil); err != nil {
			return err
		}
		return &exitError{code: ExitProblems, msg: "no plan: fix the errors above"}
	}
	// The lock is read before anything starts: a broken lock is reported
	// without running a server.
	var lockFile *toollock.File
	if c.Bool("check") {
		f, lds, err := readLock(c.String("lock"), sources)
		if err != nil {
			return err
		}
		if f == nil {
			if err := printDiagnostics(stderr, plainText(c), append(ds, lds...), sources, nil); err != nil {
				return err
			}
			return &exitError{code: ExitProblems}
		}
		lockFile = f
	}

	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	opts := toolreport.Options{Plan: pl, Env: runtime.HostEnv{Vars: in.env.Map(), Deny: in.deny}, Builtins: builtinTools(c), Concurrency: c.Int("concurrency"),
		Config: in.config, BuiltinActions: builtinActions(c), Dial: dialOptions()}
	if workspace != "" {
		opts.Remote = &toolreport.Remote{Workspace: workspace, Scope: scope, Dial: dialOptions()}
	}
	if !c.Bool("quiet") {
		opts.Watch = progressPrinter(stderr, scope)
	}
	rep, err := toolreport.Make(ctx, opts)
	if ctx.Err() != nil {
		return &exitError{code: ExitProblems, msg: "interrupted: every server was stopped"}
	}
	var ie *toolreport.InputError
	switch {
	case errors.As(err, &ie):
		return usageError("%s", ie.Error())
	case err != nil:
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	ds = append(ds, rep.Diagnostics...)
	if rep.Sources != nil {
		sources.others = append(sources.others, rep.Sources)
	}

	write := func() error { return writeToolRows(c.App.Writer, format, rep.Rows) }
	if craftbotPlan {
		write = func() error { return writeActionRows(c.App.Writer, format, rep.Actions) }
	}
	if err := write(); err != nil {
		return err
	}
	if c.String("lock") != "" {
		lds, err := writeLock(c, rep, lockFile, pl)
		if err != nil {
			return err
		}
		ds = append(ds, lds...)
	}
	if err := printDiagnostics(stderr, plainText(c), ds, sources, rep.Redact); err != nil {
		return err
	}
	if !c.Bool("quiet") {
		servers := plural(rep.Servers, "server")
		if workspace != "" {
			servers += ", " + plural(rep.RemoteServers, "remote server")
		}
		visible := "tools visible"
		if craftbotPlan {
			visible = "actions"
		}
		fmt.Fprintf(stderr, "%s, %d %s: %s\n", servers, rep.Visible(), visible, report.Summary(ds))
	}
	if code := problemsCode(ds, c.Bool("strict")); code != ExitOK {
		return &exitError{code: code}
	}
	return nil
}

// writeLock writes the lock of --lock, or with --check (lockFile) returns
// how the tools differ from it.
func writeLock(c *ucli.Context, rep *toolreport.Report, lockFile *toollock.File, pl *plan.Plan) ([]diag.Diagnostic, error) {
	path := c.String("lock")
	out, ds, err := rep.Lock(path, lockFile)
	if err != nil {
		return nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	for i := range ds {
		if ds[i].Rule == rules.ToolChanged.ID {
			ds[i].Suggestion = "review the change; if it is expected, write the lock again from the same inputs: " + rewriteLockCommand(c)
		}
	}
	if out == nil {
		return ds, nil
	}
	if err := refuseInput("--lock", path, inputsOf(c, pl.Sources)); err != nil {
		return nil, err
	}
	if err := atomicfile.Replace(path, out, 0o644, nil); err != nil {
		return nil, usageError("%v", err)
	}
	return ds, nil
}

// readLock reads the lock of --check, with its lines for excerpts.
func readLock(path string, sources *excerpts) (*toollock.File, []diag.Diagnostic, error) {
	data, err := inputfile.ReadText(path)
	if err != nil {
		return nil, nil, usageError("cannot read %s: %v", path, unwrapPath(err))
	}
	v, err := schema.Acquire()
	if err != nil {
		return nil, nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	defer schema.Release(v)
	sources.withFile(path, data)
	f, ds := toollock.Read(path, data, v)
	return f, ds, nil
}

// toolsInput is what mcpc tools reports on: the plan, the host
// environment, the sources for excerpts and the diagnostics so far; for a
// craftbot plan, where its ${config:KEY} values are read.
type toolsInput struct {
	plan    *plan.Plan
	env     *compile.HostEnv
	deny    *denylist.List
	sources *excerpts
	ds      []diag.Diagnostic
	config  runtime.ConfigLookup
}

// planForTools compiles the sources, or reads --plan and builds the host
// environment from the env flags.
func planForTools(c *ucli.Context) (*toolsInput, error) {
	if file := c.String("plan"); file != "" {
		if len(c.StringSlice("appsettings")) > 0 || c.String("agent-dir") != "" {
			return nil, usageError("--plan replaces --appsettings and --agent-dir: give one or the other")
		}
		data, err := inputfile.ReadText(file)
		if err != nil {
			return nil, usageError("cannot read %s: %v", file, unwrapPath(err))
		}
		deny := denylist.Default()
		if f := c.String("deny-list"); f != "" {
			if deny, err = denylist.Load(f); err != nil {
				return nil, usageError("%v", err)
			}
		}
		env, files, eds, err := loadHostEnv(c, deny)
		if err != nil {
			return nil, err
		}
		p, pds := plan.Read(file, data)
		if err := volcanicPlanOnly(file, p); err != nil {
			return nil, err
		}
		return &toolsInput{plan: p, env: env, deny: deny, sources: sourcesOf(files).withFile(file, data), ds: append(eds, pds...)}, nil
	}
	res, err := compileDeployment(c)
	if err != nil {
		return nil, err
	}
	in := &toolsInput{plan: res.Plan, env: res.Env, deny: res.Deny, sources: sourcesOf(res.Files), ds: res.Diagnostics}
	if cfg := craftbot.ConfigOf(res); cfg != nil {
		in.config = cfg.EnvValue
	}
	return in, nil
}

// progressPrinter shows, on stderr, which server starts and how long each
// took, so that a slow or hanging server is visible while it happens; then
// the remote servers of the chat of scope.
func progressPrinter(w io.Writer, scope string) toolreport.Watch {
	var mu sync.Mutex
	return toolreport.Watch{
		Starting: func(n int) { fmt.Fprintf(w, "starting %s…\n", plural(n, "server")) },
		Server: func(e runtime.ProgressEvent) {
			mu.Lock()
			defer mu.Unlock()
			switch e.Phase {
			case runtime.PhaseStarted:
				fmt.Fprintf(w, "  %s: starting\n", term.Escape(e.Server))
			case runtime.PhaseDone:
				fmt.Fprintf(w, "  %s: %s in %s\n", term.Escape(e.Server), plural(e.Tools, "tool"), e.Elapsed.Round(time.Millisecond))
			case runtime.PhaseFailed:
				fmt.Fprintf(w, "  %s: failed after %s: %s\n", term.Escape(e.Server), e.Elapsed.Round(time.Millisecond), term.Escape(e.Reason))
			}
		},
		NoRemoteFile: func(path string) { fmt.Fprintf(w, "remote: no %s\n", term.Escape(path)) },
		Connecting: func(path string, n int) {
			fmt.Fprintf(w, "connecting %s of %s (scope %q)…\n", plural(n, "remote server"), term.Escape(path), scope)
		},
		RemoteServer: func(name, status string) {
			fmt.Fprintf(w, "  %s (remote): %s\n", term.Escape(name), term.Escape(status))
		},
	}
}

func writeToolRows(w io.Writer, format string, rows []toolreport.Row) error {
	if rows == nil {
		rows = []toolreport.Row{}
	}
	if format == "json" {
		for i := range rows {
			rows[i].Description = "" // the table of names; descriptions are in the lock's hashes
		}
		out, err := plan.CanonicalJSON(rows)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTOOL\tVISIBLE NAME\tNOTES")
	for _, r := range rows {
		tool, name, notes := "-", "-", ""
		if r.Tool != nil {
			tool = *r.Tool
		}
		if r.Name != nil {
			name = *r.Name
		} else if r.Tool != nil {
			name = "(not registered)"
		}
		if r.Rule != nil {
			notes = "[" + *r.Rule + "] " + r.Message
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", term.Escape(r.Server), term.Escape(tool), term.Escape(name), term.Escape(notes))
	}
	return tw.Flush()
}

// builtinActions are the names of --builtin-actions (craftbot).
func builtinActions(c *ucli.Context) []string {
	var out []string
	for _, b := range strings.Split(c.String("builtin-actions"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// writeActionRows prints a craftbot plan's action registry: as JSON, one
// object per action (or tool the host does not register, or failed
// server); as text, one block per action with its description and its
// input schema exactly as the host's adapter builds it, a line per
// property in name order.
func writeActionRows(w io.Writer, format string, rows []toolreport.ActionRow) error {
	if rows == nil {
		rows = []toolreport.ActionRow{}
	}
	if format == "json" {
		out, err := plan.CanonicalJSON(rows)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	bw := &errWriter{w: w}
	for i, r := range rows {
		if i > 0 {
			bw.printf("\n")
		}
		switch {
		case r.Tool == nil:
			bw.printf("server %s (%s): no actions\n", term.Escape(r.Server), term.Escape(r.Transport))
		case r.Action == nil:
			bw.printf("(not registered)  (set %s; server %s, tool %s)\n", term.Escape(r.ActionSet), term.Escape(r.Server), term.Escape(*r.Tool))
		default:
			bw.printf("%s  (set %s; server %s, tool %s)\n", term.Escape(*r.Action), term.Escape(r.ActionSet), term.Escape(r.Server), term.Escape(*r.Tool))
			bw.printf("  %s\n", term.Escape(r.Description))
			if r.Input != nil && len(*r.Input) == 0 {
				bw.printf("  (no inputs)\n")
			}
			if r.Input != nil {
				for _, name := range slices.Sorted(maps.Keys(*r.Input)) {
					bw.printf("  - %s\n", term.Escape(fieldLine(name, (*r.Input)[name])))
				}
			}
		}
		if r.Rule != nil {
			bw.printf("  ! [%s] %s\n", *r.Rule, term.Escape(r.Message))
		}
	}
	return bw.err
}

// fieldLine is one property of an action's input: name (type, required):
// description; one of enum; example; items. It is the server's text as is:
// the caller escapes the line.
func fieldLine(name string, f actions.Field) string {
	typ := shownValue(f["type"])
	if t, ok := f["type"].([]any); ok {
		parts := make([]string, len(t))
		for i, p := range t {
			parts[i] = shownValue(p)
		}
		typ = strings.Join(parts, "|")
	}
	if f["required"] == true {
		typ += ", required"
	}
	line := name + " (" + typ + ")"
	if d, ok := f["description"]; ok {
		line += ": " + shownValue(d)
	}
	if e, ok := f["enum"]; ok {
		line += "; one of " + compactJSON(e)
	}
	if e, ok := f["example"]; ok {
		line += "; example " + compactJSON(e)
	}
	if it, ok := f["items"]; ok {
		line += "; items " + compactJSON(it)
	}
	return line
}

// shownValue is a string as is, anything else as JSON.
func shownValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return compactJSON(v)
}

// compactJSON is v as compact JSON (keys sorted).
func compactJSON(v any) string {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// rewriteLockCommand is the command line that wrote this check's lock
// again: the same command and inputs (--plan, source flags, workspace),
// without --check.
func rewriteLockCommand(c *ucli.Context) string {
	args, _ := c.App.Metadata["args"].([]string)
	var words []string
	for i, a := range args {
		switch {
		case i == 0:
			words = append(words, "mcpc")
		case a == "--check" || a == "-check" || strings.HasPrefix(a, "--check="):
		default:
			words = append(words, shellQuote(a))
		}
	}
	return strings.Join(words, " ")
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
