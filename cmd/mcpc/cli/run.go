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
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/supervisor"
	"github.com/mcpc-dev/mcpc/runtime/transport"
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

// Defaults of mcpc run's limits (docs/decisions/
// 0025-gateway-limits.md).
const (
	defaultMaxChats       = 256
	defaultMaxSessions    = 1024
	defaultMaxPerChat     = 16
	defaultMaxProcesses   = 256
	defaultChatIdle       = 30 * time.Minute
	defaultSessionIdle    = 30 * time.Minute
	defaultShutdownGrace  = 5 * time.Second
	defaultBodyTimeout    = gateway.DefaultBodyTimeout
	httpReadHeaderTimeout = 10 * time.Second
	httpIdleTimeout       = 2 * time.Minute
	minTokenLength        = 16
	guardCommandName      = "internal-guard"
)

// runGuard says whether mcpc run starts the process guard (Linux): the
// mcpc binary re-executed as its watchdog. Tests that call Run in-process
// turn it off, since the test binary cannot be re-executed as mcpc.
var runGuard = true

func runCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "run",
		Usage: "run a plan as an MCP gateway: one chat over stdio, or one chat per /chats/{id}/mcp over HTTP",
		UsageText: `mcpc run --plan FILE --stdio --workspace DIR [--scope SCOPE] [--env-file FILE] [--env KEY=VALUE]
   mcpc run --plan FILE --http (127.0.0.1:PORT | unix:PATH) --workspace-root DIR [--admin-token-env NAME] [--mcp-token-env NAME | --mcp-no-auth]

Each chat gets its own server processes, started by its first call to them;
with --start-early, by its client's initialize instead (the host does not do that:
a process runs for every chat that connects, called or not, until its
idleTimeoutSeconds pass without a call), and the first chat's processes list the
tools for every chat instead of a discovery in a temporary directory.
${env:NAME} resolves against mcpc's environment overlaid by --env-file and --env.
A server tool named like one of the host's built-in tools (--builtin-tools, as for
mcpc tools) is not served.
A craftbot plan (mcpc plan --profile craftbot) is served as its actions, mcp_<server>_<tool>:
one process or connection per server, shared by every client; auto_connect says whether
they connect at startup or on first use (its env values are read from its config file).
Each chat also connects to the remote servers of its DIR/.volcanic/mcp/servers.json
(mcpc remote add) whose entries are sealed for its session scope: --scope with --stdio
(without it the chat uses no remote servers), the chat id over HTTP. Their tools are
named <server>__<tool>; MCP_ENCRYPTION_SECRET (else TELEGRAM_BOT_TOKEN) opens the entries.
Over HTTP: POST/GET/DELETE /chats/{id}/mcp (Streamable HTTP; id of 1-64 A-Z a-z 0-9 _ -,
workspace DIR/{id}), GET /status, GET /chats/{id}/servers/{name}, POST /chats/{id}/reset,
POST /chats/{id}/servers/{name}/restart (mcpc status reads them). With --stdio the same
admin endpoints answer on an owner-only unix socket (its path is logged; mcpc status
--workspace DIR finds it).
Over HTTP every request needs a bearer token (Authorization: Bearer TOKEN): the admin
endpoints the admin token, /chats/{id}/mcp the MCP token, each from the host variable
--admin-token-env / --mcp-token-env names, else generated for the run and kept, while it
runs, in a 0600 file of your runtime directory ($XDG_RUNTIME_DIR/mcpc, else
$TMPDIR/mcpc-UID, which must be yours and closed to others): the log names the files,
never the tokens; mcpc status and mcpc ui --gateway read the admin token's file.
--mcp-no-auth leaves /chats/{id}/mcp open to every local user (a warning says so).
--http unix:PATH listens on a unix socket only you can connect to (0600, removed at exit;
a stale one is replaced, one in use is not): mcpc status --socket PATH reads it.
A chat and its workspace are created by an initialize request only; chats and sessions
end after --chat-idle-timeout / --session-idle-timeout without requests (the workspace
stays), and --max-chats and --max-processes cap them (503, or a call error, naming the
limit). --max-sessions and --max-sessions-per-chat cap the sessions: at a cap a new session
takes the place of the one that waited longest (one whose client sent nothing after
initialize, else the longest idle; its client gets 404), 503 only if every session has a
request in flight; a session whose client sends nothing within 10s of the answer to its
initialize is closed. Tokens (--admin-token-env, --mcp-token-env) have at least 16
characters, differ, and no server inherits them.
SIGINT, SIGTERM, SIGHUP (the terminal went away) or SIGQUIT cancels the calls in
flight (their servers get notifications/cancelled), stops every server process and
exits 0 within --shutdown-grace. On Linux a guard process kills what is left of the
servers' process groups if mcpc itself is killed.
With --watch, a change of the --plan file (mcpc plan -o plan.json again) is applied to the
running gateway: removed and disabled servers stop and their tools go at once, changed
servers restart, added ones start, and clients get notifications/tools/list_changed. A
plan that is not valid is logged with its diagnostics and the running plan stays. The plan's
sources (appsettings, env files, settings.json) are watched too when compiling them here, with
this run's environment and --env, --env-file, --clean-env and --deny-list (each one not given:
that of the mcpc.cue found upward from the current directory, as mcpc plan takes it), gives
the plan's digest; an edit of one is compiled and applied. With a craftbot plan, --watch also watches the mcp_config.json the plan names: an edit (/mcp enable,
disable, env; mcpc config …) is compiled as mcpc plan --profile craftbot would, with this
run's host environment, and applied (a server whose env value changed restarts); an edit
that does not compile is logged and the running plan stays.

Examples:
   mcpc plan --appsettings appsettings.json -o plan.json
   mcpc run --plan plan.json --stdio --workspace /srv/chats/42
   mcpc run --plan plan.json --stdio --workspace /srv/chats/42 --scope 42 --env-file host.env
   mcpc run --plan plan.json --stdio --workspace /srv/chats/42 --start-early
   mcpc run --plan plan.json --http 127.0.0.1:8080 --workspace-root /srv/chats
   mcpc run --plan plan.json --http unix:/run/user/1000/mcpc-gw.sock --workspace-root /srv/chats
   mcpc run --plan plan.json --http 0.0.0.0:8080 --workspace-root /srv/chats --admin-token-env MCPC_ADMIN_TOKEN --mcp-token-env MCPC_MCP_TOKEN
   mcpc run --plan plan.json --http 127.0.0.1:8080 --workspace-root /srv/chats --max-chats 64 --chat-idle-timeout 1h
   mcpc run --plan plan.json --http 127.0.0.1:8080 --workspace-root /srv/chats --watch`,
		Flags: flags([]ucli.Flag{
			&ucli.StringFlag{Name: "plan", Usage: "the plan `FILE` to run (written by mcpc plan -o)"},
			&ucli.BoolFlag{Name: "watch", Usage: "apply every change of the --plan file (craftbot: and of its mcp_config.json, compiled again) to the running gateway: removed and disabled servers stop at once, changed ones restart, new ones start, clients are told; a plan or config that is not valid is logged and the running one stays"},
			&ucli.BoolFlag{Name: "stdio", Usage: "serve one chat over standard input and output (needs --workspace)"},
			&ucli.StringFlag{Name: "workspace", Usage: "with --stdio: the chat's workspace `DIR` (created if missing)"},
			&ucli.StringFlag{Name: "scope", Usage: "with --stdio: the chat's session `SCOPE`, which its remote servers (servers.json) are sealed for; without it the chat uses no remote servers"},
			&ucli.StringFlag{Name: "http", Usage: "serve a chat per /chats/{id}/mcp on `ADDR`: HOST:PORT, or unix:PATH for a unix socket only you can connect to"},
			&ucli.StringFlag{Name: "workspace-root", Usage: "with --http: chat {id} works in `DIR`/{id}, created on first use"},
			&ucli.StringFlag{Name: "admin-token-env", Usage: "with --http: the host variable `NAME` holding the token (16 characters or more) that GET /status and POST …/reset, …/restart require; without it one is generated and kept in a 0600 file of your runtime directory (the log names it)"},
			&ucli.StringFlag{Name: "mcp-token-env", Usage: "with --http: the host variable `NAME` holding the bearer token (16 characters or more) every request to /chats/{id}/mcp must carry; without it one is generated and kept in a 0600 file beside the admin token's"},
			&ucli.BoolFlag{Name: "mcp-no-auth", Usage: "with --http: no token for /chats/{id}/mcp: every local user (and, beyond loopback, anyone who reaches the port) can call every server as you"},
			&ucli.IntFlag{Name: "max-chats", Value: defaultMaxChats, Usage: "with --http: the most chats served at once; an initialize for one more gets 503 (0: no limit)"},
			&ucli.IntFlag{Name: "max-sessions", Value: defaultMaxSessions, Usage: "with --http: the most MCP sessions open at once, over all chats; one more takes the place of the longest idle (503 if every one has a request in flight) (0: no limit)"},
			&ucli.IntFlag{Name: "max-sessions-per-chat", Value: defaultMaxPerChat, Usage: "with --http: the most MCP sessions of one chat (craftbot: of one URL) open at once; one more takes the place of the chat's longest idle (0: no limit)"},
			&ucli.BoolFlag{Name: "start-early", Usage: "start each chat's server processes when its client initializes instead of at its first call to them, the first chat's standing for the discoveries (the host does not: this runs a process for every chat that connects, called or not; one without calls stops after its idleTimeoutSeconds)"},
			&ucli.IntFlag{Name: "max-processes", Value: defaultMaxProcesses, Usage: "the most server processes the chats run at once; a call that needs one more fails, naming the limit (0: no limit)"},
			&ucli.DurationFlag{Name: "chat-idle-timeout", Value: defaultChatIdle, Usage: "with --http: a chat without requests for `DURATION` is closed: its sessions end and its processes stop as on a reset; its workspace stays (0: never)"},
			&ucli.DurationFlag{Name: "session-idle-timeout", Value: defaultSessionIdle, Usage: "with --http: an MCP session without requests for `DURATION` is closed; the client initializes again (0: never)"},
			&ucli.DurationFlag{Name: "body-timeout", Value: defaultBodyTimeout, Usage: "with --http: a request body must arrive within `DURATION`, plus 1s per 64 KiB, else 408 and the connection is closed"},
			&ucli.DurationFlag{Name: "shutdown-grace", Value: defaultShutdownGrace, Usage: "on a stop signal, the calls in flight are cancelled at once and mcpc exits within `DURATION`"},
			denyListFlag(),
			&ucli.StringFlag{Name: "builtin-tools", Value: strings.Join(naming.DefaultBuiltins, ","), Usage: "the host's built-in tool `NAMES`, comma-separated (empty: none); a server tool with one of these names is not served"},
			&ucli.StringFlag{Name: "log-level", Value: "Information", Usage: "lowest `LEVEL` logged on stderr: " + strings.Join(logLevels, "|")},
		}, hostEnvFlags(), formatFlags()),
		Action: runAction,
	}
}

