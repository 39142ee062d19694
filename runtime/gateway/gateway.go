package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// The gateway serves a Host as MCP servers (`mcpc run`): one chat over a
// transport such as stdio, or one chat per /chats/{id}/mcp over Streamable
// HTTP, with admin endpoints beside them. Every chat is an mcp.Server of its
// own whose tools are the host's agent-visible tools, then the chat's remote
// tools; a call goes to the chat's process of the tool's server, or to the
// chat's connection to the remote server.

// ChatIDPattern is what a chat id in a gateway URL must match.
var ChatIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// GatewayOptions configure a Gateway.
type GatewayOptions struct {
	// Version is the gateway's server version in initialize.
	Version string
	// WorkspaceRoot is the directory under which a chat served over HTTP
	// gets its workspace, WorkspaceRoot/{id}, created (0700) on first use.
	WorkspaceRoot string
	// AdminToken, if set, must be sent as "Authorization: Bearer <token>"
	// to the admin endpoints (GET /status, POST /chats/{id}/reset, POST
	// /chats/{id}/servers/{name}/restart). Without it they answer only
	// requests addressed to a loopback host name, as the MCP endpoints do
	// (protection against DNS rebinding); the caller must then listen on
	// loopback only.
	AdminToken string
	// MCPToken, if set, must be sent as "Authorization: Bearer <token>"
	// with every request to /chats/{id}/mcp; others get 401. Without it
	// the MCP endpoints are not authenticated.
	MCPToken string

	// What a chat served over HTTP may hold (see gatewayhttp.go). A chat
	// and its workspace are created only by an initialize request that the
	// SDK accepts; any other request to an unknown chat creates nothing.

	// MaxChats caps the chats served over HTTP at once; an initialize for
	// one more gets 503. 0: no cap.
	MaxChats int
	// MaxSessions caps the MCP sessions open over HTTP at once, over all
	// chats, and MaxSessionsPerChat those of one chat; 0: no cap. At a cap
	// a new session takes the place of the one that waited longest (one
	// whose client never went on after initialize, else the longest idle);
	// only if every session has a request in flight does the initialize
	// get 503 (transport.SessionPool). A session whose client sends
	// nothing after the answer to its initialize closes after
	// transport.DefaultInitGrace.
	MaxSessions        int
	MaxSessionsPerChat int
	// ChatsChanged, if set, is told the number of chats served over HTTP
	// each time a chat is added or forgotten (mcpc run --http sizes its
	// processors by it). It is called with the gateway's lock held, in
	// the order of the changes, and must not call the gateway.
	ChatsChanged func(open int)
	// ChatIdleTimeout closes a chat served over HTTP once no request (other
	// than an open GET stream) has reached it for that long, on the host's
	// Clock: its sessions end, its processes stop as on a reset, and the
	// gateway forgets it; its workspace stays. 0: never.
	ChatIdleTimeout time.Duration
	// SessionIdleTimeout closes an MCP session once no request (other than
	// an open GET stream) has used it for that long, on the host's Clock;
	// the client then gets 404 and must initialize again. 0: never.
	SessionIdleTimeout time.Duration
	// BodyTimeout bounds reading a request body: it must arrive within
	// BodyTimeout plus one second per 64 KiB (minBodyRate), else the
	// request gets 408 and its connection is closed. 0 means
	// DefaultBodyTimeout. Real time: it is a deadline on the connection.
	BodyTimeout time.Duration
	// StartEarly starts a chat's process of every enabled stdio server
	// when a client initializes a session on the chat, instead of at the
	// chat's first call to the server (Chat.StartEarly); a start of a
	// server not discovered yet is its first discovery (the host's tools
	// are what that process lists). Off by default: the host starts
	// a chat's process at its first call (SPEC §4), and an early start runs
	// a process for every chat that connects, whether it calls or not (one
	// that gets no call stops after idleTimeoutSeconds). mcpc run
	// --start-early.
	StartEarly bool
}

