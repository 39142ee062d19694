package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remoteset"
)

// remoteDial tunes the connections of `mcpc remote`; tests shorten it.
var remoteDial = remote.DialOptions{}

func dialOptions() remote.DialOptions {
	o := remoteDial
	if o.ClientVersion == "" {
		o.ClientVersion = Version
	}
	return o
}

// remoteFlags are shared by every `mcpc remote` command.
func remoteFlags() []ucli.Flag {
	// The host environment holds MCP_ENCRYPTION_SECRET (or TELEGRAM_BOT_TOKEN).
	return flags([]ucli.Flag{
		&ucli.StringFlag{Name: "workspace", Usage: "the chat's workspace `DIR` (servers.json is DIR/.volcanic/mcp/servers.json)"},
		&ucli.StringFlag{Name: "scope", Usage: "the chat's session `SCOPE`, bound into every sealed entry"},
	}, hostEnvFlags())
}

func remoteAddFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "tools", Usage: "allow only these tools of the server, comma-separated (`a,b`; all: every tool, the default)"},
		&ucli.StringFlag{Name: "transport", Value: remote.TransportAuto, Usage: "auto (Streamable HTTP, falling back to SSE), http or sse"},
		&ucli.StringFlag{Name: "bearer", Usage: "send Authorization: Bearer `TOKEN`"},
		&ucli.StringSliceFlag{Name: "header", Usage: "send the header `\"Name: value\"`; repeatable"},
		&ucli.BoolFlag{Name: "no-key", Usage: "send no headers"},
		&ucli.BoolFlag{Name: "force", Usage: "save even when the server cannot be reached"},
	}
}

// remoteCommand is `mcpc remote list|add|remove|tools`; interspersed lets
// each subcommand's flags stand before or after its arguments.
func remoteCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "remote",
		Usage: "list, add, remove a chat's remote MCP servers, or set their allowed tools (servers.json)",
		UsageText: `mcpc remote list|add|remove|tools … --workspace DIR --scope SCOPE

Examples:
   mcpc remote list --workspace /srv/chats/42 --scope 42
   mcpc remote add notes https://mcp.example.com/mcp --workspace /srv/chats/42 --scope 42 < key.txt`,
		HideHelpCommand: true,
		Subcommands:     remoteSubcommands(),
		// Runs only when no subcommand is named.
		Action: func(c *ucli.Context) error {
			if c.NArg() == 0 {
				return usageError("remote needs a command: list, add, remove or tools (see mcpc remote --help)")
			}
			return usageError("remote: unknown command %q: use list, add, remove or tools", c.Args().First())
		},
	}
}

