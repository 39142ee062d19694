package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// volcanicRunFlags are the flags of mcpc run that only a volcanic plan
// reads: chats, their scopes and limits. A craftbot plan has one set of
// servers for every client; its MCP sessions are capped and expire as a
// volcanic gateway's.
var volcanicRunFlags = []string{"scope", "builtin-tools", "max-chats", "max-processes", "chat-idle-timeout"}

// craftbotRun is mcpc run for a craftbot plan: its actions served as MCP
// tools (mcp_<server>_<tool>) over stdio or HTTP, one process or
// connection per server for every client (gateway.Craftbot).
type craftbotRun struct {
	p     *plan.Plan
	files craftbotSources
	cfg   *craftbot.Config
	ws    string // where the stdio servers run
}

// newCraftbotRun refuses the flags a craftbot plan does not read and reads
// the config file its env values come from.
func newCraftbotRun(c *ucli.Context, s runSettings, p *plan.Plan, planData []byte) (*craftbotRun, error) {
	if c.Bool("start-early") {
		// A craftbot plan has no chat processes to start early: one
		// process or connection per server, shared by every client,
		// started by auto_connect or on first use.
		return nil, usageError("--start-early goes with a volcanic plan; --plan %s is a craftbot plan, whose servers every client shares (auto_connect starts them at startup)", s.planFile)
	}
	for _, f := range volcanicRunFlags {
		if c.IsSet(f) {
			return nil, usageError("--%s goes with a volcanic plan; --plan %s is a craftbot plan, whose servers every client shares", f, s.planFile)
		}
	}
	cfg, cfgPath, cfgData, err := craftbotPlanConfig(s.planFile, p)
	if err != nil {
		return nil, err
	}
	return &craftbotRun{p: p, cfg: cfg, files: craftbotSources{plan: s.planFile, planData: planData, config: cfgPath, configData: cfgData}}, nil
}

func (r *craftbotRun) plan() *plan.Plan { return r.p }
func (r *craftbotRun) mcpPath() string  { return "/mcp" }

func (r *craftbotRun) prepare(c *ucli.Context, s runSettings, auth gatewayAuth, logw *lockedWriter) error {
	if w := listenWarning(s.addr, auth.mcpOpen); w != "" {
		logw.printf("mcpc: warning: %s\n", strings.ReplaceAll(w, "/chats/{id}/mcp", "/mcp"))
	}
	dir := c.String("workspace")
	if !s.stdio {
		dir = c.String("workspace-root")
	}
	ws, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(ws, 0o700)
	}
	if err != nil {
		return usageError("%s: %v", dir, unwrapPath(err))
	}
	r.ws = ws
	return nil
}

func (r *craftbotRun) engineOptions(_ *ucli.Context, s runSettings, auth gatewayAuth, opts gateway.EngineOptions) gateway.EngineOptions {
	opts.Config, opts.Workspace = r.cfg.EnvValue, r.ws
	opts.Dial = transport.RemoteOptions{Transport: dialOptions().Transport}
	opts.HTTP = gateway.CraftbotHTTPOptions{AdminToken: auth.admin, MCPToken: auth.mcp,
		MaxSessions: s.limits.maxSessions, MaxSessionsPerChat: s.limits.maxPerChat, SessionIdleTimeout: s.limits.sessionIdle, BodyTimeout: s.limits.bodyTimeout}
	return opts
}

func (r *craftbotRun) started(logw *lockedWriter) {
	logw.printf("mcpc: craftbot plan: %s (%d enabled), auto_connect %s; servers run in %s\n",
		plural(len(r.p.Servers), "server"), enabledCount(r.p), onOff(r.p.AutoConnect == nil || *r.p.AutoConnect), r.ws)
}

func (r *craftbotRun) stdioChat(*ucli.Context) (string, string)    { return r.ws, "" }
func (r *craftbotRun) servingStdio(*gateway.Engine, *lockedWriter) {}
func (r *craftbotRun) afterSocket(*lockedWriter)                   {}

func (r *craftbotRun) servingHTTP(_ *gateway.Engine, ln net.Listener) string {
	where, status := servingWhere(ln, "/mcp", "/chats/{id}/mcp")
	return fmt.Sprintf("mcpc: serving the craftbot plan %s, the same servers (status: %s)\n", where, status)
}

// craftbotPlanConfig reads the config file a craftbot plan was compiled
// from (its source of kind config): the plan holds references to its env
// values, which are read from it at launch. It returns the file's path as
// found and its text too (mcpc run --watch watches it).
func craftbotPlanConfig(planFile string, p *plan.Plan) (*craftbot.Config, string, []byte, error) {
	path, err := craftbot.ConfigPath(planFile, p)
	if err != nil {
		return nil, "", nil, usageError("%v", err)
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