// Gateway serves a host's chats over MCP. Create it with NewGateway; it is
// safe for concurrent use.
//
// Example, one chat over stdio:
//
//	gw := gateway.NewGateway(host, gateway.GatewayOptions{Version: "1.0"})
//	defer gw.Close()
//	chat, _ := host.Chat("stdio", workspace)
//	err := gw.ServeTransport(ctx, chat, &mcp.StdioTransport{})
//
// Example, a chat per URL:
//
//	gw := gateway.NewGateway(host, gateway.GatewayOptions{WorkspaceRoot: "/srv/chats"})
//	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: gw}
//	// POST http://127.0.0.1:8080/chats/42/mcp is chat 42 in /srv/chats/42
type Gateway struct {
	h    *runtime.Host
	opts GatewayOptions

	mu     sync.Mutex
	closed bool
	chats  map[string]*gatewayChat // by chat id

	// Chats served over HTTP (gatewayhttp.go); g.mu guards them.
	createMu    sync.Mutex // one chat creation at a time
	httpChats   int        // chats with http set
	chatsLogged bool       // MaxChats was logged since it was last not reached

	front *mcpFront              // the MCP endpoints' middleware (httpfront.go)
	pool  *transport.SessionPool // front's: the sessions of every chat served over HTTP
}

// gatewayChat is one chat's MCP server.
type gatewayChat struct {
	g       *Gateway
	chat    *runtime.Chat
	server  *mcp.Server
	handler *mcp.StreamableHTTPHandler // the SDK's Streamable HTTP; nil until served over HTTP

	// Over HTTP (guarded by the gateway's mu): requests in flight, the idle
	// timer.
	http    bool
	madeDir bool // the gateway created the workspace directory for it
	gone    bool // closed, or dropped after a refused initialize
	active  int
	idle    runtime.Timer
	idleGen uint64

	feat *features // prompts, resources, logging level, subscriptions (passthrough.go)

	mu    sync.Mutex
	gen   uint64                   // the tool table generation the server holds
	rgen  uint64                   // the generation of the chat's remote tools it holds
	tools map[string]*runtime.Tool // registered on server, by visible name
}

// has reports whether the server offers a tool of that name.
func (gc *gatewayChat) has(name string) bool {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	return gc.tools[name] != nil
}

// NewGateway returns a gateway for h. It subscribes to h's tool changes,
// so that clients get notifications/tools/list_changed when a discovery
// retry adds tools.
func NewGateway(h *runtime.Host, opts GatewayOptions) *Gateway {
	g := &Gateway{h: h, opts: opts, chats: map[string]*gatewayChat{}}
	g.front = newMCPFront(h.Clock(), opts.MCPToken, opts.BodyTimeout, opts.MaxSessions, opts.MaxSessionsPerChat, opts.SessionIdleTimeout,
		h.RedactLog, func(level, chat, msg string) { h.Log(level, chat, "", "%s", msg) })
	g.pool = g.front.pool
	h.OnToolsChanged(g.toolsChanged)
	return g
}

// Close ends every MCP session of the gateway. It does not close the host.
func (g *Gateway) Close() {
	g.mu.Lock()
	g.closed = true
	g.stopTimersLocked()
	g.pool.Close()
	chats := make([]*gatewayChat, 0, len(g.chats))
	for _, gc := range g.chats {
		chats = append(chats, gc)
	}
	g.mu.Unlock()
	for _, gc := range chats {
		for ss := range gc.server.Sessions() {
			_ = ss.Close()
		}
	}
}

// ServeTransport serves chat over one MCP transport (such as
// mcp.StdioTransport or mcp.IOTransport) until the client disconnects or
// ctx ends.
func (g *Gateway) ServeTransport(ctx context.Context, chat *runtime.Chat, t mcp.Transport) error {
	gc, err := g.chatServer(chat)
	if err != nil {
		return err
	}
	// mcp.Server.Run, with the session handed to the fast path of
	// tools/call (fastcall.go).
	ft := &fastTransport{inner: validErrors(t), gc: gc, ctx: ctx}
	ss, err := gc.server.Connect(ctx, ft, nil)
	if err != nil {
		return err
	}
	ft.conn.session.Store(ss)
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		err = ctx.Err()
	case err = <-ended:
	}
	ft.conn.stop(err)
	ft.conn.running.Wait()
	return err
}