func runAction(c *ucli.Context) error {
	s, err := runFlags(c)
	if err != nil {
		return err
	}
	prof, err := readRunPlan(c, s)
	if err != nil {
		return err
	}
	hostEnv, auth, err := gatewayEnv(c, s.deny)
	if err != nil {
		return err
	}
	return runPlan(c, s, prof, hostEnv, auth)
}

// runSettings are mcpc run's flags that every profile reads, checked.
type runSettings struct {
	planFile string
	stdio    bool
	addr     string // --http
	limits   limits
	minLevel int
	deny     *denylist.List
}

// runFlags reads and checks the flags of mcpc run.
func runFlags(c *ucli.Context) (runSettings, error) {
	if c.NArg() > 0 {
		return runSettings{}, usageError("run takes no arguments, got %q", c.Args().First())
	}
	s := runSettings{planFile: c.String("plan"), stdio: c.Bool("stdio"), addr: c.String("http")}
	if err := checkServeFlags(c, s); err != nil {
		return s, err
	}
	if s.addr != "" {
		if err := checkListenAddr(s.addr); err != nil {
			return s, err
		}
	}
	var err error
	if s.limits, err = runLimits(c, s.stdio); err != nil {
		return s, err
	}
	if s.minLevel = levelRank(c.String("log-level")); s.minLevel < 0 {
		return s, usageError("--log-level %q: use one of %s", c.String("log-level"), strings.Join(logLevels, ", "))
	}
	if err := checkEnvFlags(c); err != nil {
		return s, err
	}
	if f := c.String("deny-list"); f != "" {
		if s.deny, err = denylist.Load(f); err != nil {
			return s, usageError("%v", err)
		}
	}
	if _, err := report.New(c.String("format"), report.Options{}); err != nil {
		return s, usageError("--format: %v", err)
	}
	return s, nil
}

