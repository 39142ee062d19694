package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/runtime"
)

// Pass-through (SPEC §4, "the gateway is transparent"): what MCP offers
// besides tools goes between a chat's client and the chat's server
// processes, with names mapped the way tool names are.
//
//   - A call carries its origin (the client's session, request context and
//     progress token) in its context to the process; the process's
//     progress, log messages, sampling and elicitation requests during the
//     call go back to that session, on that request (CallOrigin, ProcLink).
//   - Each process is started declaring the capabilities of the chat's
//     client (its latest session), and answers roots/list from that client,
//     or with the chat's workspace when the client has no roots. The
//     client's notifications/roots/list_changed goes on to the processes.
//   - Prompts, resources and resource templates of the servers that declare
//     them are listed from the chat's processes on first use and kept in the
//     chat's MCP server, which serves the lists (and their paging) and tells
//     clients of changes; reads, prompts/get, completion and subscriptions go
//     to the owning process. A server's list_changed makes the gateway list
//     again.
//   - logging/setLevel goes to every process of the chat that logs, and to
//     those started later.
//   - initialize's instructions carry what the host puts into the agent's
//     system prompt (instructions).
//   - The chat's remote servers pass through the same way, without
//     sampling, elicitation and roots (passthrough_remote.go).

// features are a chat's prompts, resources and templates as its gateway
// serves them.
type features struct {
	mu        sync.Mutex // one listing at a time
	listed    bool
	per       map[string]*serverFeatures // by server name
	prompts   map[string]promptRef       // registered, by visible name
	resources map[string]registered      // by URI
	templates map[string]registered      // by URI template
	links     map[string]string          // URI of a resource_link a tool returned → server

	lmu   sync.Mutex
	level mcp.LoggingLevel        // the client's last logging/setLevel
	subs  map[string]int          // subscribed URI → sessions subscribed
	caps  *mcp.ClientCapabilities // of the chat's latest client session
	// version is the protocol version that session asked for: processes
	// are offered the same, so that what a server may send during a call
	// is what the client accepts.
	version string
}

type serverFeatures struct {
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

type promptRef struct {
	server, name string
	def          string // JSON of the registered definition
}

type registered struct {
	server string
	def    string
}

// maxLinks bounds the resource links a chat remembers.
const maxLinks = 4096

func newFeatures() *features {
	return &features{per: map[string]*serverFeatures{}, prompts: map[string]promptRef{},
		resources: map[string]registered{}, templates: map[string]registered{}, links: map[string]string{}, subs: map[string]int{}}
}

// redactValue redacts every string of v (a result going to the client),
// JSON-decoded one by one. A value that cannot be redacted is withheld.
func redactValue[T any](c *runtime.Chat, v T) (T, error) {
	var zero T
	red := c.Redactor()
	if red.Empty() {
		return v, nil
	}
	b, err := json.Marshal(v)
	if err == nil {
		var changed bool
		b, changed, err = redact.JSON(b, red.Redact)
		if err == nil && !changed {
			return v, nil
		}
	}
	var out T
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the answer was withheld: it could not be checked for secrets"}
	}
	return out, nil
}

// upstreamSession picks the client session for a request of a process: the
// origin's, else the chat's latest initialized session.
func (gc *gatewayChat) upstreamSession(o *runtime.CallOrigin) (*mcp.ServerSession, context.Context) {
	if o != nil && o.Session() != nil {
		return o.Session(), o.Context()
	}
	var last *mcp.ServerSession
	for ss := range gc.server.Sessions() {
		if ss.InitializeParams() != nil {
			last = ss
		}
	}
	return last, nil
}

