package gateway

import (
	"context"
	"encoding/json"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime"
)

// The craftbot runtime (SPEC §5): a craftbot plan run on a Host of the
// craftbot profile (profile.go) with one chat that every client shares,
// served as one MCP server whose tools are the actions CraftBot registers
// (mcp_<server>_<tool>, "[MCP:<server>] …"). The host does the rest: one
// connection per server (a process for stdio, a connection for sse and
// websocket), calls, reloads (Host.Apply) and status.

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
	h    *runtime.Host
	prof *runtime.CraftbotProfile
	chat *runtime.Chat // the one chat of every client
	srv  *mcp.Server

	regMu   sync.Mutex
	actions map[string]string // registered on srv: action name → its server and definition
	regGen  uint64            // 1 + the generation of the table registered last; 0: none yet
}

// NewCraftbot builds the runtime of a craftbot plan. Nothing connects
// before Start or the first use.
func NewCraftbot(p *plan.Plan, opts runtime.CraftbotOptions) (*Craftbot, error) {
	h, prof, chat, err := runtime.NewCraftbotHost(p, opts)
	if err != nil {
		return nil, err
	}
	c := &Craftbot{h: h, prof: prof, chat: chat, actions: map[string]string{}}
	chat.Serve(craftbotUpstream{h})
	c.srv = c.newServer(opts.Version)
	h.OnToolsChanged(c.register)
	return c, nil
}

// Redact replaces every known secret in s with [REDACTED].
func (c *Craftbot) Redact(s string) string { return c.h.Redact(s) }

// WaitConnected waits until no server's first connect (or retry) runs,
// and the actions of those that connected are registered (or ctx ends).
func (c *Craftbot) WaitConnected(ctx context.Context) error { return c.h.WaitDiscoveries(ctx) }

// Status returns the state of every server, redacted.
func (c *Craftbot) Status() runtime.CraftbotStatus {
	return runtime.CraftbotStatusOf(c.h, c.prof, c.chat)
}

// Start connects every enabled server in the background, in parallel, when
// the plan says auto_connect; without it servers connect on first use (the
// first tools/list, or a call to one of their actions). Each failure is
// logged and shown in Status; the other servers are served.
func (c *Craftbot) Start() {
	if c.prof.AutoConnect() {
		c.h.StartDiscovery()
	}
}

// register makes the MCP server offer exactly the actions of the host's
// tool table; the SDK tells connected clients
// (notifications/tools/list_changed).
func (c *Craftbot) register() {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	table := c.h.CurrentTable()
	if c.regGen == table.Gen()+1 {
		return // registered already
	}
	c.regGen = table.Gen() + 1
	want := map[string]string{}
	for _, t := range table.Tools() {
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
	for _, t := range table.Tools() {
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
			c.h.Log("Warning", "", "", "action %q is not served: %v", def.Name, r)
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
		// session, with the client's token (ForwardProgress).
		ss, _ := req.GetSession().(*mcp.ServerSession)
		o := runtime.NewCallOrigin(ctx, ss, req.Params.GetProgressToken())
		return callResult(c.Call(runtime.WithOrigin(ctx, o), name, args))
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
func (c *Craftbot) Apply(ctx context.Context, p *plan.Plan, config runtime.ConfigLookup) (*runtime.ApplyResult, error) {
	return c.h.ApplyConfig(ctx, p, config)
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
				_, _ = c.h.Table(ctx)
			case "tools/call":
				if name := callName(req); name != "" && c.h.CurrentTable().ByName()[name] == nil {
					_, _ = c.h.TableFor(ctx, name)
				}
			default:
				return next(ctx, method, req)
			}
			// The host publishes a new table before it tells this server:
			// what the listing or call is answered from must be registered
			// by then.
			c.register()
			return next(ctx, method, req)
		}
	})
	return srv
}

// craftbotUpstream is the shared chat's client side: the progress of a
// call goes back to the session that made it (ForwardProgress); a
// craftbot gateway passes nothing else on.
type craftbotUpstream struct{ h *runtime.Host }

func (u craftbotUpstream) ProcessOptions(_ string, link *runtime.ProcLink) (*mcp.ClientOptions, mcp.Middleware, string) {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		runtime.ForwardProgress(ctx, u.h.Redact, link, req.Params)
	}}, nil, ""
}

func (craftbotUpstream) Started(context.Context, string, *mcp.ClientSession) mcp.LoggingLevel {
	return ""
}
func (craftbotUpstream) StartedLevel(context.Context, *mcp.ClientSession, mcp.LoggingLevel) {}
func (craftbotUpstream) RemoteConnected(string, *mcp.ClientSession)                         {}
func (craftbotUpstream) ListFeatures(context.Context, string) error                         { return nil }
func (craftbotUpstream) ForwardLog(context.Context, string, *runtime.ProcLink, *mcp.LoggingMessageParams) {
}
func (craftbotUpstream) ResourceUpdated(context.Context, *mcp.ResourceUpdatedNotificationParams) {}
func (craftbotUpstream) ToolsChanged(*runtime.ToolTable)                                         {}