// checkServeFlags checks that the flags say where to serve, once.
func checkServeFlags(c *ucli.Context, s runSettings) error {
	stdio := s.stdio
	switch {
	case s.planFile == "":
		return usageError("run needs --plan FILE (write one with mcpc plan -o FILE)")
	case stdio == (s.addr != ""):
		return usageError("run needs exactly one of --stdio (with --workspace DIR) or --http ADDR (with --workspace-root DIR)")
	case stdio && c.String("workspace") == "":
		return usageError("--stdio needs --workspace DIR: the chat's workspace")
	case stdio && (c.String("workspace-root") != "" || c.String("admin-token-env") != "" || c.String("mcp-token-env") != "" || c.Bool("mcp-no-auth")):
		return usageError("--workspace-root, --admin-token-env, --mcp-token-env and --mcp-no-auth go with --http, not --stdio")
	case !stdio && c.IsSet("scope"):
		return usageError("--scope goes with --stdio; over --http the session scope of chat {id} is its id")
	case stdio && c.IsSet("scope") && c.String("scope") == "":
		return usageError("--scope is empty: give the session scope the remote servers were added with (mcpc remote add … --scope SCOPE)")
	case !stdio && c.String("workspace-root") == "":
		return usageError("--http needs --workspace-root DIR: chat {id} works in DIR/{id}")
	case !stdio && c.String("workspace") != "":
		return usageError("--workspace goes with --stdio; with --http use --workspace-root DIR")
	}
	return nil
}

