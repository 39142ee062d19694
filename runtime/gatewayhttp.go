package runtime

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/internal/private"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// Chats served over HTTP, as a gateway bounds them: a chat, its workspace
// and its remote connections come to be only with an MCP session (an
// initialize request that the SDK accepts), so that stray requests cost
// nothing; chats are capped (GatewayOptions.MaxChats) and expire when idle
// (ChatIdleTimeout, on the host's Clock); sessions are capped, in all and
// per chat, and expire (MaxSessions, MaxSessionsPerChat, SessionIdleTimeout:
// the gateway's transport.SessionPool); request bodies must arrive at a
// minimum rate (BodyTimeout), so that slow clients cannot hold connections.

const (
	// DefaultBodyTimeout is GatewayOptions.BodyTimeout's default.
	DefaultBodyTimeout = 10 * time.Second
	// minBodyRate is the slowest rate at which a body may arrive: every
	// minBodyRate bytes read add a second to the body's time.
	minBodyRate = 64 << 10
	// maxBodyBytes caps a request body, as the SDK does by default.
	maxBodyBytes = mcp.DefaultMaxRequestBodyBytes
	// bodyPrealloc bounds the buffer a request body is read into before
	// its bytes arrive.
	bodyPrealloc = 64 << 10
	// sessionHeader is the Streamable HTTP session header.
	sessionHeader = "Mcp-Session-Id"
)

// serveMCP serves a request to /chats/{id}/mcp: authorized, its body read
// within its time, handed to the chat's Streamable HTTP handler. Only an
// initialize creates the chat and its workspace; an initialize that the
// SDK refuses leaves nothing behind.
func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request, id string) {
	if !g.mcpAuthorized(w, r) || !g.hostAllowed(w, r) {
		return
	}
	if g.opts.WorkspaceRoot == "" {
		g.writeError(w, http.StatusInternalServerError, "the gateway has no workspace root")
		return
	}
	if !g.checkProtocolVersion(w, r) {
		return
	}
	body, ok := g.readBody(w, r)
	if !ok {
		return
	}
	sid := r.Header.Get(sessionHeader)
	// A POST body is decoded here, once, for the gateway and the transport.
	var msgs *transport.Body
	var bodyErr error
	if r.Method == http.MethodPost {
		msgs, bodyErr = transport.DecodeBody(body)
	}
	var initID jsonrpc.ID
	init := false
	if r.Method == http.MethodPost && sid == "" {
		initID, init = initializeRequest(msgs)
	}
	// An open GET stream only listens: it does not keep a chat or a
	// session from expiring.
	counted := r.Method != http.MethodGet
	if r.Method == http.MethodPost && sid == "" && !init {
		// The SDK would make a session for it, only to close it after:
		// a session starts with an initialize.
		g.noSession(w, r, id)
		return
	}
	gc, created := g.enter(w, r, id, init, initID, counted)
	if gc == nil {
		return
	}
	defer g.leave(gc, created, counted)
	if r.Method == http.MethodPost && bodyErr != nil {
		g.writeError(w, http.StatusBadRequest, "malformed payload: "+bodyErr.Error())
		return
	}
	if sid != "" && r.Method == http.MethodPost && gc.handler.Has(sid) {
		// A session of the chat: an unknown method is a JSON-RPC error,
		// as over stdio, not a plain-text 400.
		if req, unknown := unknownCall(msgs); unknown {
			writeMethodNotFound(w, req)
			return
		}
	}
	gc.handler.Serve(w, r, id, msgs)
}

// hostAllowed refuses (403) a request that reached a loopback address
// under a name that is not a loopback name: a page of another site that
// had its name resolved to 127.0.0.1 (DNS rebinding).
func (g *Gateway) hostAllowed(w http.ResponseWriter, r *http.Request) bool {
	return loopbackHostAllowed(w, r, g.writeError)
}

// loopbackHostAllowed is hostAllowed, answering with writeError.
func loopbackHostAllowed(w http.ResponseWriter, r *http.Request, writeError func(http.ResponseWriter, int, string)) bool {
	if loopback.HostPort(r.Host) {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback.HostPort(local.String()) {
		return true
	}
	writeError(w, http.StatusForbidden, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host))
	return false
}

