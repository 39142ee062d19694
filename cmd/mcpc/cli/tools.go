package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/naming"
	"github.com/mcpc-dev/mcpc/plan"
	"github.com/mcpc-dev/mcpc/policies/denylist"
	"github.com/mcpc-dev/mcpc/redact"
	"github.com/mcpc-dev/mcpc/remote"
	"github.com/mcpc-dev/mcpc/report"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/schema"
	"github.com/mcpc-dev/mcpc/toollock"
)

// RuleServerStartFailed reports a server whose tools could not be listed.
const RuleServerStartFailed = "server-start-failed"

func toolsCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "tools",
		Usage: "start each enabled server, list its tools and show the names the agent sees; write or check a tool lock",
		UsageText: `mcpc tools [source flags | --plan FILE] [--format text|json] [--builtin-tools LIST] [--lock FILE [--check]]
      [--workspace DIR --scope SCOPE]

With --workspace and --scope, the chat's remote servers (DIR/.volcanic/mcp/servers.json,
entries sealed for SCOPE) are connected too and their allowed tools listed after the
stdio tools, named <server>__<tool>. They are not part of the lock.

Examples:
   mcpc tools --appsettings appsettings.json --env-file host.env --agent-dir agent
   mcpc tools --plan plan.json --lock mcpc.lock.json          # write the lock
   mcpc tools --plan plan.json --lock mcpc.lock.json --check  # exit 1 when a tool changed
   mcpc tools --plan plan.json --env-file host.env --workspace /srv/chats/42 --scope 42`,
		Flags: flags(sourceFlags(), []ucli.Flag{
			&ucli.StringFlag{Name: "plan", Usage: "read the plan `FILE` (from mcpc plan -o) instead of compiling the sources; --env-file/--env/--clean-env still make the host environment"},
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "output: text (a table) or json (an array, one object per tool)"},
			&ucli.StringFlag{Name: "builtin-tools", Value: strings.Join(naming.DefaultBuiltins, ","), Usage: "the host's built-in tool `NAMES`, comma-separated (empty: none)"},
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

// toolRow is one line of the output.
type toolRow struct {
	Server      string  `json:"server"`
	Tool        *string `json:"tool"` // the server's own name; null for a server that failed
	Name        *string `json:"name"` // the visible name; null when not registered
	Rule        *string `json:"rule"` // the rule explaining a drop or a change
	Message     string  `json:"message,omitempty"`
	Description string  `json:"description,omitempty"`
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
	pl, env, deny, planSources, ds, err := planForTools(c)
	if err != nil {
		return err
	}
	sources := sourcesOf(planSources)
	stderr := c.App.ErrWriter
	// The known secrets of the launches, once they are known.
	redactor := redact.New(nil)
	printDiags := func(ds []diag.Diagnostic) error {
		return printDiagnostics(stderr, plainText, ds, sources, redactor.Redact)
	}
	if pl == nil {
		if err := printDiags(ds); err != nil {
			return err
		}
		return &exitError{code: ExitProblems, msg: "no plan: fix the errors above"}
	}

	// The lock is read before anything starts: a broken lock is reported
	// without running a server.
	var lockFile *toollock.File
	if c.Bool("check") {
		data, err := inputfile.ReadText(c.String("lock"))
		if err != nil {
			return usageError("cannot read %s: %v", c.String("lock"), unwrapPath(err))
		}
		v, err := schema.Acquire()
		if err != nil {
			return &exitError{code: ExitInternal, msg: err.Error()}
		}
		defer schema.Release(v)
		sources.withFile(c.String("lock"), data)
		f, lds := toollock.Read(c.String("lock"), data, v)
		if f == nil {
			ds = append(ds, lds...)
			if err := printDiags(ds); err != nil {
				return err
			}
			return &exitError{code: ExitProblems}
		}
		lockFile = f
	}

	hostEnv := runtime.HostEnv{Vars: env.Map(), Deny: deny}
	var secrets []string
	for i := range pl.Servers {
		secrets = append(secrets, hostEnv.Secrets(&pl.Servers[i])...)
	}
	redactor = redact.New(secrets)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer stop()
	targets := runtime.Targets(pl, hostEnv)
	opts := runtime.DiscoverOptions{Concurrency: c.Int("concurrency"), Redact: redactor.Redact}
	if !c.Bool("quiet") {
		opts.Progress = progressPrinter(stderr, len(targets))
	}
	found := runtime.Discover(ctx, targets, opts)
	if ctx.Err() != nil {
		return &exitError{code: ExitProblems, msg: "interrupted: every server was stopped"}
	}

	byName := map[string]*runtime.Discovery{}
	for i := range found {
		byName[found[i].Server] = &found[i]
	}
	builtins := naming.DefaultBuiltins
	if c.IsSet("builtin-tools") {
		builtins = []string{}
		for _, b := range strings.Split(c.String("builtin-tools"), ",") {
			if b = strings.TrimSpace(b); b != "" {
				builtins = append(builtins, b)
			}
		}
	}
	var lists []naming.ServerTools
	failed := map[string]bool{}
	for i := range pl.Servers {
		s := &pl.Servers[i]
		if d := byName[s.Name]; d != nil && d.Err == nil {
			st := naming.ServerTools{Server: s.Name, Prefix: s.ToolPrefix}
			for _, t := range d.Tools {
				st.Tools = append(st.Tools, t.Name)
			}
			lists = append(lists, st)
		}
	}
	// Assign returns one result per listed tool, in the order of lists.
	results := naming.Assign(lists, naming.Options{Builtins: builtins})
	next := 0
	var rows []toolRow
	var observed []toollock.Observed
	for i := range pl.Servers {
		s := &pl.Servers[i]
		d := byName[s.Name]
		if d == nil {
			continue // disabled
		}
		pos := diag.Pos{File: s.Origin.Path, Line: s.Origin.Line, Column: s.Origin.Column}
		if d.Err != nil {
			failed[s.Name] = true
			rule := RuleServerStartFailed
			rows = append(rows, toolRow{Server: s.Name, Rule: &rule, Message: d.Reason})
			ds = append(ds, diag.At(pos, diag.Error, RuleServerStartFailed,
				fmt.Sprintf("server %q did not list its tools: %s", s.Name, d.Reason),
				"run its command by hand in an empty directory to see why; it contributes no tools"))
			continue
		}
		var tools []toollock.ObservedTool
		for _, t := range d.Tools {
			r := results[next]
			next++
			row := toolRow{Server: s.Name, Tool: ptr(t.Name), Description: redactor.Redact(t.Description)}
			if r.Name != "" {
				row.Name = ptr(r.Name)
			}
			if r.Rule != "" {
				row.Rule, row.Message = ptr(r.Rule), redactor.Redact(r.Message)
				ds = append(ds, diag.At(pos, diag.Warning, r.Rule, r.Message, r.Suggestion))
			}
			rows = append(rows, row)
			tools = append(tools, toollock.ObservedTool{Name: t.Name, VisibleName: r.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
		observed = append(observed, toollock.ObservedFrom(s, d.ServerName, d.ServerVersion, tools))
	}

	remoteCount := 0
	if workspace != "" {
		taken := map[string]bool{}
		for _, b := range builtins {
			taken[b] = true
		}
		for _, r := range results {
			if r.Name != "" {
				taken[r.Name] = true
			}
		}
		rr, err := listRemoteTools(ctx, c, env, workspace, scope, taken, redactor)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return &exitError{code: ExitProblems, msg: "interrupted: every server was stopped"}
		}
		rows = append(rows, rr.rows...)
		ds = append(ds, rr.ds...)
		if rr.sources != nil {
			sources.others = append(sources.others, rr.sources)
		}
		remoteCount = rr.servers
	}

	if err := writeToolRows(c.App.Writer, format, rows); err != nil {
		return err
	}

	if lockPath := c.String("lock"); lockPath != "" {
		lock, err := toollock.Build(observed)
		if err != nil {
			return &exitError{code: ExitInternal, msg: err.Error()}
		}
		if lockFile != nil {
			ds = append(ds, lockFile.Check(lock, failed)...)
		} else if len(failed) > 0 {
			ds = append(ds, diag.At(diag.Pos{File: lockPath}, diag.Error, RuleServerStartFailed,
				fmt.Sprintf("the lock was not written: %d server(s) did not list their tools", len(failed)),
				"fix the servers above, then write the lock again"))
		} else {
			out, err := toollock.Encode(lock)
			if err != nil {
				return &exitError{code: ExitInternal, msg: err.Error()}
			}
			if err := refuseInput("--lock", lockPath, inputsOf(c, pl.Sources)); err != nil {
				return err
			}
			if err := writeAtomic(lockPath, out); err != nil {
				return usageError("writing %s: %v", lockPath, err)
			}
		}
	}
	if err := printDiags(ds); err != nil {
		return err
	}
	if !c.Bool("quiet") {
		servers := plural(len(found), "server")
		if workspace != "" {
			servers += ", " + plural(remoteCount, "remote server")
		}
		fmt.Fprintf(stderr, "%s, %d tools visible: %s\n", servers, countVisible(rows), report.Summary(ds))
	}
	if code := problemsCode(ds, c.Bool("strict")); code != ExitOK {
		return &exitError{code: code}
	}
	return nil
}

func ptr(s string) *string { return &s }

// remoteRows is what the remote servers of a workspace add to mcpc tools.
type remoteRows struct {
	rows    []toolRow
	ds      []diag.Diagnostic
	sources diag.Sources
	servers int // entries in use (connected or not)
}

// listRemoteTools connects the remote servers of workspace sealed for scope
// (handshake and tools/list, as a chat does), and returns a row per allowed
// tool, named as a chat names it against the names in taken (built-ins and
// the stdio tools). A server that cannot be reached is server-start-failed
// at its entry, as a stdio server that does not start; the problems of
// servers.json itself are its rules (remote-*), as validate reports them.
func listRemoteTools(ctx context.Context, c *ucli.Context, env *compile.HostEnv, workspace, scope string, taken map[string]bool, host *redact.Redactor) (*remoteRows, error) {
	out := &remoteRows{}
	quiet := c.Bool("quiet")
	stderr := c.App.ErrWriter
	f, err := remote.Load(workspace)
	if err != nil {
		return nil, usageError("%s", host.Redact(err.Error()))
	}
	if !f.Exists {
		if !quiet {
			fmt.Fprintf(stderr, "remote: no %s\n", f.Path)
		}
		return out, nil
	}
	out.ds = append(out.ds, f.Diagnostics...)
	secret, from, serr := remote.Secret(env.Value)
	if f.Problem == "" {
		if serr == nil {
			key, err := remote.NewKey(secret)
			if err != nil {
				return nil, &exitError{code: ExitInternal, msg: err.Error()}
			}
			out.ds = append(out.ds, remote.CheckSealed(f, key, scope, from)...)
		} else {
			for _, e := range f.Entries {
				if e.Valid() {
					out.ds = append(out.ds, diag.At(e.SealedPos, diag.Error, remote.RuleSealed,
						fmt.Sprintf("%s: the sealed part cannot be opened: the host environment has no %s or %s; the host skips it", e.Label(), remote.SecretVar, remote.FallbackSecretVar),
						"give the host secret with --env-file or --env "+remote.SecretVar+"=…"))
				}
			}
		}
	}
	m, err := remote.NewManager(remote.Options{Workspace: workspace, Scope: scope, Secret: secret, Dial: dialOptions()})
	if err != nil {
		return nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	defer m.Close()
	m.Start()
	if !quiet {
		st, _, _ := m.Status()
		fmt.Fprintf(stderr, "connecting %s of %s (scope %q)…\n", plural(len(st), "remote server"), f.Path, scope)
	}
	l, err := m.List(ctx, func(name string) bool { return taken[name] })
	if err != nil {
		return out, nil // interrupted: the caller sees ctx
	}
	// Every text of this part is redacted here: the host's secrets and the
	// header values of the entries that opened.
	red := func(s string) string { return host.Redact(m.Redact(s)) }
	out.sources = f.Sources(red)
	out.servers = len(l.Servers)

	// The naming of every connected server's allowed tools, as the chat's
	// listing made it (naming.Assign), to give each tool its rule.
	var groups []naming.ServerTools
	for _, s := range l.Servers {
		if s.State == remote.StateConnected {
			groups = append(groups, naming.ServerTools{Server: s.Name, Tools: s.Tools, Remote: true})
		}
	}
	named := map[string][]naming.Result{}
	for _, r := range naming.Assign(groups, naming.Options{Builtins: []string{}}) {
		named[r.Server] = append(named[r.Server], r)
	}
	registered := map[string]string{} // server + "\x00" + tool → visible name
	for _, t := range l.Tools {
		registered[t.Server+"\x00"+t.Tool.Name] = t.Name
	}
	for _, s := range l.Servers {
		pos := diag.Pos{File: f.Path}
		if es := f.Find(s.Name); len(es) > 0 {
			pos = es[0].Pos
		}
		if !quiet {
			fmt.Fprintf(stderr, "  %s (remote): %s\n", s.Name, red(s.String()))
		}
		if s.State != remote.StateConnected {
			reason := red(s.Reason)
			if reason == "" {
				reason = string(s.State)
			}
			rule := RuleServerStartFailed
			out.rows = append(out.rows, toolRow{Server: s.Name, Rule: &rule, Message: reason})
			out.ds = append(out.ds, diag.At(pos, diag.Error, RuleServerStartFailed,
				fmt.Sprintf("remote server %q did not list its tools: %s", s.Name, reason),
				fmt.Sprintf("check its url and key: mcpc remote list --workspace %s --scope %s; it contributes no tools", workspace, scope)))
			continue
		}
		for _, name := range s.Missing {
			out.ds = append(out.ds, diag.At(pos, diag.Warning, remote.RuleTools,
				red(fmt.Sprintf("remote server %q does not offer the allowlisted tool %q", s.Name, name)),
				fmt.Sprintf("mcpc remote tools %s --workspace %s --scope %s shows the tools it offers", s.Name, workspace, scope)))
		}
		for _, r := range named[s.Name] {
			row := toolRow{Server: s.Name, Tool: ptr(red(r.Tool))}
			visible, ok := registered[s.Name+"\x00"+r.Tool]
			switch {
			case ok:
				row.Name = ptr(visible)
				if r.Rule != "" {
					row.Rule, row.Message = ptr(r.Rule), red(r.Message)
					out.ds = append(out.ds, diag.At(pos, diag.Warning, r.Rule, red(r.Message), red(r.Suggestion)))
				}
			case r.Registered():
				// Named, then skipped: a built-in or a stdio tool has the name.
				msg := red(fmt.Sprintf("tool %q of remote server %q is skipped: the name %q is already used by another tool", r.Tool, s.Name, r.Name))
				row.Rule, row.Message = ptr(naming.RuleCollision), msg
				out.ds = append(out.ds, diag.At(pos, diag.Warning, naming.RuleCollision, msg, "add the remote server under another name"))
			default:
				row.Rule, row.Message = ptr(r.Rule), red(r.Message)
				out.ds = append(out.ds, diag.At(pos, diag.Warning, r.Rule, red(r.Message), red(r.Suggestion)))
			}
			out.rows = append(out.rows, row)
		}
	}
	for i := range out.ds {
		out.ds[i].Message = red(out.ds[i].Message)
		out.ds[i].Suggestion = red(out.ds[i].Suggestion)
	}
	return out, nil
}

func countVisible(rows []toolRow) int {
	n := 0
	for _, r := range rows {
		if r.Name != nil {
			n++
		}
	}
	return n
}

// planForTools compiles the sources, or reads --plan and builds the host
// environment from the env flags.
func planForTools(c *ucli.Context) (*plan.Plan, *compile.HostEnv, *denylist.List, diag.Sources, []diag.Diagnostic, error) {
	if file := c.String("plan"); file != "" {
		if len(c.StringSlice("appsettings")) > 0 || c.String("agent-dir") != "" {
			return nil, nil, nil, nil, nil, usageError("--plan replaces --appsettings and --agent-dir: give one or the other")
		}
		data, err := inputfile.ReadText(file)
		if err != nil {
			return nil, nil, nil, nil, nil, usageError("cannot read %s: %v", file, unwrapPath(err))
		}
		deny := denylist.Default()
		if f := c.String("deny-list"); f != "" {
			if deny, err = denylist.Load(f); err != nil {
				return nil, nil, nil, nil, nil, usageError("%v", err)
			}
		}
		opts := compile.HostEnvOptions{EnvFiles: c.StringSlice("env-file"), Env: c.StringSlice("env"), CleanEnv: c.Bool("clean-env"), DenyList: deny}
		if !opts.CleanEnv {
			opts.Environ = environ()
		}
		env, files, eds, err := compile.LoadHostEnv(opts)
		if err != nil {
			return nil, nil, nil, nil, nil, usageError("%v", err)
		}
		p, pds := plan.Read(file, data)
		return p, env, deny, sourcesOf(files).withFile(file, data), append(eds, pds...), nil
	}
	res, err := compileFromFlags(c)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	return res.Plan, res.Env, res.Deny, res.Files, res.Diagnostics, nil
}

// progressPrinter shows, on stderr, which server starts and how long each
// took, so that a slow or hanging server is visible while it happens.
func progressPrinter(w io.Writer, n int) func(runtime.ProgressEvent) {
	var mu sync.Mutex
	fmt.Fprintf(w, "starting %s…\n", plural(n, "server"))
	return func(e runtime.ProgressEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Phase {
		case runtime.PhaseStarted:
			fmt.Fprintf(w, "  %s: starting\n", e.Server)
		case runtime.PhaseDone:
			fmt.Fprintf(w, "  %s: %s in %s\n", e.Server, plural(e.Tools, "tool"), e.Elapsed.Round(time.Millisecond))
		case runtime.PhaseFailed:
			fmt.Fprintf(w, "  %s: failed after %s: %s\n", e.Server, e.Elapsed.Round(time.Millisecond), e.Reason)
		}
	}
}

func writeToolRows(w io.Writer, format string, rows []toolRow) error {
	if rows == nil {
		rows = []toolRow{}
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", escapeCell(r.Server), escapeCell(tool), escapeCell(name), escapeCell(notes))
	}
	return tw.Flush()
}

// escapeCell keeps one row on one line whatever a server names its tools.
func escapeCell(s string) string {
	b, _ := json.Marshal(s)
	q := string(b[1 : len(b)-1])
	return strings.NewReplacer(`\"`, `"`, `\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(q)
}