// clientOptions are the options of the MCP client of a new process of
// server: the capabilities of the chat's client, and handlers that pass
// what the process sends on to it.
func (g *Gateway) clientOptions(gc *gatewayChat, server string, link *runtime.ProcLink) (*mcp.ClientOptions, mcp.Middleware, string) {
	c := gc.chat
	gc.feat.lmu.Lock()
	up, version := gc.feat.caps, gc.feat.version
	gc.feat.lmu.Unlock()
	caps := mirrorCaps(up)
	link.SetCaps(version + " " + jsonOf(caps))
	opts := &mcp.ClientOptions{Capabilities: caps}
	withCtx := func(ctx context.Context) (*mcp.ServerSession, context.Context) {
		ss, octx := gc.upstreamSession(link.Current())
		if octx == nil {
			octx = ctx
		}
		return ss, octx
	}
	if up != nil && up.Sampling != nil {
		opts.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			ss, octx := withCtx(ctx)
			if ss == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no client is connected to the chat"}
			}
			return ss.CreateMessageWithTools(octx, req.Params)
		}
	}
	if up != nil && up.Elicitation != nil {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			ss, octx := withCtx(ctx)
			if ss == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no client is connected to the chat"}
			}
			return ss.Elicit(octx, req.Params)
		}
	}
	opts.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		runtime.ForwardProgress(ctx, c.Redact, link, req.Params)
	}
	opts.LoggingMessageHandler = func(ctx context.Context, req *mcp.LoggingMessageRequest) {
		forwardLog(ctx, gc, server, link, req.Params)
	}
	opts.ResourceUpdatedHandler = func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		_ = gc.server.ResourceUpdated(ctx, req.Params)
	}
	relist := func(what string) {
		g.h.Track(func() {
			ctx, cancel := context.WithTimeout(g.h.Context(), runtime.DefaultCallTimeout)
			defer cancel()
			if what == "tools" {
				g.relistTools(ctx, gc, server)
				return
			}
			if err := g.listFeatures(ctx, gc, server); err != nil {
				g.h.Log("Warning", c.ID(), server, "MCP server %s: listing its %s again failed: %s", server, what, c.Redact(err.Error()))
			}
		})
	}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { relist("tools") }
	opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { relist("prompts") }
	opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { relist("resources") }

	roots := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			ss, octx := withCtx(ctx)
			if ss != nil {
				if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil && (ip.Capabilities.RootsV2 != nil || ip.Capabilities.Roots.ListChanged) {
					return ss.ListRoots(octx, &mcp.ListRootsParams{})
				}
			}
			return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file://" + c.Workspace(), Name: "workspace"}}}, nil
		}
	}
	return opts, roots, version
}

// hookForwardLogRead, nil but in a test, runs in forwardLog after it found
// the call a message belongs to.
var hookForwardLogRead func()

// forwardLog passes a server's log message on, tagged with the server's
// name and redacted: to the session of the call in flight (outside its
// request if that has ended meanwhile), else to every session of the chat.
func forwardLog(ctx context.Context, gc *gatewayChat, server string, link *runtime.ProcLink, params *mcp.LoggingMessageParams) {
	c := gc.chat
	p := *params
	p.Logger = server + loggerSuffix(p.Logger)
	if red, err := redactValue(c, p.Data); err == nil {
		p.Data = red
	} else {
		p.Data = "[withheld: the message could not be checked for secrets]"
	}
	if o := link.Current(); o != nil && o.Session() != nil {
		if hookForwardLogRead != nil {
			hookForwardLogRead()
		}
		if err := o.Session().Log(o.Context(), &p); err != nil && o.Context().Err() != nil {
			// The call ended while its message was on the way here (the
			// SDK hands a response to its caller before it runs the
			// handlers of the notifications that came before it): the
			// message goes to the same session outside the request.
			_ = o.Session().Log(ctx, &p)
		}
		return
	}
	for ss := range gc.server.Sessions() {
		_ = ss.Log(ctx, &p)
	}
}

// mirrorCaps are the capabilities a process is started with: the client's
// sampling and elicitation, and always roots with listChanged (the chat's
// workspace stands in when the client has none; a client's
// notifications/roots/list_changed is passed on, rootsChanged).
func mirrorCaps(up *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	if up != nil {
		caps.Sampling, caps.Elicitation, caps.Experimental = up.Sampling, up.Elicitation, up.Experimental
	}
	return caps
}

// rootsChangedMarker is the root rootsChanged adds to a process's MCP
// client: adding a root is the go-sdk client's one way to send
// notifications/roots/list_changed. The client's own roots are never
// served (clientOptions answers roots/list), so the marker is not seen.
var rootsChangedMarker = &mcp.Root{URI: "mcpc:roots-changed"}

