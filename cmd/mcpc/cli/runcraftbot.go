package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// volcanicRunFlags are the flags of mcpc run that only a volcanic plan
// reads: chats, their scopes and limits. A craftbot plan has one set of
// servers for every client; its MCP sessions are capped and expire as a
// volcanic gateway's.
var volcanicRunFlags = []string{"scope", "builtin-tools", "max-chats", "max-processes", "chat-idle-timeout"}

// runCraftbot is mcpc run for a craftbot plan: its actions served as MCP
// tools (mcp_<server>_<tool>) over stdio or HTTP, one process or
// connection per server for every client (runtime.Craftbot).
func runCraftbot(c *ucli.Context, planFile string, planData []byte, p *plan.Plan, stdio bool, addr string, lim limits, minLevel int, deny *denylist.List) error {
	for _, f := range volcanicRunFlags {
		if c.IsSet(f) {
			return usageError("--%s goes with a volcanic plan; --plan %s is a craftbot plan, whose servers every client shares", f, planFile)
		}
	}
	cfg, cfgPath, cfgData, err := craftbotPlanConfig(planFile, p)
	if err != nil {
		return err
	}
	hostEnv, auth, err := gatewayEnv(c, deny)
	if err != nil {
		return err
	}
	logw := &lockedWriter{w: c.App.ErrWriter}
	if w := listenWarning(addr, auth.mcpOpen); w != "" {
		logw.printf("mcpc: warning: %s\n", strings.ReplaceAll(w, "/chats/{id}/mcp", "/mcp"))
	}
	dir := c.String("workspace")
	if !stdio {
		dir = c.String("workspace-root")
	}
	ws, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(ws, 0o700)
	}
	if err != nil {
		return usageError("%s: %v", dir, unwrapPath(err))
	}

	guard := startGuard(logw)
	waitOnExit := true // as in runAction
	defer func() {
		if waitOnExit {
			guard.close()
		}
	}()
	cb, err := runtime.NewCraftbot(p, runtime.CraftbotOptions{
		Env: hostEnv, Config: cfg.EnvValue, Workspace: ws, Secrets: auth.secrets(), Version: Version,
		Remote: transport.RemoteOptions{Transport: dialOptions().Transport},
		Log: func(e runtime.LogEntry) {
			if levelRank(e.Level) < minLevel {
				return
			}
			where := ""
			if e.Stderr {
				where = term.Escape(e.Server) + " stderr: "
			}
			logw.printf("mcpc: %s: %s%s\n", strings.ToLower(e.Level), where, term.Escape(e.Message))
		},
	})
	if err != nil {
		return &exitError{code: ExitProblems, msg: err.Error()}
	}
	defer func() {
		if waitOnExit {
			cb.Close()
		}
	}()

	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	sd := &shutdown{grace: lim.grace, done: make(chan struct{})}
	if c.Bool("watch") {
		w, err := startCraftbotWatch(ctx, c, craftbotSources{plan: planFile, planData: planData, config: cfgPath, configData: cfgData}, cb, deny, logw)
		if err != nil {
			return err
		}
		defer w.Close() // first of all: a reload in progress ends before the runtime closes
	}
	stopOnSignal := context.AfterFunc(ctx, func() {
		sd.start()
		cb.Close()
		close(sd.done)
	})
	logw.printf("mcpc: craftbot plan: %s (%d enabled), auto_connect %s; servers run in %s\n",
		plural(len(p.Servers), "server"), enabledCount(p), onOff(p.AutoConnect == nil || *p.AutoConnect), ws)
	cb.Start()
	if stdio {
		err = serveCraftbotStdio(ctx, c, cb, ws, logw)
	} else {
		err = serveCraftbotHTTP(ctx, addr, auth, cb, runtime.CraftbotHTTPOptions{
			MaxSessions: lim.maxSessions, MaxSessionsPerChat: lim.maxPerChat, SessionIdleTimeout: lim.sessionIdle, BodyTimeout: lim.bodyTimeout}, logw, sd)
	}
	if err != nil {
		return err
	}
	cb.CloseSessions()
	if stopOnSignal() {
		cb.Close() // no signal: the stdio client went away
	} else if !sd.wait() {
		waitOnExit = false
		logw.printf("mcpc: the shutdown grace (%s) passed before every server process stopped; exiting anyway\n", lim.grace)
		return &exitError{code: ExitInternal}
	}
	logw.printf("mcpc: stopped; %s\n", gone(cb.Status().EscapedProcesses, guard.close()))
	return nil
}

