package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/craftbot/actions"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// The craftbot runtime (SPEC §5): a craftbot plan served as one MCP server
// whose tools are the actions CraftBot registers (mcp_<server>_<tool>,
// "[MCP:<server>] …"). CraftBot has no chats: every client of the gateway
// shares one connection per server, a process for stdio, a connection for
// sse and websocket. Apply takes a new plan while it runs (a reload).

// remoteConnectTimeout bounds the handshake and tools/list of an sse or
// websocket server (SPEC §4: 15 s).
const remoteConnectTimeout = 15 * time.Second

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
	// Clock measures the call, startup and connect timeouts; nil means
	// RealClock.
	Clock Clock
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
	opts  CraftbotOptions
	clock Clock
	env   HostEnv
	srv   *mcp.Server

	ctx       context.Context // ends at Close: cancels connects and calls
	cancel    context.CancelFunc
	wg        sync.WaitGroup // background goroutines, see track
	closeDone chan struct{}

	mu          sync.Mutex
	closed      bool
	plan        *plan.Plan
	config      ConfigLookup
	autoConnect bool
	servers     []*cbServer // plan order, disabled ones too
	byName      map[string]*cbServer

	redMu   sync.Mutex
	forms   map[string]bool
	red     atomic.Pointer[redact.Redactor]
	maxForm atomic.Int64
	escapes atomic.Int64

	applyMu sync.Mutex // one Apply at a time
	regMu   sync.Mutex
	actions map[string]*cbAction // registered on srv, by action name
	warned  map[string]bool      // the naming problems logged (once each)
}

// cbAction is one registered action.
type cbAction struct {
	server *cbServer
	tool   string // the server's name of the tool
	key    string // server name and the definition as served: equal keys need no re-registering
}

// NewCraftbot builds the runtime of a craftbot plan. Nothing connects
// before Start or the first use.
func NewCraftbot(p *plan.Plan, opts CraftbotOptions) (*Craftbot, error) {
	if err := checkPlan(p, plan.ProfileCraftbot); err != nil {
		return nil, err
	}
	c := &Craftbot{opts: opts, clock: opts.Clock, env: opts.Env, closeDone: make(chan struct{}),
		byName: map[string]*cbServer{}, actions: map[string]*cbAction{}, forms: map[string]bool{}, warned: map[string]bool{}}
	if c.clock == nil {
		c.clock = RealClock{}
	}
	if c.env.Deny == nil {
		c.env.Deny = denylist.Default()
	}
	if c.env.Vars == nil {
		c.env.Vars = map[string]string{}
	}
	c.red.Store(redact.New(nil))
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.srv = c.newServer()
	c.learnSecrets(append(append([]string(nil), opts.Secrets...), c.env.Secrets(nil)...))
	c.setPlan(p, opts.Config)
	for i := range p.Servers {
		s := &cbServer{c: c, cfg: &p.Servers[i], state: StateNotStarted}
		if !s.cfg.Enabled {
			s.state = StateDisabled
		}
		c.servers = append(c.servers, s)
		c.byName[s.cfg.Name] = s
	}
	return c, nil
}

// setPlan makes p and config the current plan and learns the config values
// its enabled servers are launched with as secrets.
func (c *Craftbot) setPlan(p *plan.Plan, config ConfigLookup) {
	c.mu.Lock()
	c.plan, c.config = p, config
	c.autoConnect = p.AutoConnect == nil || *p.AutoConnect
	c.mu.Unlock()
	c.learnSecrets(configSecrets(p, config))
}

// configSecrets are the values of the config file that p's enabled servers
// are launched with: CraftBot keeps its secrets there, and mcpc cannot tell
// a token from a setting.
func configSecrets(p *plan.Plan, config ConfigLookup) []string {
	var out []string
	for _, s := range p.Servers {
		if !s.Enabled || config == nil {
			continue
		}
		for k, v := range s.Env {
			if v != nil && plan.IsConfigRef(k, *v) {
				if val, ok := config(s.Name, k); ok {
					out = append(out, val)
				}
			}
		}
	}
	return out
}

// learnSecrets adds values to what is redacted. A secret once known stays
// known: a reload does not make an old token showable.
func (c *Craftbot) learnSecrets(values []string) {
	c.redMu.Lock()
	defer c.redMu.Unlock()
	added := false
	for _, v := range values {
		for _, f := range secretForms(v) {
			if !c.forms[f] {
				c.forms[f], added = true, true
			}
		}
	}
	if !added && c.red.Load() != nil {
		return
	}
	forms := make([]string, 0, len(c.forms))
	for f := range c.forms {
		forms = append(forms, f)
	}
	c.red.Store(redact.New(forms))
	c.maxForm.Store(int64(longestForm(forms)))
}