// chatServer returns the MCP server of chat, creating it on first use.
func (g *Gateway) chatServer(chat *runtime.Chat) (*gatewayChat, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, runtime.ErrHostClosed
	}
	if gc, ok := g.chats[chat.ID()]; ok && gc.chat == chat {
		return gc, nil
	}
	gc := &gatewayChat{g: g, chat: chat, tools: map[string]*runtime.Tool{}, feat: newFeatures()}
	subscribe, unsubscribe := g.subscribe(gc, true), g.subscribe(gc, false)
	gc.server = mcp.NewServer(&mcp.Implementation{Name: "mcpc", Version: g.opts.Version}, &mcp.ServerOptions{
		// Tools are listed even before any is known; prompts and resources
		// of the servers pass through (passthrough.go), and so do log
		// messages.
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
		// The same versions over stdio and HTTP (protocol.go).
		SupportedProtocolVersions: GatewayProtocolVersions(),
		CompletionHandler:         g.complete(gc),
		SubscribeHandler:          func(ctx context.Context, req *mcp.SubscribeRequest) error { return subscribe(ctx, req.Params.URI) },
		UnsubscribeHandler:        func(ctx context.Context, req *mcp.UnsubscribeRequest) error { return unsubscribe(ctx, req.Params.URI) },
		RootsListChangedHandler:   func(context.Context, *mcp.RootsListChangedRequest) { g.rootsChanged(gc) },
	})
	chat.Serve(gc)
	gc.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler { return g.passMiddleware(gc, next) })
	gc.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			// A handler may outlive its HTTP request (a client that went
			// away): it keeps its chat and session from expiring.
			if done := g.work(gc); done != nil {
				defer done()
			}
			if method == "tools/list" || method == "tools/call" {
				if err := g.prepareTools(ctx, gc, method == "tools/list", callName(req)); err != nil {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	})
	g.chats[chat.ID()] = gc
	// Register the tools known so far while no session is connected: the SDK
	// tells connected clients about every change (notifications/tools/
	// list_changed), and a client that connects must not get one for tools
	// that were there all along. Only a chat that connects before the first
	// discovery gets tools, and that notification, on its first listing.
	if table := g.h.CurrentTable(); table.Gen() > 0 {
		g.sync(gc, table)
	} else if _, rgen := chat.RemoteTools(); rgen > 0 {
		g.sync(gc, table)
	}
	return gc, nil
}

// toolsChanged brings every chat's server up to date; the SDK notifies the
// connected clients.
func (g *Gateway) toolsChanged() {
	table := g.h.CurrentTable()
	g.mu.Lock()
	chats := make([]*gatewayChat, 0, len(g.chats))
	for _, gc := range g.chats {
		chats = append(chats, gc)
	}
	g.mu.Unlock()
	for _, gc := range chats {
		g.sync(gc, table)
	}
}

// prepareTools is what a listing of the tools or a call (of the tool
// name) does first. Discovery runs here, on the first listing or call,
// shared by every chat asking at the same time. The chat's remote
// servers: every listing re-reads servers.json and retries the servers
// that are due; a call lists them only for a name the chat does not know
// yet.
func (g *Gateway) prepareTools(ctx context.Context, gc *gatewayChat, listing bool, name string) error {
	table, err := g.h.Table(ctx)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	if chat := gc.chat; chat.HasRemote() && (listing || !gc.has(name)) {
		if err := chat.RefreshRemote(ctx, table); err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: chat.Redact(err.Error())}
		}
	}
	g.sync(gc, table)
	return nil
}

// callName is the tool name of a tools/call request.
func callName(req mcp.Request) string {
	if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
		return p.Name
	}
	return ""
}

// sync makes gc's server offer exactly the tools of table (or of a newer
// one) and the chat's remote tools whose names no stdio tool has.
func (g *Gateway) sync(gc *gatewayChat, table *runtime.ToolTable) {
	rtools, rgen := gc.chat.RemoteTools()
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if table.Gen() < gc.gen {
		table = g.h.CurrentTable()
	}
	if table.Gen() <= gc.gen && rgen == gc.rgen {
		return
	}
	want := table.ByName()
	list := table.Tools()
	if len(rtools) > 0 {
		want = make(map[string]*runtime.Tool, len(table.ByName())+len(rtools))
		for name, t := range table.ByName() {
			want[name] = t
		}
		list = append([]*runtime.Tool(nil), table.Tools()...)
		for _, t := range rtools {
			if want[t.Name] == nil {
				want[t.Name] = t
				list = append(list, t)
			}
		}
	}
	var gone []string
	for name, t := range gc.tools {
		if want[name] != t {
			gone = append(gone, name)
			delete(gc.tools, name)
		}
	}
	if len(gone) > 0 {
		gc.server.RemoveTools(gone...)
	}
	for _, t := range list {
		if gc.tools[t.Name] == t {
			continue
		}
		if g.addTool(gc, t) {
			gc.tools[t.Name] = t
		}
	}
	gc.gen, gc.rgen = max(gc.gen, table.Gen()), rgen
}

