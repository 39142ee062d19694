package gateway

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// An Engine runs a plan of either profile as an MCP gateway: the one entry
// of `mcpc run`. Both run on a Host of the plan's profile: a volcanic plan
// with one chat per client, served by a Gateway; a craftbot plan with one
// chat every client shares, served as its actions (Craftbot). The caller
// serves it over stdio or HTTP, applies new plans and closes it the same
// way for both.
type Engine struct {
	profile string
	host    *runtime.Host
	gw      *Gateway  // volcanic
	cb      *Craftbot // craftbot
	opts    EngineOptions
}

// EngineOptions configure an Engine. Each profile reads its own part.
type EngineOptions struct {
	// Env is the host environment (HostOptions.Env, CraftbotOptions.Env).
	Env runtime.HostEnv
	// Secrets are more known secret values to redact (the gateway's tokens).
	Secrets []string
	// Log receives what the runtime logs, redacted.
	Log func(runtime.LogEntry)
	// Version is the gateway's server version in initialize.
	Version string

	// A volcanic plan: the host's built-in tool names, its process cap,
	// its chats' remote servers and its gateway.
	Builtins     []string
	MaxProcesses int
	Remote       *runtime.RemoteOptions
	Gateway      GatewayOptions

	// A craftbot plan: where the ${config:KEY} values are read, the
	// working directory of the stdio servers, the sse and websocket
	// connections' options and the HTTP endpoint's.
	Config    runtime.ConfigLookup
	Workspace string
	Dial      transport.RemoteOptions
	HTTP      CraftbotHTTPOptions
}

// NewEngine builds the engine of p's profile. Nothing starts before Start
// or the first client.
func NewEngine(p *plan.Plan, opts EngineOptions) (*Engine, error) {
	e := &Engine{opts: opts}
	if p != nil && p.Profile == plan.ProfileCraftbot {
		cb, err := NewCraftbot(p, runtime.CraftbotOptions{Env: opts.Env, Config: opts.Config, Workspace: opts.Workspace,
			Secrets: opts.Secrets, Version: opts.Version, Remote: opts.Dial, Log: opts.Log})
		if err != nil {
			return nil, err
		}
		e.profile, e.host, e.cb = plan.ProfileCraftbot, cb.h, cb
		return e, nil
	}
	host, err := runtime.NewHost(p, runtime.HostOptions{Env: opts.Env, Builtins: opts.Builtins, Secrets: opts.Secrets,
		MaxProcesses: opts.MaxProcesses, Remote: opts.Remote, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	gwOpts := opts.Gateway
	gwOpts.Version = opts.Version
	e.profile, e.host, e.gw = plan.ProfileVolcanic, host, NewGateway(host, gwOpts)
	return e, nil
}

// Profile is the profile of the plan the engine runs.
func (e *Engine) Profile() string { return e.profile }

// Host is the host that runs the plan.
func (e *Engine) Host() *runtime.Host { return e.host }

// Start starts what the plan starts before any client: a volcanic plan's
// discoveries (unless GatewayOptions.StartEarly makes the first chat's
// processes the discoveries), a craftbot plan's connects (auto_connect).
func (e *Engine) Start() {
	if e.cb != nil {
		e.cb.Start()
		return
	}
	if !e.opts.Gateway.StartEarly {
		e.host.StartDiscovery()
	}
}

// ServeStdio serves one client over t until it disconnects or ctx ends: a
// volcanic plan's chat "stdio" in workspace with session scope scope, or a
// craftbot plan's actions (workspace and scope are a volcanic chat's).
func (e *Engine) ServeStdio(ctx context.Context, workspace, scope string, t mcp.Transport) error {
	if e.cb != nil {
		return e.cb.ServeTransport(ctx, t)
	}
	chat, err := e.host.ChatWithScope("stdio", workspace, scope)
	if err != nil {
		return err
	}
	return e.gw.ServeTransport(ctx, chat, t)
}

// Handler serves the gateway over HTTP: the MCP endpoints and the admin
// ones.
func (e *Engine) Handler() http.Handler {
	if e.cb != nil {
		return e.cb.Handler(e.opts.HTTP)
	}
	return e.gw
}

// StatusHandler serves the admin endpoints for the owner-only status
// socket of a stdio gateway.
func (e *Engine) StatusHandler() http.Handler {
	if e.cb != nil {
		return e.cb.Handler(CraftbotHTTPOptions{})
	}
	return e.gw
}

// Apply makes p the running plan (with config, where a craftbot plan's
// ${config:KEY} values are read). changed reports whether anything that
// runs changed; an error means the running plan stays.
func (e *Engine) Apply(ctx context.Context, p *plan.Plan, config runtime.ConfigLookup) (changed bool, err error) {
	res, err := e.host.ApplyConfig(ctx, p, config)
	if err != nil {
		return false, err
	}
	return res.Changed(), nil
}

// Redact replaces every known secret in s with [REDACTED].
func (e *Engine) Redact(s string) string { return e.host.Redact(s) }

// CloseSessions ends every MCP session; the servers keep running.
func (e *Engine) CloseSessions() {
	if e.cb != nil {
		e.cb.CloseSessions()
		return
	}
	e.gw.Close()
}

// Close ends the sessions, cancels the calls in flight (their servers are
// told), stops every server process and connection, and waits for all of
// it. It may be called many times.
func (e *Engine) Close() {
	if e.cb != nil {
		e.cb.CloseSessions()
	}
	e.host.Close()
}

// EscapedProcesses counts the processes found outside their server's
// process group when it stopped (killed on their own).
func (e *Engine) EscapedProcesses() int { return e.host.EscapedProcesses() }
