package runtime

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/craftbot/actions"
	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// hostProfile is what a host's plan profile decides; everything else
// (servers, chats, calls, reloads, status) is the one host's. How chats
// are scoped is not here: a profile without chats has one shared chat
// (Host.shared, made by its runtime, Craftbot).
type hostProfile interface {
	// name is the plan profile (checkPlan).
	name() string
	// launch resolves a stdio entry for a chat's workspace.
	launch(h *Host, cfg *plan.Server, workspace string) (LaunchSpec, error)
	// dial are the options of an sse or websocket entry's connection.
	dial() transport.RemoteOptions
	// assign names the tools of servers (enabled, in plan order) as the
	// agent sees them, each with its served definition.
	assign(h *Host, servers []*hostServer) []*Tool
	// mayServe reports whether the agent's tool name could be one of
	// server's: a first call by name discovers only those.
	mayServe(server, name string) bool
	// listsOnConnect: a server's tools are what every connect of the
	// shared chat lists (with listTools), and discovering it is
	// connecting it; else a discovery process lists them once (Discover).
	listsOnConnect() bool
	// listTools lists the tools of server on a connect (listsOnConnect).
	listTools(h *Host, server string) func(context.Context, *mcp.ClientSession) ([]*mcp.Tool, error)
	// reloading checks a new plan's secrets, learning them or refusing
	// the plan, before anything launches with them, and names the servers
	// whose launch changed though their plan entry did not (a config
	// value they read). config is where the new plan's values are read.
	reloading(h *Host, p *plan.Plan, config ConfigLookup) (restart map[string]bool, err error)
	// startsOnApply: a reload's new servers are discovered (or connected)
	// at once, and, with wait, Apply waits for them; else they start on
	// their first use.
	startsOnApply() (start, wait bool)
	// callTimeout bounds a call of cfg's tools; setting names its setting
	// in the timeout's error ("" for none).
	callTimeout(cfg *plan.Server) (d time.Duration, setting string)
	// stderrLevel is the log level of cfg's stderr lines ("None": not
	// logged).
	stderrLevel(cfg *plan.Server) string
	// clientVersion is the version of mcpc's MCP client in initialize.
	clientVersion() string
}

// volcanicProfile: one chat per conversation, tools named by
// naming.Assign (SPEC §2.5), stdio entries launched with ${env:…}
// resolved from the host environment, which are the secrets; a discovery
// process lists each server's tools once.
type volcanicProfile struct{}

func (volcanicProfile) name() string { return plan.ProfileVolcanic }

func (volcanicProfile) launch(h *Host, cfg *plan.Server, workspace string) (LaunchSpec, error) {
	return Launch(cfg, workspace, h.env), nil
}

func (volcanicProfile) dial() transport.RemoteOptions { return transport.RemoteOptions{} }

func (volcanicProfile) mayServe(string, string) bool { return true }
func (volcanicProfile) listTools(*Host, string) func(context.Context, *mcp.ClientSession) ([]*mcp.Tool, error) {
	return ListServerTools
}
func (volcanicProfile) listsOnConnect() bool        { return false }
func (volcanicProfile) startsOnApply() (bool, bool) { return true, false }
func (volcanicProfile) clientVersion() string       { return "chat" }

func (volcanicProfile) callTimeout(cfg *plan.Server) (time.Duration, string) {
	return time.Duration(cfg.CallTimeoutSeconds) * time.Second, " (callTimeoutSeconds)"
}

func (volcanicProfile) stderrLevel(cfg *plan.Server) string { return cfg.StderrLevel }

// reloading refuses a plan whose ${env:…} values the host does not know
// as secrets yet (checkSecrets).
func (volcanicProfile) reloading(h *Host, p *plan.Plan, _ ConfigLookup) (map[string]bool, error) {
	return nil, h.checkSecrets(p)
}