// rootsChanged passes a client's notifications/roots/list_changed on to
// every running process of the chat, in the background (a process that
// does not read its input must not hold up the client's session). Their
// next roots/list asks the client again.
func (g *Gateway) rootsChanged(gc *gatewayChat) {
	gc.chat.NotifyRootsChanged(rootsChangedMarker)
}

// stopCapabilities is why a process is restarted for a new client.
const stopCapabilities runtime.StopReason = "a client with other capabilities connected to the chat"

// recap restarts the chat's processes that were started with other client
// capabilities than caps and have no call in flight: the next request
// starts them declaring caps. A process that runs calls keeps its
// capabilities; what it asks of the client that the client cannot do is
// refused.
func (g *Gateway) recap(gc *gatewayChat, version string, up *mcp.ClientCapabilities) {
	want := version + " " + jsonOf(mirrorCaps(up))
	gc.chat.RestartOtherCaps(want, stopCapabilities)
}

func loggerSuffix(l string) string {
	if l == "" {
		return ""
	}
	return "/" + l
}

// relistTools lists a server's tools from the chat's process after it said
// they changed; the host's table takes them (tools are named per host, the
// same for every chat), and every gateway's clients are told.
func (g *Gateway) relistTools(ctx context.Context, gc *gatewayChat, server string) {
	if err := gc.chat.RelistServerTools(ctx, server); err != nil {
		g.h.Log("Warning", gc.chat.ID(), server, "MCP server %s: listing its tools again failed: %s", server, gc.chat.Redact(err.Error()))
	}
}

// afterStart gives a new process, or a new remote connection (server is
// the chat's server key), what the chat's client set: the logging
// level and the resource subscriptions. It returns the level it read.
func (g *Gateway) afterStart(ctx context.Context, gc *gatewayChat, server string, cs *mcp.ClientSession) mcp.LoggingLevel {
	caps := cs.InitializeResult().Capabilities
	if caps == nil {
		return ""
	}
	f := gc.feat
	f.lmu.Lock()
	level := f.level
	var subs []string
	for uri := range f.subs {
		subs = append(subs, uri)
	}
	f.lmu.Unlock()
	if level != "" && caps.Logging != nil {
		_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		for _, uri := range subs {
			if gc.ownerOf(uri) == server {
				_ = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
			}
		}
	}
	return level
}

// levelSince gives a process that now counts as running the client's
// logging level if it changed since afterStart read it (was). setLevel
// stores the level before it looks for running processes, so a level set
// while the process started reaches it either way.
func (g *Gateway) levelSince(ctx context.Context, gc *gatewayChat, cs *mcp.ClientSession, was mcp.LoggingLevel) {
	caps := cs.InitializeResult().Capabilities
	if caps == nil || caps.Logging == nil {
		return
	}
	gc.feat.lmu.Lock()
	level := gc.feat.level
	gc.feat.lmu.Unlock()
	if level != was && level != "" {
		_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
	}
}

// ensureFeatures lists the prompts and resources of the chat's servers
// that declare them, once.
func (g *Gateway) ensureFeatures(ctx context.Context, gc *gatewayChat) error {
	if _, err := g.h.Table(ctx); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	f := gc.feat
	f.mu.Lock()
	listed := f.listed
	f.mu.Unlock()
	if listed {
		return nil
	}
	for _, cfg := range gc.chat.ServerEntries() {
		if caps, _ := g.h.ServerCaps(cfg.Name); caps == nil || (caps.Prompts == nil && caps.Resources == nil) {
			continue
		}
		if err := g.listFeatures(ctx, gc, cfg.Name); err != nil {
			g.h.Log("Warning", gc.chat.ID(), cfg.Name, "MCP server %s: its prompts and resources are not offered: %s", cfg.Name, err.Error())
		}
	}
	g.listRemoteFeatures(ctx, gc)
	f.mu.Lock()
	f.listed = true
	f.mu.Unlock()
	return nil
}