func remoteSubcommands() []*ucli.Command {
	subs := []*ucli.Command{
		{
			Name:  "list",
			Usage: "each server: url without query, transport, status, header names, allowlist, tools; then skipped entries",
			UsageText: `mcpc remote list --workspace DIR [--url URL | --socket PATH] [--scope SCOPE --env-file FILE]

When a gateway serves the workspace's chat (mcpc run --stdio of yours, found
by its status socket, or mcpc run --http given with --url), the list is the
chat's own: its connections, "connecting" while they are made, and the tools
it serves. Otherwise mcpc connects to each server itself and says that it only
probes; that needs --scope and the host secret.

Examples:
   mcpc remote list --workspace /srv/chats/42 --url http://127.0.0.1:8080
   mcpc remote list --workspace /srv/chats/42 --scope 42 --env-file host.env`,
			Flags:  flags(remoteFlags(), liveFlags()),
			Action: remoteList,
		},
		{
			Name:  "add",
			Usage: "try a server (handshake + tools/list), then seal its key and save it; the same name replaces",
			UsageText: `mcpc remote add NAME URL --workspace DIR --scope SCOPE [--tools a,b] [--transport auto|http|sse]
      [--bearer TOKEN | --header "Name: value"... | --no-key] [--force]

Without --bearer, --header or --no-key the key is read from standard input:
a bare token (sent as Authorization: Bearer <token>), "Name: value" lines,
or - for none. On a terminal it is not echoed.

Examples:
   mcpc remote add notes https://mcp.example.com/mcp --workspace /srv/chats/42 --scope 42 < token.txt
   mcpc remote add wiki https://wiki.example.com/sse --transport sse --no-key --workspace /srv/chats/42 --scope 42`,
			Flags:  flags(remoteFlags(), remoteAddFlags()),
			Action: remoteAdd,
		},
		{
			Name:      "remove",
			Usage:     "delete a server's entry (other entries stay byte for byte)",
			UsageText: "mcpc remote remove NAME --workspace DIR\n\nExample:\n   mcpc remote remove notes --workspace /srv/chats/42 --scope 42",
			Flags:     remoteFlags(),
			Action:    remoteRemove,
		},
		{
			Name:  "tools",
			Usage: "without a list: the tools a server offers and which are allowed; with one: set the allowlist (a warning names each tool the server does not offer now)",
			UsageText: `mcpc remote tools NAME [a,b|all] --workspace DIR --scope SCOPE

Examples:
   mcpc remote tools notes --workspace /srv/chats/42 --scope 42             # offered and allowed tools
   mcpc remote tools notes search,get --workspace /srv/chats/42 --scope 42  # allow two tools
   mcpc remote tools notes all --workspace /srv/chats/42 --scope 42         # allow every tool`,
			Flags:  remoteFlags(),
			Action: remoteTools,
		},
	}
	for _, sub := range subs {
		sub.HideHelpCommand = true
	}
	return subs
}

// remoteEnv is what every `mcpc remote` command starts from.
type remoteEnv struct {
	workspace string
	scope     string
	env       *compile.HostEnv
	redactor  *redact.Redactor // deny-listed host values
}

func remoteSetup(c *ucli.Context, needScope bool) (*remoteEnv, error) {
	ws := c.String("workspace")
	if ws == "" {
		return nil, usageError("--workspace DIR is required: the chat's workspace that holds .volcanic/mcp/servers.json")
	}
	scope := c.String("scope")
	if needScope && scope == "" {
		return nil, usageError("--scope SCOPE is required: the chat's session scope, which every sealed entry is bound to")
	}
	if err := checkEnvFlags(c); err != nil {
		return nil, err
	}
	env, _, ds, err := loadHostEnv(c, nil)
	if err != nil {
		return nil, err
	}
	// Deny-listed host values (the secret among them) are never printed.
	var secrets []string
	deny := denylist.Default()
	for _, name := range env.Names() {
		if deny.Denied(name) {
			secrets = append(secrets, env.Value(name))
		}
	}
	re := &remoteEnv{workspace: ws, scope: scope, env: env, redactor: redact.New(secrets)}
	if len(ds) > 0 {
		for i := range ds {
			ds[i].Message = re.redactor.Redact(ds[i].Message)
		}
		printDiagnostics(c.App.ErrWriter, plainText(c), ds, nil, nil)
		if errs, _, _ := diag.Count(ds); errs > 0 {
			return nil, &exitError{code: ExitUsage, msg: "the host environment has errors"}
		}
	}
	return re, nil
}

// key returns the sealing key from the host environment.
func (re *remoteEnv) key() (*remote.Key, string, error) {
	secret, from, err := remote.Secret(re.env.Value)
	if err != nil {
		return nil, "", &exitError{code: ExitUsage, msg: err.Error()}
	}
	k, err := remote.NewKey(secret)
	if err != nil {
		return nil, "", &exitError{code: ExitInternal, msg: err.Error()}
	}
	return k, from, nil
}

// load reads servers.json; an unreadable file is exit 2.
func (re *remoteEnv) load() (*remote.File, error) {
	f, err := remote.Load(re.workspace)
	if err != nil {
		return nil, usageError("%s", re.redactor.Redact(err.Error()))
	}
	return f, nil
}

