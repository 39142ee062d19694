package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/diag"
	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/compile/node"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/policies/denylist"
	"github.com/mcpc-dev/mcpc/remote"
	"github.com/mcpc-dev/mcpc/report"
	"github.com/mcpc-dev/mcpc/runtime"
)

// logLevels are the .NET log levels, lowest first; stderrLevel and
// --log-level use them.
var logLevels = []string{"Trace", "Debug", "Information", "Warning", "Error", "Critical", "None"}

func levelRank(level string) int {
	for i, l := range logLevels {
		if strings.EqualFold(l, level) {
			return i
		}
	}
	return -1
}

// shutdownGrace bounds how long HTTP requests in progress may take to end
// after a signal, before their connections are closed.
const shutdownGrace = 5 * time.Second

func runCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "run",
		Usage: "run a plan as an MCP gateway: one chat over stdio, or one chat per /chats/{id}/mcp over HTTP",
		UsageText: `mcpc run --plan FILE --stdio --workspace DIR [--scope SCOPE] [--env-file FILE] [--env KEY=VALUE]
   mcpc run --plan FILE --http 127.0.0.1:PORT --workspace-root DIR [--admin-token-env NAME]

Each chat gets its own server processes, started by its first call to them;
${env:NAME} resolves against mcpc's environment overlaid by --env-file and --env.
A server tool named like one of the host's built-in tools (--builtin-tools, as for
mcpc tools) is not served.
Each chat also connects to the remote servers of its DIR/.volcanic/mcp/servers.json
(mcpc remote add) whose entries are sealed for its session scope: --scope with --stdio
(without it the chat uses no remote servers), the chat id over HTTP. Their tools are
named <server>__<tool>; MCP_ENCRYPTION_SECRET (else TELEGRAM_BOT_TOKEN) opens the entries.
Over HTTP: POST/GET/DELETE /chats/{id}/mcp (Streamable HTTP; id of 1-64 A-Z a-z 0-9 _ -,
workspace DIR/{id}), GET /status, POST /chats/{id}/reset, POST /chats/{id}/servers/{name}/restart.
SIGINT, SIGTERM, SIGHUP (the terminal went away) or SIGQUIT stops every server
process and exits 0.

Examples:
   mcpc plan --appsettings appsettings.json -o plan.json
   mcpc run --plan plan.json --stdio --workspace /srv/chats/42
   mcpc run --plan plan.json --stdio --workspace /srv/chats/42 --scope 42 --env-file host.env
   mcpc run --plan plan.json --http 127.0.0.1:8080 --workspace-root /srv/chats
   mcpc run --plan plan.json --http 0.0.0.0:8080 --workspace-root /srv/chats --admin-token-env MCPC_ADMIN_TOKEN`,
		Flags: flags([]ucli.Flag{
			&ucli.StringFlag{Name: "plan", Usage: "the plan `FILE` to run (written by mcpc plan -o)"},
			&ucli.BoolFlag{Name: "stdio", Usage: "serve one chat over standard input and output (needs --workspace)"},
			&ucli.StringFlag{Name: "workspace", Usage: "with --stdio: the chat's workspace `DIR` (created if missing)"},
			&ucli.StringFlag{Name: "scope", Usage: "with --stdio: the chat's session `SCOPE`, which its remote servers (servers.json) are sealed for; without it the chat uses no remote servers"},
			&ucli.StringFlag{Name: "http", Usage: "serve a chat per /chats/{id}/mcp on `ADDR` (host:port; loopback unless --admin-token-env)"},
			&ucli.StringFlag{Name: "workspace-root", Usage: "with --http: chat {id} works in `DIR`/{id}, created on first use"},
			&ucli.StringFlag{Name: "admin-token-env", Usage: "with --http: the host variable `NAME` holding the token that GET /status and POST …/reset, …/restart require; allows a non-loopback address"},
			denyListFlag(),
			&ucli.StringFlag{Name: "builtin-tools", Value: strings.Join(naming.DefaultBuiltins, ","), Usage: "the host's built-in tool `NAMES`, comma-separated (empty: none); a server tool with one of these names is not served"},
			&ucli.StringFlag{Name: "log-level", Value: "Information", Usage: "lowest `LEVEL` logged on stderr: " + strings.Join(logLevels, "|")},
		}, hostEnvFlags(), formatFlags()),
		Action: runAction,
	}
}