// addTool registers t on gc's server. The SDK panics on tool definitions it
// cannot serve (say, a bad x-mcp-header annotation); such a tool is logged
// and left out rather than taking the gateway down.
func (g *Gateway) addTool(gc *gatewayChat, t *runtime.Tool) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			g.h.Log("Warning", gc.chat.ID(), t.Server, "tool %q of server %q is not served: %v", t.ServerTool, t.Server, r)
			ok = false
		}
	}()
	gc.server.AddTool(t.Def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		var arguments []byte
		var progress any
		if req.Params != nil {
			arguments, progress = req.Params.Arguments, req.Params.GetProgressToken()
		}
		return gc.callTool(ctx, ss, t, arguments, progress)
	})
	return true
}

// callTool calls t for a client session with the call's arguments (JSON)
// and progress token: what the tool's handler does, and the stdio fast
// path (fastcall.go).
func (gc *gatewayChat) callTool(ctx context.Context, ss *mcp.ServerSession, t *runtime.Tool, arguments []byte, progress any) (*mcp.CallToolResult, error) {
	// Absent or null arguments go on as {}: servers validate them as an
	// object, and null would fail there.
	var args any
	if raw := bytes.TrimSpace(arguments); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		args = json.RawMessage(arguments)
	}
	o := runtime.NewCallOrigin(ctx, ss, progress)
	res, err := gc.chat.Call(runtime.WithOrigin(ctx, o), t.Name, args)
	if t.Remote {
		gc.noteLinks(runtime.RemoteKey(t.Server), res)
	} else {
		gc.noteLinks(t.Server, res)
	}
	return callResult(res, err)
}

// callResult turns a Chat.Call outcome into what an MCP client gets. Errors
// the agent should read (the server died, timed out, failed to start) are
// tool results with isError, as MCP asks for tool execution errors; an
// unknown tool or a server's own JSON-RPC error stays a protocol error.
func callResult(res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if err == nil {
		return res, nil
	}
	var ce *runtime.CallError
	if !errors.As(err, &ce) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	switch ce.Kind {
	case runtime.CallUnknownTool:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ce.Message}
	case runtime.CallServerError:
		return nil, &jsonrpc.Error{Code: ce.Code, Message: ce.Message}
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: ce.Message}}}, nil
}

