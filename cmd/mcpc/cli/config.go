package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	goruntime "runtime"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/policies/lint"
)

// configCommand is `mcpc config`: CraftBot's /mcp command on its
// mcp_config.json.
func configCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "config",
		Usage: "list and edit CraftBot's mcp_config.json with the verbs of its /mcp command",
		UsageText: `mcpc config list|add|add-json|remove|enable|disable|env … [--config FILE]

After an edit, it says that CraftBot 605efb4 applies it only when it restarts, unless the mcpc.cue
found upward from the config file switches the version pack craftbot-605efb4 off.

Examples:
   mcpc config list --all
   mcpc config add time --transport stdio -- uvx mcp-server-time
   mcpc config env github GITHUB_PERSONAL_ACCESS_TOKEN < token.txt`,
		HideHelpCommand: true,
		Subcommands:     configSubcommands(),
		Action: func(c *ucli.Context) error {
			if c.NArg() == 0 {
				return usageError("config needs a command: list, add, add-json, remove, enable, disable or env (see mcpc config --help)")
			}
			return usageError("config: unknown command %q: use list, add, add-json, remove, enable, disable or env", c.Args().First())
		},
	}
}

func configSubcommands() []*ucli.Command {
	edit := func(name, usage, usageText string, action ucli.ActionFunc, more ...ucli.Flag) *ucli.Command {
		return &ucli.Command{Name: name, Usage: usage, UsageText: usageText, Flags: append(craftbotFlags(), more...), Action: action, HideHelpCommand: true}
	}
	return []*ucli.Command{
		edit("list", "the enabled servers (--all: every one): transport, enabled, action set, env keys, whether the host loads it and why not, target-OS marks",
			"mcpc config list [--all] [--config FILE] [--target-os OS]\n\nExample:\n   mcpc config list --all --target-os windows",
			configList, &ucli.BoolFlag{Name: "all", Usage: "list disabled servers too"}),
		edit("add", "add a stdio server that runs the command after --",
			"mcpc config add NAME --transport stdio -- COMMAND [ARG...]\n\nExample:\n   mcpc config add fs --transport stdio -- npx -y @modelcontextprotocol/server-filesystem .",
			configAdd, &ucli.StringFlag{Name: "transport", Value: plan.TransportStdio, Usage: "stdio (the only transport of add; add-json writes sse and websocket servers)"}),
		edit("add-json", "add a server from a JSON object: sse or websocket with url, or stdio with env and args",
			"mcpc config add-json NAME 'JSON'\n\nExample:\n   mcpc config add-json sentry '{\"transport\": \"sse\", \"url\": \"https://sentry.example.com/mcp/sse\", \"enabled\": false}'",
			configAddJSON),
		edit("remove", "remove a server (every entry of that name)",
			"mcpc config remove NAME\n\nExample:\n   mcpc config remove sentry", configEditAction(craftbot.OpRemove)),
		edit("enable", "enable a server so that the host connects to it",
			"mcpc config enable NAME\n\nExample:\n   mcpc config enable github", configEditAction(craftbot.OpEnable)),
		edit("disable", "disable a server so that the host stops connecting to it",
			"mcpc config disable NAME\n\nExample:\n   mcpc config disable playwright", configEditAction(craftbot.OpDisable)),
		edit("env", "set an env variable of a stdio server (without VALUE: read from standard input, not echoed)",
			`mcpc config env NAME KEY [VALUE]

Without VALUE the value is read from standard input: on a terminal it is
asked for and not echoed; otherwise all of standard input, less one final
newline. A VALUE on the command line shows in ps and in the shell's history.

Example:
   mcpc config env github GITHUB_PERSONAL_ACCESS_TOKEN < token.txt`,
			configEnv),
	}
}

// configTarget is the file and the options of a `mcpc config` command.
type configTarget struct {
	path string
	opts craftbot.Options
}