// edit makes one edit of servers.json with remote.Edit: under the file's
// lock (mcpc config's) it reads the file again, edits it and writes it, so
// that edits at the same time all land. edit's own errors are the
// command's; the file's (unreadable, changed by a writer that takes no
// lock, not writable) are exit 2 or 1.
func (re *remoteEnv) edit(c *ucli.Context, edit func(f *remote.File) ([]byte, error)) error {
	err := remote.Edit(re.workspace, func(f *remote.File) ([]byte, error) {
		if err := re.editable(c, f); err != nil {
			return nil, err
		}
		return edit(f)
	})
	var ee *exitError
	switch {
	case err == nil, errors.As(err, &ee):
		return err
	case errors.Is(err, remote.ErrChanged):
		return &exitError{code: ExitProblems, msg: err.Error()}
	}
	return usageError("%s", re.redactor.Redact(err.Error()))
}

// saveEntry seals s with its headers and writes it into servers.json,
// replacing an entry of the same name (atomically, other entries byte for
// byte). It returns whether it replaced one.
func saveEntry(c *ucli.Context, re *remoteEnv, key *remote.Key, s remote.Server, headers remote.Headers) (replaced bool, err error) {
	err = re.edit(c, func(f *remote.File) ([]byte, error) {
		replaced = len(f.Find(s.Name)) > 0
		return re.withSealed(f, key, s, headers)
	})
	return replaced, err
}

// withSealed is f with s sealed with its headers in place of the entry of
// that name (or after the others).
func (re *remoteEnv) withSealed(f *remote.File, key *remote.Key, s remote.Server, headers remote.Headers) ([]byte, error) {
	sealed, err := key.Seal(re.scope, s, headers)
	if err != nil {
		return nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	data, err := f.WithEntry(s, sealed)
	if err != nil {
		return nil, &exitError{code: ExitProblems, msg: err.Error()}
	}
	return data, nil
}

// sealingEdit prepares an edit that seals: the workspace with scope and
// secret, the key, and the file, refused when it cannot be edited.
func sealingEdit(c *ucli.Context) (re *remoteEnv, key *remote.Key, from string, f *remote.File, err error) {
	if re, err = remoteSetup(c, true); err != nil {
		return
	}
	if key, from, err = re.key(); err != nil {
		return
	}
	if f, err = re.load(); err != nil {
		return
	}
	err = re.editable(c, f)
	return
}

// editable refuses a file that cannot be edited, showing why.
func (re *remoteEnv) editable(c *ucli.Context, f *remote.File) error {
	if f.Problem == "" {
		return nil
	}
	printDiagnostics(c.App.ErrWriter, plainText(c), f.Diagnostics, f.Sources(re.redactor.Redact), nil)
	return &exitError{code: ExitProblems, msg: fmt.Sprintf("%s is left untouched: fix the problem above or delete the file", f.Path)}
}

// interrupted returns a context cancelled by Ctrl-C.
func interrupted() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

func remoteList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usageError("list takes no arguments, got %q", c.Args().First())
	}
	ws := c.String("workspace")
	if ws == "" {
		return usageError("--workspace DIR is required: the chat's workspace that holds .volcanic/mcp/servers.json")
	}
	live, why, err := liveRemote(c, ws)
	if err != nil {
		return err
	}
	if live != nil {
		return printLiveList(c, ws, live)
	}
	re, err := remoteSetup(c, true)
	if err != nil {
		return err
	}
	f, err := re.load()
	if err != nil {
		return err
	}
	secret, _, _ := remote.Secret(re.env.Value)
	m, err := remoteset.New(re.workspace, re.scope, remoteset.Options{Secret: secret, Dial: dialOptions()}, remoteset.Hooks{})
	if err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	defer m.Close()
	ctx, stop := interrupted()
	defer stop()
	l, err := m.List(ctx, nil)
	if err != nil {
		return &exitError{code: ExitProblems, msg: "interrupted"}
	}
	// servers.json is the agent's to write: every value is escaped.
	red := func(s string) string { return term.Escape(re.redactor.Redact(m.Redact(s))) }
	fmt.Fprintf(c.App.ErrWriter, "probing: %s; these are mcpc's own connections, not the chat's (which may still be connecting, and skips a remote tool whose name a local tool has)\n", red(why))
	if !f.Exists {
		fmt.Fprintf(c.App.Writer, "no remote servers: %s does not exist\n", f.Path)
		return nil
	}
	printRemoteList(c, red, remote.Path(re.workspace), l.Servers, l.Skipped, l.FileProblem)
	for _, warn := range l.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s [%s]\n", red(warn.Message), red(warn.Rule))
	}
	return nil
}