func runAction(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usageError("run takes no arguments, got %q", c.Args().First())
	}
	planFile := c.String("plan")
	stdio, addr := c.Bool("stdio"), c.String("http")
	switch {
	case planFile == "":
		return usageError("run needs --plan FILE (write one with mcpc plan -o FILE)")
	case stdio == (addr != ""):
		return usageError("run needs exactly one of --stdio (with --workspace DIR) or --http ADDR (with --workspace-root DIR)")
	case stdio && c.String("workspace") == "":
		return usageError("--stdio needs --workspace DIR: the chat's workspace")
	case stdio && (c.String("workspace-root") != "" || c.String("admin-token-env") != ""):
		return usageError("--workspace-root and --admin-token-env go with --http, not --stdio")
	case !stdio && c.IsSet("scope"):
		return usageError("--scope goes with --stdio; over --http the session scope of chat {id} is its id")
	case stdio && c.IsSet("scope") && c.String("scope") == "":
		return usageError("--scope is empty: give the session scope the remote servers were added with (mcpc remote add … --scope SCOPE)")
	case !stdio && c.String("workspace-root") == "":
		return usageError("--http needs --workspace-root DIR: chat {id} works in DIR/{id}")
	case !stdio && c.String("workspace") != "":
		return usageError("--workspace goes with --stdio; with --http use --workspace-root DIR")
	}
	minLevel := levelRank(c.String("log-level"))
	if minLevel < 0 {
		return usageError("--log-level %q: use one of %s", c.String("log-level"), strings.Join(logLevels, ", "))
	}
	if err := checkEnvFlags(c); err != nil {
		return err
	}
	var deny *denylist.List
	if f := c.String("deny-list"); f != "" {
		l, err := denylist.Load(f)
		if err != nil {
			return usageError("%v", err)
		}
		deny = l
	}
	format := c.String("format")
	if _, err := report.New(format, report.Options{}); err != nil {
		return usageError("--format: %v", err)
	}

	// The plan: refused with positioned diagnostics before anything starts.
	data, err := inputfile.Read(planFile)
	if err != nil {
		return usageError("cannot read --plan %s: %v", planFile, unwrapPath(err))
	}
	data = inputfile.TrimBOM(data)
	plan, ds := compile.ReadPlan(planFile, data)
	if plan == nil {
		src := sources{planFile: node.NewLineIndex(planFile, data)}
		if err := printRunDiagnostics(c, src, ds); err != nil {
			return err
		}
		return &exitError{code: ExitProblems, msg: "nothing started: the plan is not valid (" + report.Summary(ds) + ")"}
	}

	// The host environment, as for mcpc plan.
	envOpts := compile.HostEnvOptions{CleanEnv: c.Bool("clean-env"), EnvFiles: c.StringSlice("env-file"), Env: c.StringSlice("env"), DenyList: deny}
	if !envOpts.CleanEnv {
		envOpts.Environ = environ()
	}
	env, files, ds, err := compile.LoadHostEnv(envOpts)
	if err != nil {
		return usageError("%v", err)
	}
	if len(ds) > 0 {
		if err := printRunDiagnostics(c, files, ds); err != nil {
			return err
		}
		if errs, _, _ := diag.Count(ds); errs > 0 {
			return &exitError{code: ExitProblems, msg: "nothing started: fix the host environment above"}
		}
	}
	hostEnv := runtime.HostEnv{Vars: map[string]string{}, Deny: deny}
	for _, name := range env.Names() {
		hostEnv.Vars[name] = env.Value(name)
	}

	var token string
	if name := c.String("admin-token-env"); name != "" {
		token = hostEnv.Vars[name]
		if token == "" {
			return usageError("--admin-token-env %s: %s is not set or empty in the host environment", name, name)
		}
		// The gateway's own credential: no server inherits it, whatever its
		// name (the deny-list knows only the usual secret names).
		delete(hostEnv.Vars, name)
	}
	if addr != "" {
		if err := checkListenAddr(addr, token != ""); err != nil {
			return err
		}
	}

	logw := &lockedWriter{w: c.App.ErrWriter}
	host, err := runtime.NewHost(plan, runtime.HostOptions{
		Env:      hostEnv,
		Builtins: builtinTools(c),
		Secrets:  []string{token},
		// Every chat's remote servers (servers.json of its workspace). The
		// secret that opens them is the host environment's.
		Remote: &runtime.RemoteOptions{Dial: dialOptions()},
		Log: func(e runtime.LogEntry) {
			if levelRank(e.Level) < minLevel {
				return
			}
			where := ""
			if e.Chat != "" {
				where = "chat " + e.Chat + ": "
			}
			if e.Stderr {
				where += e.Server + " stderr: "
			}
			logw.printf("mcpc: %s: %s%s\n", strings.ToLower(e.Level), where, e.Message)
		},
	})
	if err != nil {
		return &exitError{code: ExitProblems, msg: err.Error()}
	}
	defer host.Close()
	gw := runtime.NewGateway(host, runtime.GatewayOptions{Version: Version, AdminToken: token, WorkspaceRoot: c.String("workspace-root")})
	defer gw.Close()

	// Every signal that ends a gateway by default ends it cleanly: the
	// servers are stopped first. SIGHUP comes when the terminal or the
	// session that started mcpc goes away, SIGQUIT from Ctrl-\.
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	if stdio {
		err = serveStdio(ctx, c, host, gw, logw)
	} else {
		err = serveHTTP(ctx, addr, host, gw, logw)
	}
	if err != nil {
		return err
	}
	gw.Close()
	host.Close()
	logw.printf("mcpc: stopped; every server process is gone\n")
	return nil
}