// listFeatures lists one server's prompts, resources and templates (every
// page) from the chat's process, or its remote connection (server is a
// feature key, see withServer), and serves them.
func (g *Gateway) listFeatures(ctx context.Context, gc *gatewayChat, server string) error {
	sf := &serverFeatures{}
	err := gc.withServer(ctx, server, "prompts and resources", func(cs *mcp.ClientSession) error {
		caps := cs.InitializeResult().Capabilities
		if caps == nil {
			return nil
		}
		if caps.Prompts != nil {
			for p, err := range cs.Prompts(ctx, nil) {
				if err != nil {
					return err
				}
				sf.prompts = append(sf.prompts, p)
			}
		}
		if caps.Resources != nil {
			for r, err := range cs.Resources(ctx, nil) {
				if err != nil {
					return err
				}
				sf.resources = append(sf.resources, r)
			}
			for t, err := range cs.ResourceTemplates(ctx, nil) {
				if err != nil {
					return err
				}
				sf.templates = append(sf.templates, t)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	f := gc.feat
	f.mu.Lock()
	defer f.mu.Unlock()
	f.per[server] = sf
	g.applyFeatures(gc)
	return nil
}

// applyFeatures registers the listed prompts, resources and templates on
// the chat's server, in plan order of their servers: prompt names as tool
// names (prefix, sanitized, cut, a collision dropped with a warning),
// resource and template names with the prefix, URIs as the server gave them
// (the first server in plan order wins a URI). Only what changed is
// registered again, so clients are told of real changes only. f.mu is held.
func (g *Gateway) applyFeatures(gc *gatewayChat) {
	f, c := gc.feat, gc.chat
	var lists []naming.ServerTools
	var order []featureSource
	for _, src := range gc.sources() {
		sf := f.per[src.key]
		if sf == nil {
			continue
		}
		st := naming.ServerTools{Server: src.name, Prefix: src.prefix, Remote: src.remote}
		for _, p := range sf.prompts {
			st.Tools = append(st.Tools, p.Name)
		}
		lists = append(lists, st)
		order = append(order, src)
	}
	names := naming.Assign(lists, naming.Options{Builtins: []string{}})
	prompts := map[string]promptRef{}
	resources := map[string]registered{}
	templates := map[string]registered{}
	var addP []func()
	var addR []func()
	i := 0
	for _, src := range order {
		server, key := src.name, src.key
		sf := f.per[key]
		for _, p := range sf.prompts {
			res := names[i]
			i++
			if !res.Registered() {
				g.h.Log("Warning", c.ID(), server, "prompt %q of MCP server %s is not offered: %s", p.Name, server, res.Message)
				continue
			}
			def := *p
			def.Name = res.Name
			ref := promptRef{server: key, name: p.Name, def: jsonOf(&def)}
			prompts[res.Name] = ref
			if f.prompts[res.Name] != ref {
				addP = append(addP, func() { gc.server.AddPrompt(&def, g.promptHandler(gc, ref)) })
			}
		}
		for _, r := range sf.resources {
			if prev, taken := resources[r.URI]; taken {
				g.h.Log("Warning", c.ID(), server, "resource %s of MCP server %s is not offered: MCP server %s offers the same URI first", r.URI, server, runtime.ServerDisplayName(prev.server))
				continue
			}
			def := *r
			def.Name = src.prefix + r.Name
			reg := registered{server: key, def: jsonOf(&def)}
			resources[r.URI] = reg
			if f.resources[r.URI] != reg {
				addR = append(addR, func() { gc.server.AddResource(&def, g.readHandler(gc, key)) })
			}
		}
		for _, t := range sf.templates {
			if prev, taken := templates[t.URITemplate]; taken {
				g.h.Log("Warning", c.ID(), server, "resource template %s of MCP server %s is not offered: MCP server %s offers the same template first", t.URITemplate, server, runtime.ServerDisplayName(prev.server))
				continue
			}
			def := *t
			def.Name = src.prefix + t.Name
			reg := registered{server: key, def: jsonOf(&def)}
			templates[t.URITemplate] = reg
			if f.templates[t.URITemplate] != reg {
				addR = append(addR, func() { g.addTemplate(gc, &def, key) })
			}
		}
	}
	var goneP, goneR, goneT []string
	for name, ref := range f.prompts {
		if prompts[name] != ref {
			goneP = append(goneP, name)
		}
	}
	for uri, reg := range f.resources {
		if resources[uri] != reg {
			goneR = append(goneR, uri)
		}
	}
	for tpl, reg := range f.templates {
		if templates[tpl] != reg {
			goneT = append(goneT, tpl)
		}
	}
	if len(goneP) > 0 {
		gc.server.RemovePrompts(goneP...)
	}
	if len(goneR) > 0 {
		gc.server.RemoveResources(goneR...)
	}
	if len(goneT) > 0 {
		gc.server.RemoveResourceTemplates(goneT...)
	}
	for _, add := range addP {
		add()
	}
	for _, add := range addR {
		add()
	}
	f.prompts, f.resources, f.templates = prompts, resources, templates
}

// addTemplate registers a template; the SDK panics on one it cannot parse,
// which is logged and left out.
func (g *Gateway) addTemplate(gc *gatewayChat, def *mcp.ResourceTemplate, key string) {
	defer func() {
		if r := recover(); r != nil {
			g.h.Log("Warning", gc.chat.ID(), runtime.ServerDisplayName(key), "resource template %s of MCP server %s is not offered: %v", def.URITemplate, runtime.ServerDisplayName(key), r)
		}
	}()
	gc.server.AddResourceTemplate(def, g.readHandler(gc, key))
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (g *Gateway) promptHandler(gc *gatewayChat, ref promptRef) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		var res *mcp.GetPromptResult
		err := gc.withServer(ctx, ref.server, "prompts/get", func(cs *mcp.ClientSession) error {
			p := *req.Params
			p.Name = ref.name
			var err error
			res, err = cs.GetPrompt(ctx, &p)
			return err
		})
		if err != nil {
			return nil, err
		}
		return redactValue(gc.chat, res)
	}
}

func (g *Gateway) readHandler(gc *gatewayChat, server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return g.read(ctx, gc, server, req.Params)
	}
}

func (g *Gateway) read(ctx context.Context, gc *gatewayChat, server string, params *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := gc.withServer(ctx, server, "resources/read", func(cs *mcp.ClientSession) error {
		var err error
		res, err = cs.ReadResource(ctx, params)
		return err
	})
	if err != nil {
		return nil, err
	}
	return redactValue(gc.chat, res)
}

// ownerOf is the server of a URI: the one that lists it, else whose
// template matches it, else the one whose tool returned a link to it.
func (gc *gatewayChat) ownerOf(uri string) string {
	f := gc.feat
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.resources[uri]; ok {
		return r.server
	}
	for tpl, r := range f.templates {
		if templateMatches(tpl, uri) {
			return r.server
		}
	}
	return f.links[uri]
}

// templateMatches reports whether uri fits a URI template, by its literal
// parts in order (enough to route; the server checks the rest).
func templateMatches(tpl, uri string) bool {
	rest := uri
	first := true
	for tpl != "" {
		open := strings.IndexByte(tpl, '{')
		lit := tpl
		if open >= 0 {
			lit = tpl[:open]
		}
		if first {
			if !strings.HasPrefix(rest, lit) {
				return false
			}
			rest = rest[len(lit):]
		} else if lit != "" {
			i := strings.Index(rest, lit)
			if i < 0 {
				return false
			}
			rest = rest[i+len(lit):]
		}
		first = false
		if open < 0 {
			return rest == "" || lit == ""
		}
		end := strings.IndexByte(tpl[open:], '}')
		if end < 0 {
			return false
		}
		tpl = tpl[open+end+1:]
		if tpl == "" {
			return true
		}
	}
	return true
}

// noteLinks remembers the resource links of a tool result, so that reading
// them goes to the server that returned them.
func (gc *gatewayChat) noteLinks(server string, res *mcp.CallToolResult) {
	if res == nil {
		return
	}
	f := gc.feat
	for _, ct := range res.Content {
		l, ok := ct.(*mcp.ResourceLink)
		if !ok {
			continue
		}
		f.mu.Lock()
		if len(f.links) >= maxLinks {
			clear(f.links)
		}
		f.links[l.URI] = server
		f.mu.Unlock()
	}
}

// passMiddleware handles the methods that pass through before the SDK
// serves them from the chat's server.
func (g *Gateway) passMiddleware(gc *gatewayChat, next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil {
				gc.feat.lmu.Lock()
				gc.feat.caps, gc.feat.version = p.Capabilities, p.ProtocolVersion
				gc.feat.lmu.Unlock()
				g.recap(gc, p.ProtocolVersion, p.Capabilities)
			}
			if g.opts.StartEarly {
				// Before the instructions wait for the discoveries, so that
				// the processes start alongside them; after the client's
				// capabilities and version are recorded, so that the
				// processes declare those.
				gc.chat.StartEarly()
			}
			if ir, ok := res.(*mcp.InitializeResult); ok {
				ir.Instructions = g.instructions(ctx, gc)
			}
			return res, nil
		case "resources/list", "resources/templates/list", "prompts/list", "prompts/get", "completion/complete",
			"resources/subscribe", "resources/unsubscribe":
			if err := g.ensureFeatures(ctx, gc); err != nil {
				return nil, err
			}
		case "resources/read":
			if err := g.ensureFeatures(ctx, gc); err != nil {
				return nil, err
			}
			res, err := next(ctx, method, req)
			p, _ := req.GetParams().(*mcp.ReadResourceParams)
			if err == nil || p == nil {
				return res, err
			}
			gc.feat.mu.Lock()
			server := gc.feat.links[p.URI]
			gc.feat.mu.Unlock()
			if server == "" {
				return res, err
			}
			return g.read(ctx, gc, server, p)
		case "logging/setLevel":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				g.setLevel(ctx, gc, p.Level)
			}
			return res, nil
		}
		return next(ctx, method, req)
	}
}