// printLiveList prints a running chat's own remote servers, as its
// gateway reports them (redacted there).
func printLiveList(c *ucli.Context, ws string, live *liveChat) error {
	red := term.Escape
	if live.remote == nil {
		fmt.Fprintf(c.App.Writer, "no remote servers: chat %s of %s connects none (the gateway runs without remote servers)\n", red(live.id), red(live.where))
		return nil
	}
	fmt.Fprintf(c.App.ErrWriter, "live: chat %s of %s, session scope %q: the chat's own connections and tools\n", red(live.id), red(live.where), red(live.remote.Scope))
	if s := c.String("scope"); s != "" && s != live.remote.Scope {
		fmt.Fprintf(c.App.ErrWriter, "warning: --scope %q is not the chat's session scope %q: entries sealed for %q do not open in this chat\n", red(s), red(live.remote.Scope), red(s))
	}
	if live.remote.Disabled != "" {
		fmt.Fprintf(c.App.Writer, "no remote servers: %s\n", red(live.remote.Disabled))
		return nil
	}
	file := live.remote.File
	if file == "" {
		file = remote.Path(ws)
	}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) && len(live.remote.Servers) == 0 && len(live.remote.Skipped) == 0 {
		fmt.Fprintf(c.App.Writer, "no remote servers: %s does not exist\n", red(file))
		return nil
	}
	printRemoteList(c, red, file, live.remote.Servers, live.remote.Skipped, live.remote.FileProblem)
	return nil
}

// printRemoteList is the listing of /mcp_list: each server's url without
// query, transport, state, header names, allowlist and the tools in use
// (its ToolNames), then the skipped entries.
func printRemoteList(c *ucli.Context, red func(string) string, file string, servers []remoteset.ServerStatus, skipped []remoteset.Skipped, fileProblem string) {
	w := c.App.Writer
	if len(servers) == 0 && len(skipped) == 0 && fileProblem == "" {
		fmt.Fprintf(w, "no remote servers in %s\n", red(file))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range servers {
		transport := s.Transport
		if s.Transport == remote.TransportAuto && s.Connected != "" {
			transport += " (" + s.Connected + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", red(s.Name), red(s.URL), red(transport), red(s.State))
	}
	tw.Flush()
	for _, s := range servers {
		fmt.Fprintf(w, "\n%s\n", red(s.Name))
		headers := "none"
		if len(s.HeaderNames) > 0 {
			headers = strings.Join(s.HeaderNames, ", ")
		}
		fmt.Fprintf(w, "  headers:   %s\n", red(headers))
		allow := "all tools"
		if s.Allowlist != nil {
			allow = strings.Join(s.Allowlist, ", ")
		}
		fmt.Fprintf(w, "  allowlist: %s\n", red(allow))
		if len(s.Missing) > 0 {
			fmt.Fprintf(w, "  not offered by the server: %s\n", red(strings.Join(s.Missing, ", ")))
		}
		if s.Phase == remoteset.Connected {
			tools := "none"
			if len(s.ToolNames) > 0 {
				tools = strings.Join(s.ToolNames, ", ")
			}
			fmt.Fprintf(w, "  tools:     %s\n", red(tools))
		}
	}
	if fileProblem != "" {
		fmt.Fprintf(w, "\nservers.json is not used: %s\n", red(fileProblem))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "\nskipped:\n")
		for _, s := range skipped {
			name := s.Name
			if name == "" {
				name = "(no name)"
			}
			fmt.Fprintf(w, "  %s: %s: %s\n", red(s.Position), red(name), red(s.Reason))
		}
	}
}

// keyFromFlags returns the headers given by --bearer, --header or
// --no-key, or nil when none of them is given.
func keyFromFlags(c *ucli.Context) (remote.Headers, error) {
	n := 0
	for _, f := range []string{"bearer", "header", "no-key"} {
		if c.IsSet(f) {
			n++
		}
	}
	if n > 1 {
		return nil, usageError("give only one of --bearer, --header and --no-key")
	}
	switch {
	case c.IsSet("bearer"):
		h, err := remote.Bearer(c.String("bearer"))
		if err != nil {
			return nil, usageError("--bearer: %v", err)
		}
		return h, nil
	case c.IsSet("header"):
		h := remote.Headers{}
		for i, line := range c.StringSlice("header") {
			if err := h.AddHeader(line); err != nil {
				return nil, usageError("--header (number %d): %v", i+1, err)
			}
		}
		return h, nil
	case c.Bool("no-key"):
		return remote.Headers{}, nil
	}
	return nil, nil
}

// parseToolList reads "a,b" (or "all": nil, every tool).
func parseToolList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "all" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			return nil, fmt.Errorf("%q has an empty tool name: write names separated by commas, as in search,get (or all)", s)
		}
		if seen[t] {
			return nil, fmt.Errorf("tool %q is listed twice", t)
		}
		seen[t] = true
		out = append(out, t)
	}
	return out, nil
}