// readRunPlan reads the plan, refused with positioned diagnostics before
// anything starts, and returns what its profile runs.
func readRunPlan(c *ucli.Context, s runSettings) (runProfile, error) {
	data, err := inputfile.ReadText(s.planFile)
	if err != nil {
		return nil, usageError("cannot read --plan %s: %v", s.planFile, unwrapPath(err))
	}
	p, ds := plan.Read(s.planFile, data)
	if p == nil {
		if err := printDiagnostics(c.App.ErrWriter, diagFlags(c), ds, sourcesOf().withFile(s.planFile, data), nil); err != nil {
			return nil, err
		}
		return nil, &exitError{code: ExitProblems, msg: "nothing started: the plan is not valid (" + report.Summary(ds) + ")"}
	}
	if p.Profile == plan.ProfileCraftbot {
		return newCraftbotRun(c, s, p, data)
	}
	return &volcanicRun{p: p, planFile: s.planFile, planData: data}, nil
}

// runProfile is what mcpc run does its own way for a plan's profile: the
// workspace, the log lines, the engine's options and what --watch
// watches. The rest is one path (runPlan).
type runProfile interface {
	plan() *plan.Plan
	// prepare logs the first lines and makes the workspace the servers or
	// the stdio chat run in.
	prepare(c *ucli.Context, s runSettings, auth gatewayAuth, logw *lockedWriter) error
	// engineOptions are the engine's options besides those of every profile.
	engineOptions(c *ucli.Context, s runSettings, auth gatewayAuth, opts gateway.EngineOptions) gateway.EngineOptions
	// started logs what runs, once the engine is built.
	started(logw *lockedWriter)
	// serving logs where a stdio gateway serves, before its status socket.
	servingStdio(eng *gateway.Engine, logw *lockedWriter)
	// afterSocket logs what a stdio chat uses besides (its remote servers).
	afterSocket(logw *lockedWriter)
	// servingHTTP is the line of an HTTP gateway that listens on ln.
	servingHTTP(eng *gateway.Engine, ln net.Listener) string
	// mcpPath is the MCP endpoint the token file names.
	mcpPath() string
	// stdioChat is the workspace and session scope of the stdio chat.
	stdioChat(c *ucli.Context) (workspace, scope string)
	// source is what mcpc run --watch watches and compiles again.
	source(c *ucli.Context, s runSettings, eng *gateway.Engine, logw *lockedWriter) planSource
}

// runPlan runs the plan's engine until a stop signal, or until the stdio
// client goes away.
func runPlan(c *ucli.Context, s runSettings, prof runProfile, hostEnv runtime.HostEnv, auth gatewayAuth) error {
	logw := &lockedWriter{w: c.App.ErrWriter}
	if err := prof.prepare(c, s, auth, logw); err != nil {
		return err
	}
	// The guard first: it must know every server process group. It closes
	// after the engine (defers run last first).
	guard := startGuard(logw)
	// Both close on every way out but one: when the shutdown grace passes,
	// mcpc exits without waiting, and the guard's watchdog kills what is
	// left when the pipe closes with mcpc.
	waitOnExit := true
	defer func() {
		if waitOnExit {
			guard.close()
		}
	}()
	defer gatewayGC()()
	opts := gateway.EngineOptions{Env: hostEnv, Secrets: auth.secrets(), Version: Version, Log: runLog(s.minLevel, logw)}
	opts = prof.engineOptions(c, s, auth, opts)
	if !s.stdio && prof.plan().Profile != plan.ProfileCraftbot {
		defer procsPerChat(&opts.Gateway)()
	}
	eng, err := gateway.NewEngine(prof.plan(), opts)
	if err != nil {
		return &exitError{code: ExitProblems, msg: err.Error()}
	}
	defer func() {
		if waitOnExit {
			eng.Close()
		}
	}()
	defer eng.CloseSessions()
	prof.started(logw)
	// The first listing or call waits for the discoveries (volcanic) or the
	// connects (craftbot, auto_connect): start them now.
	eng.Start()

	// Every signal that ends a gateway by default ends it cleanly. SIGHUP
	// comes when the terminal or the session that started mcpc goes away,
	// SIGQUIT from Ctrl-\. The engine closes at once: the calls in flight
	// are cancelled (their servers are told) rather than waited for, and
	// the servers stop; the sessions and connections end meanwhile.
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	sd := &shutdown{grace: s.limits.grace, done: make(chan struct{})}
	if c.Bool("watch") {
		w, err := startPlanWatch(ctx, prof.source(c, s, eng, logw), eng, logw)
		if err != nil {
			return err
		}
		defer w.Close() // first of all: a reload in progress ends before the engine closes
	}
	stopOnSignal := context.AfterFunc(ctx, func() {
		sd.start()
		eng.Close()
		close(sd.done)
	})
	if s.stdio {
		err = serveStdio(ctx, c, prof, eng, logw)
	} else {
		err = serveHTTP(ctx, s.addr, auth, prof, eng, logw, sd)
	}
	if err != nil {
		return err
	}
	eng.CloseSessions()
	if stopOnSignal() {
		eng.Close() // no signal: the stdio client went away
	} else if !sd.wait() {
		waitOnExit = false
		left := "server processes may be left"
		if guard.running() {
			left = "the guard process kills what is left of the servers' process groups"
		}
		logw.printf("mcpc: the shutdown grace (%s) passed before every server process stopped; exiting anyway: %s\n", s.limits.grace, left)
		return &exitError{code: ExitInternal}
	}
	logw.printf("mcpc: stopped; %s\n", gone(eng.EscapedProcesses(), guard.close()))
	return nil
}