// setLevel passes a logging level on to every running process of the chat
// that logs; processes started later get it when they start.
func (g *Gateway) setLevel(ctx context.Context, gc *gatewayChat, level mcp.LoggingLevel) {
	gc.feat.lmu.Lock()
	gc.feat.level = level
	gc.feat.lmu.Unlock()
	for _, cs := range gc.chat.RunningSessions() {
		if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Logging != nil {
			_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
		}
	}
	for _, rs := range gc.chat.RemoteSessions() {
		if caps := rs.Session.InitializeResult().Capabilities; caps != nil && caps.Logging != nil {
			_ = rs.Session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
		}
	}
}

func (g *Gateway) complete(gc *gatewayChat) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		p := *req.Params
		if p.Ref == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref"}
		}
		ref := *p.Ref
		var server string
		switch ref.Type {
		case "ref/prompt":
			gc.feat.mu.Lock()
			pr, ok := gc.feat.prompts[ref.Name]
			gc.feat.mu.Unlock()
			if !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", ref.Name)}
			}
			server, ref.Name = pr.server, pr.name
		case "ref/resource":
			gc.feat.mu.Lock()
			if r, ok := gc.feat.templates[ref.URI]; ok {
				server = r.server
			}
			gc.feat.mu.Unlock()
			if server == "" {
				server = gc.ownerOf(ref.URI)
			}
		}
		if server == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no MCP server offers %s %s", ref.Type, ref.Name+ref.URI)}
		}
		p.Ref = &ref
		var res *mcp.CompleteResult
		err := gc.withServer(ctx, server, "completion/complete", func(cs *mcp.ClientSession) error {
			var err error
			res, err = cs.Complete(ctx, &p)
			return err
		})
		if err != nil {
			return nil, err
		}
		return redactValue(gc.chat, res)
	}
}