func remoteAdd(c *ucli.Context) error {
	if c.NArg() != 2 {
		return usageError("add needs NAME and URL, as in: mcpc remote add notes https://mcp.example.com/mcp --workspace DIR --scope SCOPE")
	}
	name, rawURL := c.Args().Get(0), c.Args().Get(1)
	if len(name) == 0 || len(name) > remote.MaxNameLen || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return usageError("NAME %q must be 1 to 20 characters of a-z, 0-9 and -", name)
	}
	problem, sugg, insecure := remote.CheckURL(rawURL)
	if problem != "" {
		msg := "URL " + problem
		if sugg != "" {
			msg += ": " + sugg
		}
		return usageError("%s", msg)
	}
	transport := c.String("transport")
	switch transport {
	case remote.TransportAuto, remote.TransportHTTP, remote.TransportSSE:
	default:
		return usageError("--transport %q: use auto, http or sse", transport)
	}
	var tools []string
	if c.IsSet("tools") {
		var err error
		if tools, err = parseToolList(c.String("tools")); err != nil {
			return usageError("--tools: %v", err)
		}
	}
	headers, err := keyFromFlags(c)
	if err != nil {
		return err
	}
	re, key, _, f, err := sealingEdit(c)
	if err != nil {
		return err
	}
	if headers == nil {
		if headers, err = remote.ReadKey(c.App.Reader, c.App.ErrWriter, name); err != nil {
			return usageError("%v", err)
		}
	}
	s := remote.Server{Name: name, URL: rawURL, Transport: transport, Tools: tools, Auth: remote.AuthHeaders}
	// What the server answers is escaped.
	red := func(msg string) string { return term.Escape(re.redactor.Redact(remote.Redactor(headers).Redact(msg))) }
	errw := c.App.ErrWriter
	if insecure {
		fmt.Fprintf(errw, "warning: %s uses plain http to a host that is not loopback: the key travels unencrypted\n", remote.URLWithoutQuery(rawURL))
	}

	fmt.Fprintf(errw, "trying %s (%s)…\n", remote.URLWithoutQuery(rawURL), transport)
	ctx, stop := interrupted()
	res, perr := remote.Probe(ctx, s, headers, dialOptions())
	wasInterrupted := ctx.Err() != nil
	stop()
	if wasInterrupted {
		return &exitError{code: ExitProblems, msg: "interrupted; nothing was saved"}
	}
	if perr != nil {
		fmt.Fprintf(errw, "%s: unavailable: %s\n", name, red(perr.Error()))
		if !c.Bool("force") {
			return &exitError{code: ExitProblems, msg: "nothing was saved (--force saves it anyway)"}
		}
		fmt.Fprintf(errw, "saving anyway (--force)\n")
	} else {
		var names []string
		offered := map[string]bool{}
		for _, t := range res.Tools {
			names = append(names, t.Name)
			offered[t.Name] = true
		}
		fmt.Fprintf(errw, "%s: connected over %s · %s: %s\n", name, transportName(res.Transport), plural(len(res.Tools), "tool"), red(strings.Join(names, ", ")))
		warnNotOffered(errw, offered, tools)
	}
	replaced, err := saveEntry(c, re, key, s, headers)
	if err != nil {
		return err
	}
	verb := "added"
	if replaced {
		verb = "replaced"
	}
	hn := "no headers"
	if len(headers) > 0 {
		hn = "headers: " + strings.Join(headers.Names(), ", ")
	}
	fmt.Fprintf(c.App.Writer, "%s remote server %s (%s, %s, %s) in %s\n", verb, name, remote.URLWithoutQuery(rawURL), transport, hn, f.Path)
	return nil
}