// runLog logs the runtime's entries from level minLevel on.
func runLog(minLevel int, logw *lockedWriter) func(runtime.LogEntry) {
	return func(e runtime.LogEntry) {
		if levelRank(e.Level) < minLevel {
			return
		}
		where := ""
		if e.Chat != "" {
			where = "chat " + e.Chat + ": "
		}
		if e.Stderr {
			where += term.Escape(e.Server) + " stderr: "
		}
		logw.printf("mcpc: %s: %s%s\n", strings.ToLower(e.Level), where, term.Escape(e.Message))
	}
}

// volcanicRun is mcpc run for a volcanic plan: one chat per client, its
// own server processes (runtime.Host and gateway.Gateway).
type volcanicRun struct {
	p         *plan.Plan
	planFile  string
	planData  []byte
	ws, scope string // the stdio chat's workspace and session scope
}

func (v *volcanicRun) plan() *plan.Plan { return v.p }
func (v *volcanicRun) mcpPath() string  { return "/chats/{id}/mcp" }

func (v *volcanicRun) prepare(c *ucli.Context, s runSettings, auth gatewayAuth, logw *lockedWriter) error {
	logw.printf("%s\n", playwrightLine(v.p))
	if w := listenWarning(s.addr, auth.mcpOpen); w != "" {
		logw.printf("mcpc: warning: %s\n", w)
	}
	if !s.stdio {
		return nil
	}
	ws, err := filepath.Abs(c.String("workspace"))
	if err == nil {
		err = os.MkdirAll(ws, 0o700)
	}
	if err != nil {
		return usageError("--workspace %s: %v", c.String("workspace"), unwrapPath(err))
	}
	v.ws, v.scope = ws, c.String("scope")
	return nil
}

func (v *volcanicRun) engineOptions(c *ucli.Context, s runSettings, auth gatewayAuth, opts gateway.EngineOptions) gateway.EngineOptions {
	l := s.limits
	opts.Builtins, opts.MaxProcesses = builtinTools(c), l.maxProcesses
	// Every chat's remote servers (servers.json of its workspace). The
	// secret that opens them is the host environment's.
	opts.Remote = &runtime.RemoteOptions{Dial: dialOptions()}
	opts.Gateway = gateway.GatewayOptions{WorkspaceRoot: c.String("workspace-root"),
		MaxChats: l.maxChats, MaxSessions: l.maxSessions, MaxSessionsPerChat: l.maxPerChat,
		ChatIdleTimeout: l.chatIdle, SessionIdleTimeout: l.sessionIdle, BodyTimeout: l.bodyTimeout,
		StartEarly: c.Bool("start-early")}
	opts.Gateway.AdminToken, opts.Gateway.MCPToken = auth.admin, auth.mcp
	return opts
}

func (v *volcanicRun) started(*lockedWriter) {}

func (v *volcanicRun) stdioChat(*ucli.Context) (string, string) { return v.ws, v.scope }

func (v *volcanicRun) servingStdio(eng *gateway.Engine, logw *lockedWriter) {
	logw.printf("mcpc: serving %s over stdio in %s\n", plural(len(eng.Host().ServerNames()), "server"), v.ws)
}