// Redact replaces every known secret in s with [REDACTED].
func (c *Craftbot) Redact(s string) string { return c.red.Load().Redact(s) }

func (c *Craftbot) secretSpan() int { return int(c.maxForm.Load()) }

// track runs f as a background goroutine that Close waits for; false,
// without running f, once the runtime is closed.
func (c *Craftbot) track(f func()) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

func (c *Craftbot) log(level, server, format string, args ...any) {
	if c.opts.Log == nil {
		return
	}
	c.opts.Log(LogEntry{Level: level, Server: server, Message: c.Redact(fmt.Sprintf(format, args...))})
}

// Start connects every enabled server in the background, in parallel, when
// the plan says auto_connect; without it servers connect on first use (the
// first tools/list, or a call to one of their actions). Each failure is
// logged and shown in Status; the other servers are served.
func (c *Craftbot) Start() {
	c.mu.Lock()
	auto := c.autoConnect
	servers := append([]*cbServer(nil), c.servers...)
	c.mu.Unlock()
	if !auto {
		return
	}
	for _, s := range servers {
		s.connectInBackground()
	}
}

// WaitConnected waits until no server is connecting and the actions of
// those that connected are registered (or ctx ends).
func (c *Craftbot) WaitConnected(ctx context.Context) error {
	for _, s := range c.serverList() {
		if op := s.lastConnect(); op != nil {
			select {
			case <-op.done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

func (c *Craftbot) serverList() []*cbServer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*cbServer(nil), c.servers...)
}

// connectFirstUse connects, and waits for, the enabled servers never tried
// yet whose actions could be called name ("" for all of them): what a first
// tools/list, or a first call, does without auto_connect.
func (c *Craftbot) connectFirstUse(ctx context.Context, name string) {
	var ops []*cbConnect
	for _, s := range c.serverList() {
		if name != "" && !actionOf(s.name(), name) {
			continue
		}
		if op := s.firstUse(); op != nil {
			ops = append(ops, op)
		}
	}
	for _, op := range ops {
		select {
		case <-op.done:
		case <-ctx.Done():
			return
		}
	}
}

// actionOf reports whether action could be one of server's: mcp_<server>_….
func actionOf(server, action string) bool {
	prefix := actions.ActionName(server, "")
	return len(action) > len(prefix) && action[:len(prefix)] == prefix
}

// register makes the MCP server offer exactly the actions of the servers'
// current tool lists, in plan order, as actions.Assign names them: a
// name taken twice or a built-in's is served once (the first server in
// plan order wins), a name a function-calling API refuses is not served.
// The SDK tells connected clients (notifications/tools/list_changed).
func (c *Craftbot) register() {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	var lists []actions.ServerTools
	var owners []*cbServer
	var defs [][]*mcp.Tool
	for _, s := range c.serverList() {
		tools, set, ok := s.offered()
		if !ok {
			continue
		}
		st := actions.ServerTools{Server: s.name(), ActionSet: set}
		for _, t := range tools {
			st.Tools = append(st.Tools, actions.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
		lists, owners, defs = append(lists, st), append(owners, s), append(defs, tools)
	}
	results := actions.Assign(lists, c.opts.BuiltinActions)
	type wanted struct {
		action *cbAction
		def    *mcp.Tool
	}
	want := map[string]wanted{}
	var order []string
	next := 0
	for i, s := range owners {
		for _, t := range defs[i] {
			res := results[next]
			next++
			if res.Rule != "" {
				if !c.warned[res.Message] {
					c.warned[res.Message] = true
					c.log("Warning", s.name(), "%s: not served", res.Message)
				}
				continue
			}
			def, ok := c.actionDef(res.Action, t)
			if !ok {
				c.log("Warning", s.name(), "tool %q of server %q is not served: its definition holds a secret that could not be redacted", t.Name, s.name())
				continue
			}
			b, _ := json.Marshal(def)
			want[def.Name] = wanted{&cbAction{server: s, tool: t.Name, key: s.name() + "\x00" + string(b)}, def}
			order = append(order, def.Name)
		}
	}
	var gone []string
	for name, a := range c.actions {
		if w, ok := want[name]; !ok || w.action.key != a.key || w.action.server != a.server {
			gone = append(gone, name)
			delete(c.actions, name)
		}
	}
	if len(gone) > 0 {
		c.srv.RemoveTools(gone...)
	}
	for _, name := range order {
		if c.actions[name] != nil {
			continue
		}
		w := want[name]
		if c.addTool(w.def) {
			c.actions[name] = w.action
		}
	}
}

// actionDef is the MCP tool an action is served as: the action's name and
// description, the server's own input schema (an MCP client validates
// arguments with it), redacted.
func (c *Craftbot) actionDef(a actions.Action, t *mcp.Tool) (*mcp.Tool, bool) {
	def := *t
	def.Description = a.Description
	if def.InputSchema == nil {
		def.InputSchema = map[string]any{"type": "object"}
	}
	return redactTool(c.red.Load(), &def, a.Name)
}

// addTool registers one action. The SDK panics on definitions it cannot
// serve; such a tool is logged and left out.
func (c *Craftbot) addTool(def *mcp.Tool) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.log("Warning", "", "action %q is not served: %v", def.Name, r)
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

// lookup returns the server and tool of a registered action.
func (c *Craftbot) lookup(name string) (*cbServer, string, bool) {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	a := c.actions[name]
	if a == nil {
		return nil, "", false
	}
	return a.server, a.tool, true
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
	c.connectFirstUse(ctx, "")
	c.regMu.Lock()
	defer c.regMu.Unlock()
	out := make([]CraftbotTool, 0, len(c.actions))
	for name, a := range c.actions {
		out = append(out, CraftbotTool{Name: name, Server: a.server.name(), Tool: a.tool})
	}
	sortTools(out)
	return out
}

func sortTools(ts []CraftbotTool) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Name < ts[j-1].Name; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// Call calls the action name with args (anything that encodes as a JSON
// object; nil or JSON null is {}). Errors are *CallError, redacted, or
// ErrHostClosed.
func (c *Craftbot) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	if c.isClosed() {
		return nil, ErrHostClosed
	}
	s, tool, ok := c.lookup(name)
	if !ok {
		c.connectFirstUse(ctx, name)
		s, tool, ok = c.lookup(name)
	}
	if !ok {
		return nil, &CallError{Kind: CallUnknownTool, Tool: name, Message: fmt.Sprintf("unknown tool %q: no server of the plan serves it (now)", c.Redact(name))}
	}
	// A call ends with the runtime: Close cancels it (the server is told).
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(c.ctx, func() { cancel(ErrHostClosed) })
	defer stop()
	res, err := s.call(ctx, name, tool, args)
	if err != nil {
		var ce *CallError
		if errors.As(err, &ce) {
			cp := *ce
			cp.Message = c.Redact(cp.Message)
			return nil, &cp
		}
		return nil, errors.New(c.Redact(err.Error()))
	}
	return redactResult(c.red.Load(), res), nil
}

func (c *Craftbot) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close ends the MCP sessions, cancels the calls in flight (their servers
// are told, with notifications/cancelled, before stdin closes), stops every
// server process (whole process groups) and closes every connection, and
// waits for all of it. It may be called many times; every call returns
// once the first is done.
func (c *Craftbot) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.closeDone
		return nil
	}
	c.closed = true
	servers := append([]*cbServer(nil), c.servers...)
	c.mu.Unlock()
	defer close(c.closeDone)
	c.CloseSessions()
	c.cancel()
	deadline := time.Now().Add(cancelNotifyLimit)
	for _, s := range servers {
		s.settleCalls(deadline)
	}
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { s.stop(stopHostClosed, true) })
	}
	wg.Wait()
	c.wg.Wait()
	return nil
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

// newServer is the MCP server every client talks to.
func (c *Craftbot) newServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpc", Version: c.opts.Version}, &mcp.ServerOptions{
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		SupportedProtocolVersions: GatewayProtocolVersions(),
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				c.connectFirstUse(ctx, "")
				c.retryFailed()
			case "tools/call":
				if name := callName(req); name != "" {
					if _, _, ok := c.lookup(name); !ok {
						c.connectFirstUse(ctx, name)
					}
				}
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// retryFailed starts again, in the background, the servers whose connect
// failed at least DefaultDiscoveryRetry ago, as a failed discovery is
// (SPEC §4): a listing does not wait for them.
func (c *Craftbot) retryFailed() {
	now := c.clock.Now()
	for _, s := range c.serverList() {
		s.retryIfDue(now)
	}
}

// workspace is the working directory of the stdio servers.
func (c *Craftbot) workspace() (string, error) {
	ws := c.opts.Workspace
	if ws == "" {
		return "", nil
	}
	return ws, os.MkdirAll(ws, 0o700)
}