func transportName(t string) string {
	if t == remote.TransportSSE {
		return "SSE"
	}
	return "Streamable HTTP"
}

func remoteRemove(c *ucli.Context) error {
	if c.NArg() != 1 {
		return usageError("remove needs exactly one server NAME")
	}
	name := c.Args().First()
	re, err := remoteSetup(c, false)
	if err != nil {
		return err
	}
	err = re.edit(c, func(f *remote.File) ([]byte, error) {
		data, n, err := f.Without(name)
		if err != nil {
			return nil, &exitError{code: ExitProblems, msg: err.Error()}
		}
		if n == 0 {
			known := "there are none"
			if names := f.Names(); len(names) > 0 {
				known = "servers: " + strings.Join(names, ", ")
			}
			return nil, usageError("no remote server %q in %s (%s)", name, f.Path, known)
		}
		return data, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "removed remote server %s from %s\n", name, remote.Path(re.workspace))
	return nil
}

// openEntry finds the entry name and opens it; an entry that is invalid or
// does not open is an error (it is never rewritten).
func openEntry(re *remoteEnv, f *remote.File, name string, key *remote.Key, from string) (*remote.Entry, remote.Headers, error) {
	entries := f.Find(name)
	if len(entries) == 0 {
		known := "there are none"
		if names := f.Names(); len(names) > 0 {
			known = "servers: " + strings.Join(names, ", ")
		}
		return nil, nil, usageError("no remote server %q in %s (%s)", name, f.Path, known)
	}
	e := entries[0]
	if !e.Valid() {
		return nil, nil, &exitError{code: ExitProblems, msg: fmt.Sprintf("%s: %s; the entry is skipped and never rewritten: add it again with mcpc remote add", e.Pos, e.Problem)}
	}
	h, err := key.Open(re.scope, e.Server, e.Sealed)
	if err != nil {
		return nil, nil, &exitError{code: ExitProblems, msg: fmt.Sprintf("%s: server %q %s (secret from %s, scope %q); it is never rewritten", e.Pos, name, remote.NotOpenReason, from, re.scope)}
	}
	return e, h, nil
}

func remoteTools(c *ucli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return usageError("tools needs a server NAME and optionally a list: a,b or all")
	}
	name := c.Args().Get(0)
	re, key, from, f, err := sealingEdit(c)
	if err != nil {
		return err
	}
	e, headers, err := openEntry(re, f, name, key, from)
	if err != nil {
		return err
	}
	// What the server answers is escaped.
	red := func(msg string) string { return term.Escape(re.redactor.Redact(remote.Redactor(headers).Redact(msg))) }
	if c.NArg() == 1 {
		ctx, stop := interrupted()
		res, perr := remote.Probe(ctx, e.Server, headers, dialOptions())
		stop()
		if perr != nil {
			return &exitError{code: ExitProblems, msg: fmt.Sprintf("%s: unavailable: %s", name, red(perr.Error()))}
		}
		allow := map[string]bool{}
		for _, t := range e.Tools {
			allow[t] = true
		}
		w := c.App.Writer
		allowed := "every tool is allowed"
		if e.Tools != nil {
			allowed = "allowlist: " + strings.Join(e.Tools, ", ")
		}
		fmt.Fprintf(w, "%s offers %s; %s\n", name, plural(len(res.Tools), "tool"), red(allowed))
		offered := map[string]bool{}
		for _, t := range res.Tools {
			offered[t.Name] = true
			mark := " "
			if e.Tools == nil || allow[t.Name] {
				mark = "*"
			}
			fmt.Fprintf(w, "  %s %s\n", mark, red(t.Name))
		}
		for _, t := range e.Tools {
			if !offered[t] {
				fmt.Fprintf(w, "  ! %s (allowlisted, not offered)\n", red(t))
			}
		}
		return nil
	}
	tools, err := parseToolList(c.Args().Get(1))
	if err != nil {
		return usageError("%v", err)
	}
	// The entry as the file holds it under the lock (another edit may
	// have replaced it since it was read above).
	err = re.edit(c, func(f *remote.File) ([]byte, error) {
		e, headers, err := openEntry(re, f, name, key, from)
		if err != nil {
			return nil, err
		}
		s := e.Server
		s.Tools = tools
		return re.withSealed(f, key, s, headers)
	})
	if err != nil {
		return err
	}
	if tools == nil {
		fmt.Fprintf(c.App.Writer, "%s: every tool is allowed\n", name)
		return nil
	}
	fmt.Fprintf(c.App.Writer, "%s: allowlist set to %s\n", name, strings.Join(tools, ", "))
	// As remote add does: the allowlist is checked against what the server
	// offers now; it is saved either way (a tool may come later).
	ctx, stop := interrupted()
	res, perr := remote.Probe(ctx, e.Server, headers, dialOptions())
	stop()
	if perr != nil {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s: unavailable, the allowlist is not checked: %s\n", name, red(perr.Error()))
		return nil
	}
	offered := map[string]bool{}
	for _, t := range res.Tools {
		offered[t.Name] = true
	}
	warnNotOffered(c.App.ErrWriter, offered, tools)
	return nil
}