func (v *volcanicRun) afterSocket(logw *lockedWriter) {
	if _, err := os.Stat(remote.Path(v.ws)); err != nil {
		return
	}
	if v.scope == "" {
		logw.printf("mcpc: the remote servers of %s are not used: give --scope SCOPE, the session scope they were added with (mcpc remote add … --scope SCOPE)\n", remote.Path(v.ws))
	} else {
		logw.printf("mcpc: remote servers of %s, session scope %q: connecting\n", remote.Path(v.ws), v.scope)
	}
}

func (v *volcanicRun) servingHTTP(eng *gateway.Engine, ln net.Listener) string {
	where, status := servingWhere(ln, "/chats/{id}/mcp")
	return fmt.Sprintf("mcpc: serving %s %s (status: %s)\n", plural(len(eng.Host().ServerNames()), "server"), where, status)
}

// shutdown is the time a stop signal gives mcpc run to end.
type shutdown struct {
	grace time.Duration
	once  sync.Once
	at    time.Time     // when the signal came
	done  chan struct{} // closed once the host is closed
}

func (s *shutdown) start() { s.once.Do(func() { s.at = time.Now() }) }

// deadline is when the grace ends.
func (s *shutdown) deadline() time.Time {
	s.start()
	return s.at.Add(s.grace)
}

// wait waits for the host to be closed until the grace ends; false if it
// was not.
func (s *shutdown) wait() bool {
	select {
	case <-s.done: // a select of two ready cases picks either: done first
		return true
	default:
	}
	t := time.NewTimer(time.Until(s.deadline()))
	defer t.Stop()
	select {
	case <-s.done:
		return true
	case <-t.C:
		return false
	}
}

// gone says what is left of the servers' processes, for the last line:
// "every server process is gone" only when that is known. escaped counts
// the processes the runtime found outside their server's process group.
func gone(escaped int, guard supervisor.GuardReport) string {
	if n := len(guard.Survivors); n > 0 {
		return fmt.Sprintf("%s started by servers left their process group and could not be killed; still running: pids %v", processes(n), guard.Survivors)
	}
	switch n := escaped + guard.Orphans; {
	case n == 1:
		return "every server process is gone (1 process had left its server's process group (setsid) and was killed on its own; see above)"
	case n > 1:
		return fmt.Sprintf("every server process is gone (%d processes had left their server's process group (setsid) and were killed on their own; see above)", n)
	}
	return "every server process is gone"
}

// processes counts processes in words.
func processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", n)
}

// limits are mcpc run's bounds, from its flags.
type limits struct {
	maxChats, maxSessions, maxProcesses int
	maxPerChat                          int
	chatIdle, sessionIdle, bodyTimeout  time.Duration
	grace                               time.Duration
}

// runLimits reads and checks the limit flags.
func runLimits(c *ucli.Context, stdio bool) (limits, error) {
	l := limits{maxChats: c.Int("max-chats"), maxSessions: c.Int("max-sessions"), maxProcesses: c.Int("max-processes"), maxPerChat: c.Int("max-sessions-per-chat"),
		chatIdle: c.Duration("chat-idle-timeout"), sessionIdle: c.Duration("session-idle-timeout"),
		bodyTimeout: c.Duration("body-timeout"), grace: c.Duration("shutdown-grace")}
	if stdio {
		for _, f := range []string{"max-chats", "max-sessions", "max-sessions-per-chat", "chat-idle-timeout", "session-idle-timeout", "body-timeout"} {
			if c.IsSet(f) {
				return l, usageError("--%s goes with --http, not --stdio", f)
			}
		}
	}
	for _, f := range []string{"max-chats", "max-sessions", "max-sessions-per-chat", "max-processes"} {
		if c.Int(f) < 0 {
			return l, usageError("--%s %d: use 0 for no limit, or a positive number", f, c.Int(f))
		}
	}
	for _, f := range []string{"chat-idle-timeout", "session-idle-timeout"} {
		if c.Duration(f) < 0 {
			return l, usageError("--%s %s: use 0 for never, or a positive duration such as 30m", f, c.Duration(f))
		}
	}
	for _, f := range []string{"body-timeout", "shutdown-grace"} {
		if c.Duration(f) <= 0 {
			return l, usageError("--%s %s: give a positive duration, such as 5s", f, c.Duration(f))
		}
	}
	return l, nil
}