func (g *Gateway) subscribe(gc *gatewayChat, on bool) func(context.Context, string) error {
	return func(ctx context.Context, uri string) error {
		server := gc.ownerOf(uri)
		if server == "" {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no MCP server offers resource %s", uri)}
		}
		f := gc.feat
		f.lmu.Lock()
		n := f.subs[uri]
		if on {
			f.subs[uri] = n + 1
		} else if n <= 1 {
			delete(f.subs, uri)
		} else {
			f.subs[uri] = n - 1
		}
		f.lmu.Unlock()
		if (on && n > 0) || (!on && n > 1) {
			return nil // the process already has (or keeps) the subscription
		}
		return gc.withServer(ctx, server, "resources/subscribe", func(cs *mcp.ClientSession) error {
			if on {
				return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
			}
			return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
		})
	}
}

// instructions is the text the host puts into the agent's system prompt,
// in this order: for each server in plan order that offers tools, its
// promptSection, then its own instructions; the Browser section when the
// Playwright preset's server offers tools; then the notes on the chat's
// remote servers that are unavailable or skipped. It waits for the host's
// discovery and for the chat's remote connects, as the host does before it
// builds the prompt.
func (g *Gateway) instructions(ctx context.Context, gc *gatewayChat) string {
	table, err := g.h.Table(ctx)
	if err != nil {
		table = g.h.CurrentTable()
	}
	var parts []string
	browser := false
	for _, cfg := range g.h.PlanServers() {
		if !cfg.Enabled || table.PerServer(cfg.Name) == 0 {
			continue
		}
		if cfg.PromptSection != nil && strings.TrimSpace(*cfg.PromptSection) != "" {
			parts = append(parts, strings.TrimSpace(*cfg.PromptSection))
		}
		if _, own := g.h.ServerCaps(cfg.Name); strings.TrimSpace(own) != "" {
			parts = append(parts, fmt.Sprintf("MCP server %s:\n%s", cfg.Name, strings.TrimSpace(own)))
		}
		if cfg.Name == "playwright" && cfg.Origin.Source == "preset" {
			browser = true
		}
	}
	if browser {
		parts = append(parts, browserSection(table, g.h.Builtins()))
	}
	// The notes come from a listing of the chat's remote servers, which
	// waits for the connects under way (the first session's: started with
	// the chat, each bounded by its connect timeout).
	if gc.chat.HasRemoteServers() {
		_ = gc.chat.RefreshRemote(ctx, table)
	}
	if note := gc.chat.RemotePromptSection(); note != "" {
		parts = append(parts, strings.TrimSpace(note))
	}
	return gc.chat.Redact(strings.Join(parts, "\n\n"))
}

