package runtime

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// The craftbot runtime (SPEC §5): a craftbot plan run on a Host of the
// craftbot profile (profile.go) with one chat that every client shares,
// served as one MCP server whose tools are the actions CraftBot registers
// (mcp_<server>_<tool>, "[MCP:<server>] …"). The host does the rest: one
// connection per server (a process for stdio, a connection for sse and
// websocket), calls, reloads (Host.Apply) and status.

// CraftbotOptions configure a Craftbot runtime. The zero value is ready to
// use but for Config, which a plan whose servers have env values needs.
type CraftbotOptions struct {
	// Env is the host environment: stdio servers inherit it, without its
	// deny-listed variables. Env.Deny nil means the built-in deny-list.
	Env HostEnv
	// Config reads the values of the plan's ${config:KEY} references (the
	// env of mcp_config.json); nil: none.
	Config ConfigLookup
	// Workspace is the working directory of every stdio server process
	// (created when the first one starts); "" means mcpc's own.
	Workspace string
	// Secrets are more known secret values to redact (say, a token).
	Secrets []string
	// Clock measures the call, startup and connect timeouts and the
	// retry; nil means RealClock.
	Clock Clock
	// DiscoveryRetry is the wait before a listing connects again a server
	// whose connect failed, as HostOptions.DiscoveryRetry; 0 means
	// DefaultDiscoveryRetry.
	DiscoveryRetry time.Duration
	// Log, if set, receives what the runtime logs (redacted): connects,
	// failures, deaths and each stderr line of a stdio server.
	Log func(LogEntry)
	// Remote are the options of the sse and websocket connections.
	Remote transport.RemoteOptions
	// BuiltinActions are the host's own action names: a tool whose action
	// takes one of them is not served.
	BuiltinActions []string
	// Version is the version the gateway reports in initialize.
	Version string
	// CallTimeout bounds a call; 0 means DefaultCallTimeout (a craftbot
	// plan has no callTimeoutSeconds: CraftBot sets none per server).
	CallTimeout time.Duration
}

// Craftbot runs a craftbot plan. All methods are safe for concurrent use.
//
// Example:
//
//	cb, err := runtime.NewCraftbot(p, runtime.CraftbotOptions{Config: cfg.EnvValue, Workspace: dir})
//	if err != nil { … }
//	defer cb.Close()
//	cb.Start()                                // auto_connect: connect every enabled server
//	err = cb.ServeTransport(ctx, &mcp.StdioTransport{})
type Craftbot struct {
	h    *Host
	prof *craftbotProfile
	chat *Chat // the one chat of every client
	srv  *mcp.Server

	regMu   sync.Mutex
	actions map[string]string // registered on srv: action name → its server and definition
}

// NewCraftbot builds the runtime of a craftbot plan. Nothing connects
// before Start or the first use.
func NewCraftbot(p *plan.Plan, opts CraftbotOptions) (*Craftbot, error) {
	prof := &craftbotProfile{builtins: opts.BuiltinActions, timeout: opts.CallTimeout, remote: opts.Remote}
	h, err := newHost(p, HostOptions{Env: opts.Env, Secrets: opts.Secrets, Clock: opts.Clock, Log: opts.Log, DiscoveryRetry: opts.DiscoveryRetry}, prof)
	if err != nil {
		return nil, err
	}
	prof.setPlan(h, p, opts.Config)
	ws := opts.Workspace
	if ws == "" {
		ws = "." // mcpc's own
	}
	if ws, err = filepath.Abs(ws); err != nil {
		return nil, err
	}
	c := &Craftbot{h: h, prof: prof, actions: map[string]string{}}
	c.chat = newChat(h, "", ws, "")
	c.chat.serve(craftbotUpstream{h})
	h.shared = c.chat
	h.chats[""] = c.chat
	c.srv = c.newServer(opts.Version)
	h.addToolsListener(c.register)
	return c, nil
}

// Redact replaces every known secret in s with [REDACTED].
func (c *Craftbot) Redact(s string) string { return c.h.Redact(s) }