// takeToken reads the token the host variable named by flag holds, and
// removes it from what servers inherit. A token must have at least
// minTokenLength characters, not blank.
func takeToken(c *ucli.Context, flag string, vars map[string]string) (string, error) {
	name := c.String(flag)
	if name == "" {
		if c.IsSet(flag) {
			return "", usageError("--%s is empty: give the name of the host variable that holds the token", flag)
		}
		return "", nil
	}
	tok := vars[name]
	delete(vars, name)
	switch {
	case strings.TrimSpace(tok) == "":
		return "", usageError("--%s %s: %s is not set or blank in the host environment", flag, name, name)
	case utf8.RuneCountInString(tok) < minTokenLength:
		return "", usageError("--%s %s: the token in %s is shorter than %d characters; use a long random one (say, openssl rand -hex 32)", flag, name, name, minTokenLength)
	}
	return tok, nil
}

// processGuard is the process guard of one mcpc run, if it has one.
type processGuard struct{ g *supervisor.Guard }

// running says whether there is a guard that has not been closed.
func (p *processGuard) running() bool { return p.g != nil }

// close closes the guard once and reports what it found; later calls, and
// a run without a guard, report nothing.
func (p *processGuard) close() supervisor.GuardReport {
	if p.g == nil {
		return supervisor.GuardReport{}
	}
	r := p.g.Close()
	p.g = nil
	return r
}

// startGuard starts the process guard where there is one (Linux), and
// says so on stderr when it cannot.
func startGuard(logw *lockedWriter) *processGuard {
	if !runGuard || goruntime.GOOS != "linux" {
		return &processGuard{}
	}
	exe, err := os.Executable()
	if err == nil {
		var g *supervisor.Guard
		g, err = supervisor.StartGuard(exe, []string{guardCommandName}, func(msg string) { logw.printf("mcpc: warning: %s\n", term.Escape(msg)) })
		if err == nil {
			return &processGuard{g: g}
		}
	}
	logw.printf("mcpc: warning: no process guard (%v): if mcpc is killed, the servers' child processes may outlive it\n", err)
	return &processGuard{}
}

// guardCommand is the process guard's hidden mode (see supervisor.Guard).
func guardCommand() *ucli.Command {
	return &ucli.Command{
		Name:   guardCommandName,
		Usage:  "internal: the process guard of mcpc run (reads the gateway's pipe on stdin)",
		Hidden: true,
		Action: func(c *ucli.Context) error {
			supervisor.RunGuard(c.App.Reader)
			return nil
		},
	}
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

// serveStdio serves one client on the command's standard input and output
// until it closes stdin or a signal arrives; the admin endpoints answer on
// the owner-only status socket of the workspace.
func serveStdio(ctx context.Context, c *ucli.Context, prof runProfile, eng *gateway.Engine, logw *lockedWriter) error {
	ws, scope := prof.stdioChat(c)
	prof.servingStdio(eng, logw)
	if sock, closeSock, err := listenStatusSocket(eng.StatusHandler(), ws); err != nil {
		logw.printf("mcpc: warning: no status socket (mcpc status cannot read this gateway): %s\n", err)
	} else {
		defer closeSock()
		logw.printf("mcpc: status: mcpc status --socket %s\n", sock)
	}
	prof.afterSocket(logw)
	// The process's own stdin only: what follows changes the process.
	in := c.App.Reader
	if f, ok := in.(*os.File); ok && f == os.Stdin {
		if pf, done, ok := transport.PollableInput(f, os.Stdout, os.Stderr); ok {
			defer done()
			in = pf
			// One client's gateway works in short bursts, one message at a
			// time: with several processors, every hand-over between its
			// goroutines wakes another thread, and the idle ones spin and
			// take CPU from the server process it waits for
			// (docs/performance.md). It needs stdin in the poller: a
			// blocking read would hold the only processor. An operator's
			// own GOMAXPROCS wins.
			if os.Getenv("GOMAXPROCS") == "" {
				defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
			}
		}
	}
	err := eng.ServeStdio(ctx, ws, scope, &transport.LineTransport{Reader: in, Writer: c.App.Writer})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		logw.printf("mcpc: the stdio session ended: %s\n", term.Escape(eng.Redact(err.Error())))
	}
	return nil
}