// stopSignals end mcpc run after every server process is stopped.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// builtinTools returns the host's built-in tool names of --builtin-tools:
// comma-separated, empty for none; naming.DefaultBuiltins when not given.
func builtinTools(c *ucli.Context) []string {
	if !c.IsSet("builtin-tools") {
		return nil // naming.DefaultBuiltins
	}
	out := []string{}
	for _, b := range strings.Split(c.String("builtin-tools"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// serveStdio serves one chat on the command's standard input and output
// until the client closes stdin or a signal arrives.
func serveStdio(ctx context.Context, c *ucli.Context, host *runtime.Host, gw *runtime.Gateway, logw *lockedWriter) error {
	ws, err := filepath.Abs(c.String("workspace"))
	if err == nil {
		err = os.MkdirAll(ws, 0o700)
	}
	if err != nil {
		return usageError("--workspace %s: %v", c.String("workspace"), unwrapPath(err))
	}
	scope := c.String("scope")
	chat, err := host.ChatWithScope("stdio", ws, scope)
	if err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	logw.printf("mcpc: serving %s over stdio in %s\n", plural(len(host.ServerNames()), "server"), ws)
	if _, err := os.Stat(remote.Path(ws)); err == nil {
		if scope == "" {
			logw.printf("mcpc: the remote servers of %s are not used: give --scope SCOPE, the session scope they were added with (mcpc remote add … --scope SCOPE)\n", remote.Path(ws))
		} else {
			logw.printf("mcpc: remote servers of %s, session scope %q: connecting\n", remote.Path(ws), scope)
		}
	}
	// The process's own stdin only: what follows changes the process.
	in := c.App.Reader
	if f, ok := in.(*os.File); ok && f == os.Stdin {
		if pf, done, ok := runtime.PollableInput(f, os.Stdout, os.Stderr); ok {
			defer done()
			in = pf
			// One chat's gateway works in short bursts, one message at a
			// time: with several processors, every hand-over between its
			// goroutines wakes another thread, and the idle ones spin and
			// take CPU from the server process it waits for. One processor
			// cut the latency it adds to a call by about a fifth
			// (BenchmarkRunStdioAddedLatency). It needs stdin in the
			// poller: a blocking read would hold the only processor. An
			// operator's own GOMAXPROCS wins.
			if os.Getenv("GOMAXPROCS") == "" {
				defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
			}
		}
	}
	t := &runtime.LineTransport{Reader: in, Writer: c.App.Writer}
	err = gw.ServeTransport(ctx, chat, t)
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		logw.printf("mcpc: the stdio session ended: %s\n", host.Redact(err.Error()))
	}
	return nil
}

// serveHTTP serves a chat per /chats/{id}/mcp until a signal arrives.
func serveHTTP(ctx context.Context, addr string, host *runtime.Host, gw *runtime.Gateway, logw *lockedWriter) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError("--http %s: %v", addr, err)
	}
	srv := &http.Server{Handler: gw, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	logw.printf("mcpc: serving %s at %s/chats/{id}/mcp (status: %s/status)\n", plural(len(host.ServerNames()), "server"), base, base)
	select {
	case <-ctx.Done():
	case err := <-served:
		return &exitError{code: ExitInternal, msg: "the HTTP server stopped: " + err.Error()}
	}
	logw.printf("mcpc: stopping\n")
	gw.Close() // ends the MCP sessions, so that their streams let go
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}

// checkListenAddr refuses a non-loopback address unless an admin token
// protects the admin endpoints.
func checkListenAddr(addr string, haveToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError("--http %q: expected HOST:PORT, such as 127.0.0.1:8080 (%v)", addr, err)
	}
	if haveToken {
		return nil
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "every interface"
	}
	return usageError("--http %s: without --admin-token-env, mcpc binds to loopback only, not %s; use 127.0.0.1:PORT, or put a token in a variable and pass --admin-token-env NAME", addr, shown)
}

// printRunDiagnostics prints diagnostics on stderr in --format.
func printRunDiagnostics(c *ucli.Context, src diag.Sources, ds []diag.Diagnostic) error {
	p, err := report.New(c.String("format"), report.Options{Sources: src, OneLine: c.Bool("oneline"), ToolVersion: Version})
	if err != nil {
		return usageError("--format: %v", err)
	}
	return p.Print(c.App.ErrWriter, ds)
}

// sources shows lines of files read whole (the plan) under diagnostics.
type sources map[string]*node.LineIndex

func (s sources) Line(file string, n, col int) (string, int, bool) {
	ix := s[file]
	if ix == nil {
		return "", 0, false
	}
	line, ok := ix.Line(n)
	return line, col, ok
}

// lockedWriter serializes log lines from many goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}