// craftbotPlanConfig reads the config file a craftbot plan was compiled
// from (its source of kind config): the plan holds references to its env
// values, which are read from it at launch. It returns the file's path as
// found and its text too (mcpc run --watch watches it).
func craftbotPlanConfig(planFile string, p *plan.Plan) (*craftbot.Config, string, []byte, error) {
	path, err := craftbotConfigPath(planFile, p)
	if err != nil {
		return nil, "", nil, err
	}
	data, err := inputfile.Read(path) // craftbot.Check drops the byte order mark
	if err != nil {
		return nil, "", nil, usageError("--plan %s: cannot read its config file %s, where the servers' env values are read at launch: %v", planFile, path, unwrapPath(err))
	}
	cfg, _, err := craftbot.Check(path, data, craftbot.Options{})
	if err != nil {
		return nil, "", nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	return cfg, path, data, nil
}

// craftbotConfigPath is the config file a craftbot plan names in its
// sources. A relative path is taken from the current directory, else from
// the plan file's.
func craftbotConfigPath(planFile string, p *plan.Plan) (string, error) {
	path := ""
	for _, s := range p.Sources {
		if s.Kind == "config" {
			path = s.Path
		}
	}
	if path == "" {
		return "", usageError("--plan %s names no config file (sources): write the plan again with mcpc plan --profile craftbot", planFile)
	}
	if !filepath.IsAbs(path) {
		if _, err := os.Stat(path); err != nil {
			if alt := filepath.Join(filepath.Dir(planFile), path); regularFile(alt) {
				path = alt
			}
		}
	}
	return path, nil
}

func regularFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func enabledCount(p *plan.Plan) int {
	n := 0
	for _, s := range p.Servers {
		if s.Enabled {
			n++
		}
	}
	return n
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// serveCraftbotStdio serves the actions on standard input and output until
// the client closes stdin or a signal arrives; GET /status answers on the
// owner-only status socket of the workspace.
func serveCraftbotStdio(ctx context.Context, c *ucli.Context, cb *runtime.Craftbot, ws string, logw *lockedWriter) error {
	if sock, closeSock, err := listenStatusSocket(cb.Handler(runtime.CraftbotHTTPOptions{}), ws); err != nil {
		logw.printf("mcpc: warning: no status socket (mcpc status cannot read this gateway): %s\n", err)
	} else {
		defer closeSock()
		logw.printf("mcpc: status: mcpc status --socket %s\n", sock)
	}
	in := c.App.Reader
	if f, ok := in.(*os.File); ok && f == os.Stdin {
		if pf, done, ok := transport.PollableInput(f, os.Stdout, os.Stderr); ok {
			defer done()
			in = pf
		}
	}
	err := cb.ServeTransport(ctx, &transport.LineTransport{Reader: in, Writer: c.App.Writer})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		logw.printf("mcpc: the stdio session ended: %s\n", term.Escape(cb.Redact(err.Error())))
	}
	return nil
}

// serveCraftbotHTTP serves /mcp and GET /status until a signal arrives.
func serveCraftbotHTTP(ctx context.Context, addr string, auth gatewayAuth, cb *runtime.Craftbot, opts runtime.CraftbotHTTPOptions, logw *lockedWriter, sd *shutdown) error {
	ln, err := listenGateway(addr)
	if err != nil {
		return err
	}
	removeTokens, err := writeTokenFiles(auth, ln.Addr(), "/mcp", logw)
	if err != nil {
		ln.Close()
		return err
	}
	defer removeTokens()
	opts.AdminToken, opts.MCPToken = auth.admin, auth.mcp
	srv := &http.Server{Handler: cb.Handler(opts), ReadHeaderTimeout: httpReadHeaderTimeout, IdleTimeout: httpIdleTimeout}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	where, status := servingWhere(ln, "/mcp", "/chats/{id}/mcp")
	logw.printf("mcpc: serving the craftbot plan %s, the same servers (status: %s)\n", where, status)
	select {
	case <-ctx.Done():
	case err := <-served:
		return &exitError{code: ExitInternal, msg: "the HTTP server stopped: " + err.Error()}
	}
	logw.printf("mcpc: stopping\n")
	cb.CloseSessions()
	sctx, cancel := context.WithDeadline(context.Background(), sd.deadline())
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}

// craftbotStatus prints the status of a gateway that runs a craftbot plan
// (its GET /status says profile craftbot): every server, its state and
// its actions; done is false for any other gateway.
func craftbotStatus(c *ucli.Context, where string, raw []byte, format string) (done bool, err error) {
	var st runtime.CraftbotStatus
	if json.Unmarshal(raw, &st) != nil || st.Profile != plan.ProfileCraftbot {
		return false, nil
	}
	if c.String("chat") != "" || c.NArg() > 0 {
		return true, usageError("%s runs a craftbot plan: it has no chats, and mcpc status shows every server", where)
	}
	if format == "json" {
		return true, printJSON(c.App.Writer, st)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "craftbot plan, auto_connect %s: %s served\n", onOff(st.AutoConnect), plural(st.Actions, "action"))
	for _, s := range st.Servers {
		where := s.Transport
		if s.URL != "" {
			where += " " + s.URL
		}
		fmt.Fprintf(&b, "  %s (%s): %s · %s\n", term.Escape(s.Name), term.Escape(where), term.Escape(s.State), plural(s.Tools, "action"))
	}
	_, err = io.WriteString(c.App.Writer, b.String())
	return true, err
}