// initializeRequest reports whether body is one JSON-RPC initialize
// request, and its id.
func initializeRequest(body *transport.Body) (jsonrpc.ID, bool) {
	if body == nil || len(body.Messages) != 1 {
		return jsonrpc.ID{}, false
	}
	req, ok := body.Messages[0].(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method != "initialize" {
		return jsonrpc.ID{}, false
	}
	return req.ID, true
}

// enter finds the chat of a request and counts the request in. A chat that
// is not served yet is created for an initialize request, within the
// limits; any other request to it is answered here (404 or 400, nothing
// created). A nil chat means the request was answered.
func (g *Gateway) enter(w http.ResponseWriter, r *http.Request, id string, init bool, initID jsonrpc.ID, counted bool) (gc *gatewayChat, created bool) {
	g.mu.Lock()
	if gc := g.served(id); gc != nil {
		defer g.mu.Unlock()
		g.beginLocked(gc, counted)
		return gc, false
	}
	g.mu.Unlock()
	if !init {
		g.noSession(w, r, id)
		return nil, false
	}

	// A new chat: one creation at a time, so that two initializes for the
	// same new id make one chat, and the cap is exact.
	g.createMu.Lock()
	defer g.createMu.Unlock()
	g.mu.Lock()
	if gc := g.served(id); gc != nil {
		defer g.mu.Unlock()
		g.beginLocked(gc, counted)
		return gc, false
	}
	if g.closed {
		g.mu.Unlock()
		g.writeError(w, http.StatusServiceUnavailable, ErrHostClosed.Error())
		return nil, false
	}
	if max := g.opts.MaxChats; max > 0 && g.httpChats >= max {
		first := !g.chatsLogged
		g.chatsLogged = true
		g.mu.Unlock()
		msg := fmt.Sprintf("the gateway serves its maximum of %d chats (--max-chats): no new chat until one closes%s", max, idleNote("a chat", g.opts.ChatIdleTimeout))
		if first {
			g.h.log("Warning", "", "", "%s; a new chat is refused with 503", msg)
		}
		writeRPCError(w, http.StatusServiceUnavailable, initID, msg)
		return nil, false
	}
	g.mu.Unlock()

	// The workspace first: the chat reads its servers.json at once.
	ws := filepath.Join(g.opts.WorkspaceRoot, id)
	_, statErr := os.Stat(ws)
	madeDir := errors.Is(statErr, os.ErrNotExist)
	err := os.MkdirAll(ws, 0o700)
	var chat *Chat
	if err == nil {
		chat, err = g.h.Chat(id, ws)
	}
	if err == nil {
		gc, err = g.chatServer(chat)
	}
	if err != nil {
		if chat != nil {
			chat.Close()
		}
		if madeDir {
			os.Remove(ws)
		}
		g.writeError(w, http.StatusServiceUnavailable, g.h.Redact(err.Error()))
		return nil, false
	}
	g.mu.Lock()
	if g.closed {
		// Gateway.Close came in between: it did not see this chat.
		g.mu.Unlock()
		chat.Close()
		g.writeError(w, http.StatusServiceUnavailable, ErrHostClosed.Error())
		return nil, false
	}
	defer g.mu.Unlock()
	server := gc.server
	gc.http = true
	gc.madeDir = madeDir
	gc.handler = transport.NewStreamableServer(server, transport.StreamableOptions{EventStore: newEventStore(), Retry: sseRetry, Pool: g.pool})
	g.httpChats++
	g.chatsChangedLocked()
	g.beginLocked(gc, counted)
	return gc, true
}

// served returns the chat id served over HTTP, nil if there is none. g.mu
// is held.
func (g *Gateway) served(id string) *gatewayChat {
	gc := g.chats[id]
	if gc == nil || !gc.http || gc.gone {
		return nil
	}
	return gc
}

// idleNote says when what closes by itself, "" if it never does.
func idleNote(what string, d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%s closes after %s without requests)", what, transport.FormatDuration(d))
}

// noSession answers a request that is not an initialize, to a chat that is
// not served: as for a session that does not exist, nothing is created.
func (g *Gateway) noSession(w http.ResponseWriter, r *http.Request, id string) {
	sid := r.Header.Get(sessionHeader)
	switch {
	case r.Method != http.MethodPost && r.Method != http.MethodGet && r.Method != http.MethodDelete:
		w.Header().Set("Allow", "GET, POST, DELETE")
		g.writeError(w, http.StatusMethodNotAllowed, "use POST, GET or DELETE")
	case sid != "":
		g.writeError(w, http.StatusNotFound, fmt.Sprintf("chat %q has no such MCP session (it ended, expired, or never existed): send a new initialize request", id))
	case r.Method == http.MethodPost:
		g.writeError(w, http.StatusBadRequest, fmt.Sprintf("no Mcp-Session-Id for chat %q: an MCP session starts with an initialize request (POST, no Mcp-Session-Id)", id))
	default:
		g.writeError(w, http.StatusBadRequest, fmt.Sprintf("%s needs the Mcp-Session-Id header of a session of chat %q", r.Method, id))
	}
}