// Start connects every enabled server in the background, in parallel, when
// the plan says auto_connect; without it servers connect on first use (the
// first tools/list, or a call to one of their actions). Each failure is
// logged and shown in Status; the other servers are served.
func (c *Craftbot) Start() {
	if c.prof.autoConnect.Load() {
		c.h.StartDiscovery()
	}
}

// WaitConnected waits until no server's first connect (or retry) runs,
// and the actions of those that connected are registered (or ctx ends).
func (c *Craftbot) WaitConnected(ctx context.Context) error {
	for _, s := range c.h.servers() {
		s.mu.Lock()
		done := s.done
		if s.state != discRunning {
			done = nil
		}
		s.mu.Unlock()
		if done != nil {
			select {
			case <-done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// register makes the MCP server offer exactly the actions of the host's
// tool table; the SDK tells connected clients
// (notifications/tools/list_changed).
func (c *Craftbot) register() {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	want := map[string]string{}
	table := c.h.currentTable()
	for _, t := range table.list {
		b, _ := json.Marshal(t.Def)
		want[t.Name] = t.Server + "\x00" + string(b)
	}
	var gone []string
	for name, key := range c.actions {
		if want[name] != key {
			gone = append(gone, name)
			delete(c.actions, name)
		}
	}
	if len(gone) > 0 {
		c.srv.RemoveTools(gone...)
	}
	for _, t := range table.list {
		if _, ok := c.actions[t.Name]; !ok && c.addTool(t.Def) {
			c.actions[t.Name] = want[t.Name]
		}
	}
}

// addTool registers one action. The SDK panics on definitions it cannot
// serve; such a tool is logged and left out.
func (c *Craftbot) addTool(def *mcp.Tool) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.h.log("Warning", "", "", "action %q is not served: %v", def.Name, r)
			ok = false
		}
	}()
	name := def.Name
	c.srv.AddTool(def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		// The call's origin: the server's progress goes back to this
		// session, with the client's token (forwardProgress).
		o := &callOrigin{ctx: ctx, progress: req.Params.GetProgressToken()}
		o.session, _ = req.GetSession().(*mcp.ServerSession)
		return callResult(c.Call(withOrigin(ctx, o), name, args))
	})
	return true
}

// CraftbotTool is one action as the runtime serves it.
type CraftbotTool struct {
	Name   string // mcp_<server>_<tool>
	Server string
	Tool   string // the server's name of the tool
}

// Tools returns the actions served now, sorted by name; without
// auto_connect the first call connects the servers first.
func (c *Craftbot) Tools(ctx context.Context) []CraftbotTool {
	tools, _ := c.chat.Tools(ctx)
	out := make([]CraftbotTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, CraftbotTool{Name: t.Name, Server: t.Server, Tool: t.ServerTool})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Call calls the action name with args (anything that encodes as a JSON
// object; nil or JSON null is {}), on the shared chat (Chat.Call).
func (c *Craftbot) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	return c.chat.Call(ctx, name, args)
}

// Apply makes p (with config, where its ${config:KEY} values are read) the
// running plan, as a reload of mcp_config.json does (SPEC §5): Host.Apply,
// with a config value that changed under an unchanged entry restarting
// its server, and, with auto_connect, waiting (until ctx ends) for the
// connects it started, so that when it returns the new plan's actions are
// served.
func (c *Craftbot) Apply(ctx context.Context, p *plan.Plan, config ConfigLookup) (*ApplyResult, error) {
	return c.h.apply(ctx, p, config)
}

// Close ends the MCP sessions, then closes the host (Host.Close). It may
// be called many times; every call returns once the first is done.
func (c *Craftbot) Close() error {
	c.CloseSessions()
	return c.h.Close()
}

// CloseSessions ends every MCP session served (stdio or HTTP); the
// servers keep running.
func (c *Craftbot) CloseSessions() {
	for ss := range c.srv.Sessions() {
		_ = ss.Close()
	}
}

// ServeTransport serves the actions over one MCP transport (such as
// mcp.StdioTransport) until the client disconnects or ctx ends.
func (c *Craftbot) ServeTransport(ctx context.Context, t mcp.Transport) error {
	return c.srv.Run(ctx, validErrors(t))
}

// newServer is the MCP server every client talks to: tools only. A first
// listing connects the servers never tried (and starts again, in the
// background, those whose connect failed at least the retry interval
// ago); a call of an action not served yet first connects the servers it
// may be one of.
func (c *Craftbot) newServer(version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpc", Version: version}, &mcp.ServerOptions{
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		SupportedProtocolVersions: GatewayProtocolVersions(),
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				_, _ = c.h.tools(ctx)
			case "tools/call":
				if name := callName(req); name != "" && c.h.currentTable().byName[name] == nil {
					_, _ = c.h.toolsFor(ctx, name)
				}
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// craftbotUpstream is the shared chat's client side: the progress of a
// call goes back to the session that made it (forwardProgress); a
// craftbot gateway passes nothing else on.
type craftbotUpstream struct{ h *Host }

func (u craftbotUpstream) processOptions(_ string, link *procLink) (*mcp.ClientOptions, mcp.Middleware, string) {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		forwardProgress(ctx, u.h.Redact, link, req.Params)
	}}, nil, ""
}