// warnNotOffered warns of each allowlisted tool the server does not offer.
func warnNotOffered(w io.Writer, offered map[string]bool, allowlist []string) {
	for _, t := range allowlist {
		if !offered[t] {
			fmt.Fprintf(w, "warning: the server does not offer the allowlisted tool %q\n", t)
		}
	}
}

// remoteValidation validates the servers.json of --workspace for `mcpc
// validate`, with the host secret of the compiled host environment, and
// returns the diagnostics to add, the sources to show them with and a note
// for stderr. Without --workspace it returns the compilation's own.
func remoteValidation(c *ucli.Context, res *compile.Result) ([]diag.Diagnostic, diag.Sources, string, error) {
	ws := c.String("workspace")
	if ws == "" {
		return res.Diagnostics, res.Files, "", nil
	}
	f, err := remote.Load(ws)
	if err != nil {
		return nil, nil, "", usageError("%s", res.Redactor.Redact(err.Error()))
	}
	ds := append([]diag.Diagnostic(nil), res.Diagnostics...)
	if !f.Exists {
		return ds, res.Files, fmt.Sprintf("remote: no %s", f.Path), nil
	}
	scope := c.String("scope")
	v, err := remote.Validate(f, scope, res.Env.Value)
	if err != nil {
		return nil, nil, "", &exitError{code: ExitInternal, msg: err.Error()}
	}
	note := fmt.Sprintf("remote: %s in %s", plural(len(f.Entries), "server"), f.Path)
	switch {
	case f.Problem != "":
		note = fmt.Sprintf("remote: %s is not used: fix the error above", f.Path)
	case v.NoSecret:
		note += "; sealed entries not opened: no " + remote.SecretVar + " or " + remote.FallbackSecretVar + " in the host environment"
	case scope == "":
		note += "; sealed entries not opened: give --scope SCOPE"
	default:
		note += fmt.Sprintf("; sealed entries opened with %s for scope %q", v.OpenedWith, scope)
	}
	ds = append(ds, v.Diagnostics...)
	diag.Sort(ds)
	return ds, sourcesOf(f.Sources(res.Redactor.Redact), res.Files), note, nil
}