// beginLocked counts a request in (counted: not an open GET stream): its
// chat is not idle while it runs. g.mu is held.
func (g *Gateway) beginLocked(gc *gatewayChat, counted bool) {
	if !counted {
		return
	}
	gc.active++
	if gc.idle != nil {
		gc.idle.Stop()
		gc.idle = nil
	}
}

// work counts a handler of the SDK in, for a chat served over HTTP, and
// returns the function that counts it out (nil: not counted).
func (g *Gateway) work(gc *gatewayChat) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !gc.http || gc.gone {
		return nil
	}
	g.beginLocked(gc, true)
	return func() { g.leave(gc, false, true) }
}

// leave counts a request out. A chat that this request created and that
// has no session after it (the SDK refused the initialize, or the
// session pool did) is dropped again, with the workspace directory it
// made.
func (g *Gateway) leave(gc *gatewayChat, created, counted bool) {
	g.mu.Lock()
	if counted {
		gc.active--
	}
	drop := created && !gc.gone && gc.active == 0 && gc.handler.Len() == 0
	if drop {
		g.forgetLocked(gc)
	} else {
		g.armChatLocked(gc)
	}
	g.mu.Unlock()
	if drop {
		gc.chat.closeFor(stopChatClosed)
		if gc.madeDir {
			os.Remove(gc.chat.workspace) // only if still empty
		}
	}
}

// chatsChangedLocked tells GatewayOptions.ChatsChanged the number of chats
// served over HTTP. g.mu is held.
func (g *Gateway) chatsChangedLocked() {
	if g.opts.ChatsChanged != nil {
		g.opts.ChatsChanged(g.httpChats)
	}
}

// forgetLocked takes gc out of the gateway: new requests for its id find no
// chat. g.mu is held.
func (g *Gateway) forgetLocked(gc *gatewayChat) {
	gc.gone = true
	if g.chats[gc.chat.id] == gc {
		delete(g.chats, gc.chat.id)
	}
	g.httpChats--
	g.chatsChangedLocked()
	if g.httpChats < g.opts.MaxChats {
		g.chatsLogged = false
	}
	if gc.idle != nil {
		gc.idle.Stop()
		gc.idle = nil
	}
}

// armChatLocked starts gc's idle wait when no request runs. g.mu is held.
func (g *Gateway) armChatLocked(gc *gatewayChat) {
	d := g.opts.ChatIdleTimeout
	if d <= 0 || gc.active > 0 || gc.gone || g.closed {
		return
	}
	if gc.idle != nil {
		gc.idle.Stop()
	}
	gc.idleGen++
	gen := gc.idleGen
	gc.idle = g.h.clock.AfterFunc(d, func() { g.chatIdle(gc, gen, d) })
}

// chatIdle closes a chat that had no request for d: its sessions end, its
// processes stop as on a reset, and the gateway and the host forget it.
// It runs in the clock's goroutine and returns once the processes are
// gone.
func (g *Gateway) chatIdle(gc *gatewayChat, gen uint64, d time.Duration) {
	g.mu.Lock()
	if g.closed || gc.gone || gc.active > 0 || gc.idleGen != gen {
		g.mu.Unlock()
		return
	}
	g.forgetLocked(gc)
	g.mu.Unlock()
	g.h.do(func() {
		// The processes first: a handler still running (there should be
		// none) then ends, and closing its session does not wait for it.
		gc.chat.closeFor(stopReason("the chat was idle for " + transport.FormatDuration(d)))
		for ss := range gc.server.Sessions() {
			_ = ss.Close()
		}
		g.h.log("Information", gc.chat.id, "", "chat %s closed after %s without requests: its sessions ended and its server processes stopped (its workspace stays)", gc.chat.id, transport.FormatDuration(d))
	})
}

// stopTimersLocked stops every idle wait, when the gateway closes. g.mu is
// held.
func (g *Gateway) stopTimersLocked() {
	for _, gc := range g.chats {
		if gc.idle != nil {
			gc.idle.Stop()
			gc.idle = nil
		}
	}
}

// readBody reads the request body whole, at most maxBodyBytes (413
// beyond), and at least at minBodyRate after the first BodyTimeout (408
// otherwise, and the connection is closed): a client cannot hold a
// connection, and its descriptor, by sending slowly or not at all. The
// body is put back for the SDK.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	return readRequestBody(w, r, g.opts.BodyTimeout, g.writeError)
}