func (volcanicProfile) assign(h *Host, servers []*hostServer) []*Tool {
	var in []naming.ServerTools
	defs := map[string][]*mcp.Tool{}
	srvs := map[string]*hostServer{}
	for _, s := range servers {
		tools := s.listed()
		st := naming.ServerTools{Server: s.cfg.Name, Prefix: s.cfg.ToolPrefix}
		for _, t := range tools {
			st.Tools = append(st.Tools, t.Name)
		}
		defs[s.cfg.Name] = tools
		srvs[s.cfg.Name] = s
		in = append(in, st)
	}
	results := naming.Assign(in, naming.Options{Builtins: h.opts.Builtins})
	var out []*Tool
	// Results come in input order: server by server, each in its tools/list
	// order, so a per-server index finds each tool's definition.
	next := map[string]int{}
	for _, r := range results {
		def := defs[r.Server][next[r.Server]]
		next[r.Server]++
		if r.Rule != "" && (r.Rule == naming.RuleBuiltin || r.Rule == naming.RuleCollision || r.Rule == naming.RuleEmpty) {
			key := r.Server + "\x00" + r.Rule + "\x00" + r.Message
			if !h.namingLogged[key] {
				if h.namingLogged == nil {
					h.namingLogged = map[string]bool{}
				}
				h.namingLogged[key] = true
				h.log("Warning", "", r.Server, "%s [%s]", r.Message, r.Rule)
			}
		}
		if !r.Registered() {
			continue
		}
		if reason := unservable(def); reason != "" {
			h.log("Warning", "", r.Server, "tool %q of server %q is not served: %s", def.Name, r.Server, reason)
			continue
		}
		agent, ok := redactTool(h.redactor(), def, r.Name)
		if !ok {
			h.log("Warning", "", r.Server, "tool %q of server %q is not served: its definition could not be checked for secrets", def.Name, r.Server)
			continue
		}
		out = append(out, &Tool{Name: r.Name, Server: r.Server, ServerTool: def.Name, Def: agent, srv: srvs[r.Server]})
	}
	return out
}

// CraftbotProfile (SPEC §5): one chat shared by every client, tools named
// as CraftBot's actions (package actions), stdio entries launched with
// the config file's values, which are the secrets and are learned at every
// reload, sse and websocket entries connected; every connect lists the
// server's tools.
type CraftbotProfile struct {
	builtins []string
	timeout  time.Duration // a call's; 0: CraftbotCallTimeout
	remote   transport.RemoteOptions

	autoConnect atomic.Bool
	mu          sync.Mutex
	config      ConfigLookup // where the plan's ${config:KEY} values are read
	warned      map[string]bool
}

func (*CraftbotProfile) name() string { return plan.ProfileCraftbot }

func (c *CraftbotProfile) lookup() ConfigLookup {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.config == nil {
		return func(string, string) (string, bool) { return "", false }
	}
	return c.config
}

func (c *CraftbotProfile) launch(h *Host, cfg *plan.Server, _ string) (LaunchSpec, error) {
	return CraftbotLaunch(cfg, h.env, c.lookup())
}

func (c *CraftbotProfile) dial() transport.RemoteOptions { return c.remote }

func (*CraftbotProfile) mayServe(server, name string) bool { return actionOf(server, name) }
func (*CraftbotProfile) listsOnConnect() bool              { return true }
func (*CraftbotProfile) clientVersion() string             { return "craftbot" }

func (c *CraftbotProfile) startsOnApply() (bool, bool) { return c.autoConnect.Load(), true }

// CraftbotCallTimeout bounds a call of a craftbot plan's tool: CraftBot's
// handler waits at most 60 s for the call's result (adapter.py, read at
// 605efb4), and sets no timeout per server.
const CraftbotCallTimeout = 60 * time.Second

// callTimeout: a craftbot plan has no callTimeoutSeconds; the host's
// handler's 60 s, unless CraftbotOptions.CallTimeout says otherwise.
func (c *CraftbotProfile) callTimeout(*plan.Server) (time.Duration, string) {
	if c.timeout > 0 {
		return c.timeout, ""
	}
	return CraftbotCallTimeout, " (the host's handler waits 60s)"
}

// listTools reads the first page of tools/list only, as the host does: a
// server that pages serves only that page's tools, said once.
func (c *CraftbotProfile) listTools(h *Host, server string) func(context.Context, *mcp.ClientSession) ([]*mcp.Tool, error) {
	return func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if res.NextCursor != "" {
			c.warnOnce(h, server, fmt.Sprintf("server %q lists its tools in pages: only the first page's %d tools are served, as the host reads no other page [%s]",
				server, len(res.Tools), rules.CbToolsPaged.ID))
		}
		return res.Tools, nil
	}
}

func (*CraftbotProfile) stderrLevel(*plan.Server) string { return "Information" }

// setPlan makes config where p's values are read, and learns the values
// its enabled servers launch with as secrets.
func (c *CraftbotProfile) setPlan(h *Host, p *plan.Plan, config ConfigLookup) {
	var forms []string
	for _, v := range configSecrets(p, config) {
		forms = append(forms, secretForms(v)...)
	}
	h.learnSecrets(forms)
	c.mu.Lock()
	c.config = config
	c.mu.Unlock()
	c.autoConnect.Store(p.AutoConnect == nil || *p.AutoConnect)
}