func configSetup(c *ucli.Context) (*configTarget, error) {
	t := &configTarget{path: c.String("config")}
	if t.path == "" {
		t.path = craftbot.DefaultPath
	}
	t.opts.TargetOS = c.String("target-os")
	if !c.IsSet("target-os") && craftbot.ValidTargetOS(goruntime.GOOS) {
		t.opts.TargetOS = goruntime.GOOS
	}
	if c.IsSet("target-os") && !craftbot.ValidTargetOS(t.opts.TargetOS) {
		return nil, usageError("--target-os %s: one of %s", t.opts.TargetOS, strings.Join(craftbot.TargetOSes, ", "))
	}
	return t, nil
}

// read reads the file; a missing or unreadable one is exit 2 (an edit
// never creates the host's file: in the wrong directory that would make a
// new one the host never reads).
func (t *configTarget) read() ([]byte, error) {
	data, err := inputfile.Read(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usageError("%s does not exist: give --config FILE, or run mcpc in CraftBot's directory (it reads %s)", t.path, craftbot.DefaultPath)
	}
	if err != nil {
		return nil, usageError("cannot read %s: %v", t.path, unwrapPath(err))
	}
	return data, nil
}

// configRedactor knows the values of env (and of unknown fields) in each
// of datas, and extra: what `mcpc config` prints is passed through it, in
// case a message quotes one.
func configRedactor(extra string, datas ...[]byte) *redact.Redactor {
	return craftbot.Redactor(extra, datas...)
}

func configList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usageError("list takes no arguments, got %q", c.Args().First())
	}
	t, err := configSetup(c)
	if err != nil {
		return err
	}
	data, err := t.read()
	if err != nil {
		return err
	}
	cfg, ds, err := craftbot.Check(t.path, data, t.opts)
	if err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	red := configRedactor("", data)
	if errs := diag.Errors(ds); cfg.LoadsNothing != "" {
		printDiagnostics(c.App.ErrWriter, plainText(c), errs, craftbot.ConfigExcerpts(t.path, data), red.Redact)
		return &exitError{code: ExitProblems, msg: fmt.Sprintf("no server of %s loads: fix the errors above", t.path)}
	}
	printRows(c.App.Writer, craftbot.Rows(data, cfg, ds), c.Bool("all"), t.opts.TargetOS, red)
	return nil
}

// printRows prints the table of `mcpc config list` and a summary line.
func printRows(w io.Writer, rows []craftbot.Row, all bool, goos string, red *redact.Redactor) {
	loads, enabled, shown := 0, 0, 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTRANSPORT\tENABLED\tACTION SET\tENV\tSTATUS")
	for _, r := range rows {
		e := r.Entry
		if e.Loads() {
			loads++
			if e.Enabled {
				enabled++
			}
		}
		if !all && !e.Enabled {
			continue
		}
		shown++
		name := e.Name
		if name == "" {
			name = fmt.Sprintf("%s[%d]", craftbot.FieldServers, e.Index)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", term.Escape(red.Redact(name)), term.Escape(orDash(red.Redact(e.Transport))), yesNo(e.Enabled),
			term.Escape(orDash(red.Redact(e.ActionSet))), term.Escape(envColumn(r.Env)), term.Escape(red.Redact(status(r, goos))))
	}
	tw.Flush()
	which := "enabled servers"
	if all {
		which = "servers"
	}
	fmt.Fprintf(w, "%d %s shown of %d; %d load (%d enabled), %d skipped\n", shown, which, len(rows), loads, enabled, len(rows)-loads)
}

// status says whether the host loads the entry, why not, and whether it
// starts on the target OS.
func status(r craftbot.Row, goos string) string {
	e := r.Entry
	if !e.Loads() {
		s := "skipped"
		if r.Skip != nil {
			s += ": " + r.Skip.Message + " [" + r.Skip.Rule + "]"
		}
		return s
	}
	if e.OSProblem != "" {
		verb := "will not start"
		if !e.Enabled {
			verb = "would not start"
		}
		return fmt.Sprintf("loads; %s on %s: %s [%s]", verb, goos, e.OSProblem, craftbot.RuleTargetOS)
	}
	return "loads"
}