// serveHTTP serves the gateway's endpoints until a signal arrives.
func serveHTTP(ctx context.Context, addr string, auth gatewayAuth, prof runProfile, eng *gateway.Engine, logw *lockedWriter, sd *shutdown) error {
	ln, err := listenGateway(addr)
	if err != nil {
		return err
	}
	removeTokens, err := writeTokenFiles(auth, ln.Addr(), prof.mcpPath(), logw)
	if err != nil {
		ln.Close()
		return err
	}
	defer removeTokens()
	// Headers within ReadHeaderTimeout, bodies at a minimum rate (the
	// gateway's BodyTimeout), idle keep-alive connections closed after
	// IdleTimeout: a client cannot hold a connection by going slow.
	srv := &http.Server{Handler: eng.Handler(), ReadHeaderTimeout: httpReadHeaderTimeout, IdleTimeout: httpIdleTimeout}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logw.printf("%s", prof.servingHTTP(eng, ln))
	select {
	case <-ctx.Done():
	case err := <-served:
		return &exitError{code: ExitInternal, msg: "the HTTP server stopped: " + err.Error()}
	}
	logw.printf("mcpc: stopping\n")
	eng.CloseSessions() // ends the MCP sessions, so that their streams let go
	sctx, cancel := context.WithDeadline(context.Background(), sd.deadline())
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}

// gatewayGOGC is the GOGC of mcpc run: the heap may grow to five times
// what was live at the last collection before the next one.
const gatewayGOGC = 400

// gatewayGC sets the collector of mcpc run to gatewayGOGC, unless the
// operator set GOGC, and returns the function that restores it. A
// gateway's heap is small and its garbage is mostly the go-sdk's decoder
// buffers (32 KiB per decode, several per call): with the default GOGC
// the collector ran every few calls and took about a third of the
// gateway's CPU (docs/performance.md).
func gatewayGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	was := debug.SetGCPercent(gatewayGOGC)
	return func() { debug.SetGCPercent(was) }
}

// adaptProcs lets mcpc run --http size its processors by its chats
// (procsPerChat). Tests that run the gateway inside the test binary turn
// it off: GOMAXPROCS is the whole test process's.
var adaptProcs = true

// procsPerChat makes the gateway use as many processors as it serves
// chats, from one up to the machine's, unless the operator set GOMAXPROCS.
// A chat's traffic is short bursts, one message at a time: with more
// processors than chats, every hand-over between the gateway's goroutines
// wakes another thread, and the idle ones spin, taking CPU from the
// servers (docs/performance.md). The stdio gateway, one client, runs on
// one processor for the same reason. It returns the
// function that restores the processors mcpc started with.
func procsPerChat(opts *gateway.GatewayOptions) (restore func()) {
	if !adaptProcs || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	most := goruntime.GOMAXPROCS(0)
	var restored atomic.Bool
	set := func(chats int) {
		if !restored.Load() {
			goruntime.GOMAXPROCS(max(1, min(chats, most)))
		}
	}
	set(0)
	opts.ChatsChanged = set
	return func() {
		restored.Store(true)
		goruntime.GOMAXPROCS(most)
	}
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

// playwrightLine is the line the host logs at startup about the Playwright
// preset (SPEC §2.3), from the plan: the preset's server is the one named
// playwright that the preset defined; its own arguments, before
// --output-dir, say headless and browser (the extra arguments follow).
func playwrightLine(p *plan.Plan) string {
	for _, s := range p.Servers {
		if s.Name != "playwright" || s.Origin.Source != "preset" || !s.Enabled {
			continue
		}
		mode, browser := "headed", ""
		for i, a := range s.Args {
			if a == "--output-dir" {
				break
			}
			switch {
			case a == "--headless":
				mode = "headless"
			case a == "--browser" && i+1 < len(s.Args):
				browser = s.Args[i+1]
			}
		}
		return fmt.Sprintf("MCP: playwright enabled (%s, %s)", mode, browser)
	}
	return "MCP: playwright disabled (set PLAYWRIGHT_ENABLED=true)"
}

// gatewayEnv reads the host environment as mcpc plan does (its problems
// printed; an error stops the gateway) and takes the gateway's own
// credentials out of it: no server inherits them, whatever their names
// (the deny-list knows only the usual secret names). Over HTTP the tokens
// not given are generated (takeTokens).
func gatewayEnv(c *ucli.Context, deny *denylist.List) (hostEnv runtime.HostEnv, auth gatewayAuth, err error) {
	env, files, ds, err := loadHostEnv(c, deny)
	if err != nil {
		return hostEnv, auth, err
	}
	if len(ds) > 0 {
		if err := printDiagnostics(c.App.ErrWriter, diagFlags(c), ds, files, nil); err != nil {
			return hostEnv, auth, err
		}
		if errs, _, _ := diag.Count(ds); errs > 0 {
			return hostEnv, auth, &exitError{code: ExitProblems, msg: "nothing started: fix the host environment above"}
		}
	}
	hostEnv = runtime.HostEnv{Vars: map[string]string{}, Deny: deny}
	for _, name := range env.Names() {
		hostEnv.Vars[name] = env.Value(name)
	}
	auth, err = takeTokens(c, hostEnv.Vars)
	return hostEnv, auth, err
}