func (craftbotUpstream) started(context.Context, string, *mcp.ClientSession) mcp.LoggingLevel {
	return ""
}
func (craftbotUpstream) startedLevel(context.Context, *mcp.ClientSession, mcp.LoggingLevel) {}
func (craftbotUpstream) remoteConnected(string, *mcp.ClientSession)                         {}
func (craftbotUpstream) listFeatures(context.Context, string) error                         { return nil }
func (craftbotUpstream) forwardLog(context.Context, string, *procLink, *mcp.LoggingMessageParams) {
}
func (craftbotUpstream) resourceUpdated(context.Context, *mcp.ResourceUpdatedNotificationParams) {}
func (craftbotUpstream) toolsChanged(*toolTable)                                                 {}

// CraftbotStatus is the runtime's state: GET /status and the status
// socket show it. Every text is redacted; no env value is in it.
type CraftbotStatus struct {
	Profile     string `json:"profile"`
	AutoConnect bool   `json:"autoConnect"`
	// Servers in plan order.
	Servers []CraftbotServerStatus `json:"servers"`
	// Actions counts the actions served.
	Actions int `json:"actions"`
	// EscapedProcesses counts the processes of servers found outside
	// their server's process group when it stopped (killed on their own).
	EscapedProcesses int `json:"escapedProcesses"`
}

// CraftbotServerStatus is one server.
type CraftbotServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// URL is an sse or websocket server's url without its query.
	URL string `json:"url,omitempty"`
	// State: "not started", "starting", "running", "exited",
	// "failed: <reason>" or "disabled".
	State     string `json:"state"`
	ActionSet string `json:"actionSet"`
	// Tools counts the server's actions served.
	Tools      int      `json:"tools"`
	LastError  string   `json:"lastError,omitempty"`
	Pid        int      `json:"pid,omitempty"`
	Starts     int      `json:"starts"`
	StderrTail []string `json:"stderrTail,omitempty"`
}

// Status returns the state of every server: the shared chat's status of
// each (Chat.Server), in the shape of a craftbot gateway's GET /status.
func (c *Craftbot) Status() CraftbotStatus {
	st := CraftbotStatus{Profile: plan.ProfileCraftbot, AutoConnect: c.prof.autoConnect.Load(), Servers: []CraftbotServerStatus{},
		Actions: len(c.h.currentTable().list), EscapedProcesses: int(c.h.escapes.Load())}
	for _, hs := range c.h.servers() {
		cfg := hs.cfg
		d, _ := c.chat.Server(cfg.Name)
		s := CraftbotServerStatus{Name: cfg.Name, Transport: cfg.Transport, ActionSet: cfg.ActionSet, State: d.State,
			Tools: d.Tools, LastError: d.LastError, Pid: d.Pid, Starts: d.Starts}
		if s.ActionSet == "" {
			s.ActionSet = "mcp_" + cfg.Name
		}
		if cfg.URL != "" {
			s.URL = c.Redact(remote.URLWithoutQuery(cfg.URL))
		}
		if len(d.StderrTail) > 0 {
			s.StderrTail = d.StderrTail
		}
		st.Servers = append(st.Servers, s)
	}
	return st
}