// readRequestBody is readBody, with its timeout (0: DefaultBodyTimeout),
// answering with writeError.
func readRequestBody(w http.ResponseWriter, r *http.Request, timeout time.Duration, writeError func(http.ResponseWriter, int, string)) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(timeout)
	// A server that cannot set deadlines (not a net/http connection) reads
	// without one.
	limited := rc.SetReadDeadline(deadline) == nil
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	// Read straight into one buffer, of the declared length (and a byte to
	// see the end without growing), as a client almost always declares it,
	// up to bodyPrealloc: beyond, it grows as the body arrives, so that a
	// length declared but never sent costs nothing. A 32 KiB chunk per
	// request was the largest allocation of a proxied call here (issue 13).
	size := 512
	if r.ContentLength > 0 {
		size = int(min(r.ContentLength+1, bodyPrealloc))
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		// More time only while more is to come: a body that arrived whole
		// (its declared length) needs no other deadline.
		if n > 0 && limited && err == nil && (r.ContentLength < 0 || int64(len(buf)) < r.ContentLength) {
			deadline = deadline.Add(time.Duration(n) * time.Second / minBodyRate)
			_ = rc.SetReadDeadline(deadline)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", maxBodyBytes))
			case errors.Is(err, os.ErrDeadlineExceeded):
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive in time (%s, plus 1s per %d KiB)", transport.FormatDuration(timeout), minBodyRate>>10))
			default:
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusBadRequest, "the request body could not be read")
			}
			return nil, false
		}
	}
	if limited {
		_ = rc.SetReadDeadline(time.Time{}) // a stream answer may last
	}
	return buf, true
}

// mcpAuthorized checks the MCP token, if the gateway has one; a request
// without it gets 401.
func (g *Gateway) mcpAuthorized(w http.ResponseWriter, r *http.Request) bool {
	tok := g.opts.MCPToken
	if tok == "" || bearerMatches(r, tok) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="mcpc"`)
	g.writeError(w, http.StatusUnauthorized, "the MCP endpoints need the header Authorization: Bearer <token>: the token of --mcp-token-env, else the one in the MCP token file that mcpc run logged")
	return false
}

// bearerMatches reports whether r carries "Authorization: Bearer <tok>",
// compared in constant time.
func bearerMatches(r *http.Request, tok string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return private.SameToken(got, tok) && ok
}

// writeRPCError answers a JSON-RPC request with an error, as the SDK does
// for requests it refuses before serving them.
func writeRPCError(w http.ResponseWriter, code int, id jsonrpc.ID, msg string) {
	data, err := transport.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: transport.CodeLimit, Message: msg}})
	if err != nil {
		data = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"refused"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// serveServerDetail answers GET /chats/{id}/servers/{name}: one server in
// one chat in detail (SPEC §4, /mcp <name>): command line without
// environment values, environment names, server version, tools, last
// error, stderr tail, all redacted. rest is the path after /chats/.
func (g *Gateway) serveServerDetail(w http.ResponseWriter, r *http.Request, rest string) {
	i := strings.Index(rest, "/servers/")
	id, ok := g.chatID(w, rest[:i])
	if !ok || !g.admin(w, r, http.MethodGet) {
		return
	}
	escaped := rest[i+len("/servers/"):]
	if strings.Contains(escaped, "/") {
		if strings.HasSuffix(escaped, "/restart") {
			w.Header().Set("Allow", http.MethodPost)
			g.writeError(w, http.StatusMethodNotAllowed, "use POST to restart a server")
			return
		}
		g.writeError(w, http.StatusNotFound, "not found: the endpoints under /chats/{id}/servers/ are {name} (GET) and {name}/restart (POST)")
		return
	}
	name, err := url.PathUnescape(escaped)
	if err != nil {
		g.writeError(w, http.StatusBadRequest, "the server name is not a valid URL path segment")
		return
	}
	c, found := g.h.FindChat(id)
	if !found {
		g.writeError(w, http.StatusNotFound, fmt.Sprintf("no chat %q: it has not been used since the gateway started", id))
		return
	}
	d, found := c.Server(name)
	if !found {
		g.writeError(w, http.StatusNotFound, fmt.Sprintf("chat %q has no server %q: the plan's servers are %s", id, name, strings.Join(g.h.ServerNames(), ", ")))
		return
	}
	g.writeJSON(w, http.StatusOK, d)
}