// reloading learns the new config values as secrets (CraftBot keeps its
// secrets there, and every reload may bring new ones), and restarts the
// enabled stdio servers whose environment a changed config value changes.
func (c *CraftbotProfile) reloading(h *Host, p *plan.Plan, config ConfigLookup) (map[string]bool, error) {
	old := c.lookup()
	c.setPlan(h, p, config)
	restart := map[string]bool{}
	for i := range p.Servers {
		n := &p.Servers[i]
		if o := h.server(n.Name); o != nil && n.Enabled && launchChanged(o.cfg, n, h.env, old, c.lookup()) {
			restart[n.Name] = true
		}
	}
	return restart, nil
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

// launchChanged reports whether an enabled stdio server would start with
// another environment under the new config than under the old one, its
// plan entry alike.
func launchChanged(o, n *plan.Server, env HostEnv, oldConfig, newConfig ConfigLookup) bool {
	if n.Transport != plan.TransportStdio || o.Transport != n.Transport {
		return false
	}
	a, errA := CraftbotLaunch(o, env, oldConfig)
	b, errB := CraftbotLaunch(n, env, newConfig)
	if (errA == nil) != (errB == nil) {
		return true
	}
	return !reflect.DeepEqual(a.Env, b.Env)
}

// actionOf reports whether action could be one of server's: mcp_<server>_….
func actionOf(server, action string) bool {
	prefix := actions.ActionName(server, "")
	return len(action) > len(prefix) && action[:len(prefix)] == prefix
}

// assign names the tools as actions.Assign does: a tool the host does not
// register is not served; one whose handler calls another tool name of the
// same server is served calling that name, as the host's does (one whose
// handler calls another server, or a name mcpc cannot decode, is not
// served); a name taken twice or a built-in's is served once (the first
// server in plan order wins). Each is logged once.
func (c *CraftbotProfile) assign(h *Host, servers []*hostServer) []*Tool {
	var lists []actions.ServerTools
	var defs [][]*mcp.Tool
	for _, s := range servers {
		tools := s.listed()
		set := s.cfg.ActionSet
		if set == "" {
			set = "mcp_" + s.cfg.Name
		}
		st := actions.ServerTools{Server: s.cfg.Name, Description: s.cfg.Description, ActionSet: set}
		for _, t := range tools {
			st.Tools = append(st.Tools, actions.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
		lists, defs = append(lists, st), append(defs, tools)
	}
	results := actions.Assign(lists, c.builtins)
	var out []*Tool
	next := 0
	for i, s := range servers {
		name := s.cfg.Name
		for _, t := range defs[i] {
			res := results[next]
			next++
			serverTool := t.Name
			switch res.Rule {
			case "", actions.RuleActionInternalArg:
			case actions.RuleActionEscape:
				if res.Action.Server != name || res.InServer || res.Action.Tool == t.Name {
					c.warnOnce(h, name, fmt.Sprintf("%s: not served [%s]", res.Message, res.Rule))
					continue
				}
				c.warnOnce(h, name, fmt.Sprintf("%s: served so [%s]", res.Message, res.Rule))
				serverTool = res.Action.Tool
			default:
				c.warnOnce(h, name, fmt.Sprintf("%s: not served [%s]", res.Message, res.Rule))
				continue
			}
			if len(res.Action.Input) == 0 && hasProperties(t.InputSchema) {
				c.warnOnce(h, name, fmt.Sprintf("tool %q of server %q: the host registers the action %q without inputs (its schema has no \"type\": \"object\"); mcpc serves the server's own input schema, with type \"object\"",
					t.Name, name, res.Action.Name))
			}
			def, ok := actionDef(h, res.Action, t)
			if !ok {
				h.log("Warning", "", name, "tool %q of server %q is not served: its definition holds a secret that could not be redacted", t.Name, name)
				continue
			}
			out = append(out, &Tool{Name: def.Name, Server: name, ServerTool: serverTool, Def: def, srv: s})
		}
	}
	return out
}

// hasProperties reports whether a tool's input schema names properties,
// which the host drops when the schema's type is not "object".
func hasProperties(schema any) bool {
	m, _ := schema.(map[string]any)
	p, _ := m["properties"].(map[string]any)
	return len(p) > 0
}

func (c *CraftbotProfile) warnOnce(h *Host, server, msg string) {
	c.mu.Lock()
	seen := c.warned[msg]
	if c.warned == nil {
		c.warned = map[string]bool{}
	}
	c.warned[msg] = true
	c.mu.Unlock()
	if !seen {
		h.log("Warning", "", server, "%s", msg)
	}
}

// actionDef is the MCP tool an action is served as: the action's name and
// description, the server's own input schema (an MCP client validates
// arguments with it; one whose type is not "object", which the host
// registers without inputs, with type "object"), redacted.
func actionDef(h *Host, a actions.Action, t *mcp.Tool) (*mcp.Tool, bool) {
	def := *t
	def.Description = a.Description
	switch m, _ := t.InputSchema.(map[string]any); {
	case m == nil:
		def.InputSchema = map[string]any{"type": "object"}
	case m["type"] != "object":
		// The host registers it without inputs; MCP needs type "object".
		def.InputSchema = maps.Clone(m)
		def.InputSchema.(map[string]any)["type"] = "object"
	}
	return redactTool(h.redactor(), &def, a.Name)
}