// ServeHTTP routes /chats/{id}/mcp to the chat's Streamable HTTP endpoint
// and serves the admin endpoints GET /status, GET /chats/{id}/servers/{name},
// POST /chats/{id}/reset, POST /chats/{id}/servers/{name}/restart, GET
// /chats/{id}/tools and POST /chats/{id}/tools/call. A
// browser page of a foreign Origin gets 403 everywhere.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Route on the escaped path, before anything cleans it: "/chats/../mcp"
	// and "/chats/a%2Fb/mcp" must reach the id check and be refused, not be
	// redirected or split.
	p := r.URL.EscapedPath()
	if !allowedOrigin(r) {
		g.writeError(w, http.StatusForbidden, fmt.Sprintf("Origin %q is not a loopback origin: the gateway answers browser pages on this machine only", r.Header.Get("Origin")))
		return
	}
	if p == "/status" {
		if g.admin(w, r, http.MethodGet) {
			g.writeJSON(w, http.StatusOK, g.h.Status())
		}
		return
	}
	rest, ok := strings.CutPrefix(p, "/chats/")
	if !ok {
		g.writeError(w, http.StatusNotFound, "not found: the endpoints are /chats/{id}/mcp, GET /status, GET /chats/{id}/servers/{name}, POST /chats/{id}/reset and POST /chats/{id}/servers/{name}/restart")
		return
	}
	switch {
	case strings.HasSuffix(rest, "/mcp"):
		id, ok := g.chatID(w, strings.TrimSuffix(rest, "/mcp"))
		if ok {
			g.serveMCP(w, r, id)
		}
	case !strings.Contains(rest, "/servers/") && (strings.HasSuffix(rest, "/tools") || strings.HasSuffix(rest, "/tools/call")):
		g.serveChatTools(w, r, rest)
	case strings.HasSuffix(rest, "/reset"):
		id, ok := g.chatID(w, strings.TrimSuffix(rest, "/reset"))
		if !ok || !g.admin(w, r, http.MethodPost) {
			return
		}
		c, found := g.h.FindChat(id)
		if !found {
			g.writeError(w, http.StatusNotFound, fmt.Sprintf("no chat %q: it has not been used since the gateway started", id))
			return
		}
		c.Reset()
		g.writeJSON(w, http.StatusOK, map[string]any{"chat": id, "reset": true})
	case r.Method == http.MethodGet && strings.Contains(rest, "/servers/"):
		g.serveServerDetail(w, r, rest)
	case strings.HasSuffix(rest, "/restart") && strings.Contains(rest, "/servers/"):
		i := strings.LastIndex(rest, "/servers/")
		id, ok := g.chatID(w, rest[:i])
		if !ok || !g.admin(w, r, http.MethodPost) {
			return
		}
		name, err := url.PathUnescape(strings.TrimSuffix(rest[i+len("/servers/"):], "/restart"))
		if err != nil {
			g.writeError(w, http.StatusBadRequest, "the server name is not a valid URL path segment")
			return
		}
		c, found := g.h.FindChat(id)
		if !found {
			g.writeError(w, http.StatusNotFound, fmt.Sprintf("no chat %q: it has not been used since the gateway started", id))
			return
		}
		if err := c.Restart(name); err != nil {
			g.writeError(w, http.StatusNotFound, err.Error())
			return
		}
		g.writeJSON(w, http.StatusOK, map[string]any{"chat": id, "server": name, "restarted": true})
	default:
		g.writeError(w, http.StatusNotFound, "not found: the endpoints under /chats/{id}/ are mcp, reset, servers/{name} and servers/{name}/restart")
	}
}

// serveChatTools answers GET /chats/{id}/tools and POST
// /chats/{id}/tools/call (admintools.go) for a chat the gateway has.
func (g *Gateway) serveChatTools(w http.ResponseWriter, r *http.Request, rest string) {
	escaped, call := strings.CutSuffix(rest, "/tools/call")
	if !call {
		escaped = strings.TrimSuffix(rest, "/tools")
	}
	method := http.MethodGet
	if call {
		method = http.MethodPost
	}
	id, ok := g.chatID(w, escaped)
	if !ok || !g.admin(w, r, method) {
		return
	}
	c, found := g.h.FindChat(id)
	if !found {
		g.writeError(w, http.StatusNotFound, fmt.Sprintf("no chat %q: it has not been used since the gateway started", id))
		return
	}
	if call {
		serveAdminCall(w, r, c, g.h.RedactLog)
	} else {
		serveAdminTools(w, r, c, g.h.RedactLog)
	}
}

// chatID checks an escaped id from a URL; a bad one is answered with 400.
func (g *Gateway) chatID(w http.ResponseWriter, escaped string) (string, bool) {
	id, err := url.PathUnescape(escaped)
	if err != nil || !ChatIDPattern.MatchString(id) {
		g.writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid chat id %q: use 1 to 64 characters of A-Z a-z 0-9 _ -", escaped))
		return "", false
	}
	return id, true
}

// admin authorizes an admin request and checks its method.
func (g *Gateway) admin(w http.ResponseWriter, r *http.Request, method string) bool {
	return adminAllowed(w, r, g.opts.AdminToken, method, g.h.RedactLog)
}

// writeJSON answers with the one status writer: redacted, not cached.
func (g *Gateway) writeJSON(w http.ResponseWriter, code int, v any) {
	writeStatusJSON(w, code, v, g.h.RedactLog)
}

func (g *Gateway) writeError(w http.ResponseWriter, code int, msg string) {
	writeStatusError(w, code, msg, g.h.RedactLog)
}

// ChatIDs returns the ids of the chats the gateway serves, sorted.
func (g *Gateway) ChatIDs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := make([]string, 0, len(g.chats))
	for id := range g.chats {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