// envColumn lists the env keys, marking the empty ones; never a value.
func envColumn(env []craftbot.EnvKey) string {
	if len(env) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range env {
		if k.Set {
			parts = append(parts, k.Key)
		} else {
			parts = append(parts, k.Key+" (empty)")
		}
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func configAdd(c *ucli.Context) error {
	if c.NArg() < 2 {
		return usageError("add needs NAME and, after --, the command, as in: mcpc config add fs --transport stdio -- npx -y @modelcontextprotocol/server-filesystem .")
	}
	if tr := c.String("transport"); tr != plan.TransportStdio {
		return usageError("add --transport %s: add writes stdio servers; for sse or websocket use mcpc config add-json NAME '{\"transport\": \"%s\", \"url\": \"…\"}'", tr, tr)
	}
	args := c.Args().Slice()
	return configEdit(c, craftbot.Edit{Op: craftbot.OpAdd, Name: args[0], Command: args[1:]})
}

func configAddJSON(c *ucli.Context) error {
	if c.NArg() != 2 {
		return usageError(`add-json needs NAME and a JSON object, as in: mcpc config add-json sentry '{"transport": "sse", "url": "https://sentry.example.com/mcp/sse"}'`)
	}
	return configEdit(c, craftbot.Edit{Op: craftbot.OpAddJSON, Name: c.Args().Get(0), JSON: c.Args().Get(1)})
}

func configEditAction(op craftbot.Op) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if c.NArg() != 1 {
			return usageError("%s needs exactly one server NAME", op)
		}
		return configEdit(c, craftbot.Edit{Op: op, Name: c.Args().First()})
	}
}

// maxValueInput bounds a value read from standard input.
const maxValueInput = 64 << 10

func configEnv(c *ucli.Context) error {
	if c.NArg() < 2 || c.NArg() > 3 {
		return usageError("env needs NAME KEY and optionally VALUE (without it the value is read from standard input)")
	}
	ed := craftbot.Edit{Op: craftbot.OpEnv, Name: c.Args().Get(0), Key: c.Args().Get(1), Value: c.Args().Get(2)}
	if c.NArg() == 2 {
		v, err := readValue(c.App.Reader, c.App.ErrWriter, ed.Name, ed.Key)
		if err != nil {
			return err
		}
		ed.Value = v
	}
	return configEdit(c, ed)
}

// readValue reads the value of `mcpc config env` from in: on a terminal one
// line typed without echo, otherwise everything less one final newline. An
// empty value is refused (clearing a credential takes VALUE "").
func readValue(in io.Reader, prompt io.Writer, name, key string) (string, error) {
	var v string
	if f, ok := in.(*os.File); ok && term.IsTerminal(f) {
		line, err := term.ReadWithoutEcho(f, prompt, fmt.Sprintf("Value of %s for server %s (input is not shown): ", key, name), readLine)
		var echo *term.EchoError
		switch {
		case errors.As(err, &echo):
			return "", usageError("%v: pipe the value in, as in: mcpc config env %s %s < file", err, name, key)
		case err != nil:
			return "", &exitError{code: ExitProblems, msg: "interrupted; nothing was written"}
		}
		v = line
	} else {
		data, err := io.ReadAll(io.LimitReader(in, maxValueInput+1))
		if err != nil {
			return "", usageError("reading the value from standard input: %v", err)
		}
		if len(data) > maxValueInput {
			return "", usageError("the value on standard input is longer than %d bytes", maxValueInput)
		}
		v = strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	}
	if v == "" {
		return "", usageError("no value on standard input for %s: type or pipe it, or give VALUE (\"\" empties it)", key)
	}
	return v, nil
}

// readLine reads one line (without its line ending) from a terminal.
func readLine(r io.Reader) string {
	line, _ := bufio.NewReader(io.LimitReader(r, maxValueInput)).ReadString('\n')
	return strings.TrimRight(line, "\r\n")
}