// browserSection is the Browser section of the system prompt. It gives the
// seed's file-name advice (with @playwright/mcp 0.0.82 a bare filename
// lands in the workspace root, not in browser/) and mentions send only
// when a send tool is active: the host's built-in, or a server's tool
// registered under that name when send is not a built-in.
func browserSection(table *runtime.ToolTable, builtins []string) string {
	s := "Browser\nYou control a web browser with the browser_* tools. It keeps this chat's logins between sessions. " +
		"Screenshots saved with filename: \"browser/<name>.png\", PDFs and downloads land in the workspace's browser/ folder; " +
		"a screenshot without a filename comes back to you as an image."
	if slices.Contains(builtins, "send") || table.ByName()["send"] != nil {
		s += " Use send to deliver such a file to the user."
	}
	return s
}

// A gatewayChat is its chat's upstream (port.go).

func (gc *gatewayChat) ProcessOptions(server string, link *runtime.ProcLink) (*mcp.ClientOptions, mcp.Middleware, string) {
	return gc.g.clientOptions(gc, server, link)
}

func (gc *gatewayChat) Started(ctx context.Context, server string, cs *mcp.ClientSession) mcp.LoggingLevel {
	return gc.g.afterStart(ctx, gc, server, cs)
}

func (gc *gatewayChat) StartedLevel(ctx context.Context, cs *mcp.ClientSession, was mcp.LoggingLevel) {
	gc.g.levelSince(ctx, gc, cs, was)
}

func (gc *gatewayChat) RemoteConnected(server string, cs *mcp.ClientSession) {
	gc.g.remoteConnected(gc, server, cs)
}

func (gc *gatewayChat) ListFeatures(ctx context.Context, server string) error {
	return gc.g.listFeatures(ctx, gc, server)
}

func (gc *gatewayChat) ForwardLog(ctx context.Context, server string, link *runtime.ProcLink, params *mcp.LoggingMessageParams) {
	forwardLog(ctx, gc, server, link, params)
}

func (gc *gatewayChat) ResourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams) {
	_ = gc.server.ResourceUpdated(ctx, params)
}

func (gc *gatewayChat) ToolsChanged(table *runtime.ToolTable) { gc.g.sync(gc, table) }