// configEdit makes one edit with craftbot.EditFile: under the file's lock
// it reads the file, applies the edit, and writes the result atomically
// unless it was refused, so that two edits at the same time both land.
func configEdit(c *ucli.Context, ed craftbot.Edit) error {
	t, err := configSetup(c)
	if err != nil {
		return err
	}
	if _, err := os.Stat(t.path); err != nil {
		_, err = t.read() // says why
		return err
	}
	data, ch, err := craftbot.EditFile(t.path, ed, t.opts)
	var ee *craftbot.EditError
	var re *craftbot.ReadError
	switch {
	case errors.As(err, &re):
		_, err = t.read() // says why
		if err == nil {
			err = usageError("%v", re)
		}
		return err
	case errors.As(err, &ee):
		return usageError("%s", ee.Msg)
	case errors.Is(err, craftbot.ErrChanged):
		return &exitError{code: ExitProblems, msg: fmt.Sprintf("%s %s (by something other than mcpc); nothing was written: run the command again", t.path, craftbot.ErrChanged)}
	case err != nil && ch == nil && data != nil: // Apply's own failure
		return &exitError{code: ExitInternal, msg: err.Error()}
	case err != nil:
		return usageError("%v", err)
	}
	red := configRedactor(ed.Value, data, ch.Data)
	errw := c.App.ErrWriter
	if ch.Refused != "" {
		printDiagnostics(errw, plainText(c), ch.Diagnostics, craftbot.ConfigExcerpts(ch.File, ch.Data), red.Redact)
		return &exitError{code: ExitProblems, msg: fmt.Sprintf("%s %s refused: %s; %s is left untouched", ed.Op, ed.Name, red.Redact(ch.Refused), t.path)}
	}
	if ch.Unchanged {
		fmt.Fprintf(c.App.Writer, "%s; nothing written\n", already(ed, t.path))
		return nil
	}
	fmt.Fprintln(c.App.Writer, done(ed, ch, t.path))
	for _, note := range lint.EditNotes(t.path) {
		fmt.Fprintln(c.App.Writer, note)
	}
	if len(ch.Diagnostics) > 0 {
		printDiagnostics(errw, plainText(c), ch.Diagnostics, craftbot.ConfigExcerpts(ch.File, ch.Data), red.Redact)
	}
	return nil
}

// already says what the file says already when an edit changes nothing.
func already(ed craftbot.Edit, path string) string {
	switch ed.Op {
	case craftbot.OpEnable:
		return fmt.Sprintf("server %s is enabled in %s already", ed.Name, path)
	case craftbot.OpDisable:
		return fmt.Sprintf("server %s is disabled in %s already", ed.Name, path)
	}
	return fmt.Sprintf("env %s of server %s in %s has that value already", ed.Key, ed.Name, path)
}

// done says what an accepted edit did; never a value.
func done(ed craftbot.Edit, ch *craftbot.Change, path string) string {
	switch ed.Op {
	case craftbot.OpAdd, craftbot.OpAddJSON:
		state := "enabled"
		if !ch.Entry.Enabled {
			state = "disabled"
		}
		return fmt.Sprintf("added server %s (%s, %s) to %s", ed.Name, ch.Entry.Transport, state, path)
	case craftbot.OpRemove:
		what := "server " + ed.Name
		if ch.Removed > 1 {
			what = fmt.Sprintf("%d entries of server %s", ch.Removed, ed.Name)
		}
		return fmt.Sprintf("removed %s from %s", what, path)
	case craftbot.OpEnable:
		return fmt.Sprintf("enabled server %s in %s", ed.Name, path)
	case craftbot.OpDisable:
		return fmt.Sprintf("disabled server %s in %s", ed.Name, path)
	}
	return fmt.Sprintf("set env %s of server %s in %s (the value is not shown)", ed.Key, ed.Name, path)
}
