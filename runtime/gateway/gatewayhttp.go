package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// Chats served over HTTP, as a gateway bounds them: a chat, its workspace
// and its remote connections come to be only with an MCP session (an
// initialize request that the SDK accepts), so that stray requests cost
// nothing; chats are capped (GatewayOptions.MaxChats) and expire when idle
// (ChatIdleTimeout, on the host's Clock). Each chat's endpoint is the
// go-sdk's Streamable HTTP handler behind the gateway's mcpFront
// (httpfront.go): the token, Host, protocol version and body checks, and
// the session caps and expiry over all chats.

// serveMCP serves a request to /chats/{id}/mcp: checked and read by the
// front, handed to the chat's Streamable HTTP handler. Only an initialize
// creates the chat and its workspace; an initialize that the SDK refuses
// leaves nothing behind.
func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request, id string) {
	m := g.front.check(w, r)
	if m == nil {
		return
	}
	if g.opts.WorkspaceRoot == "" {
		g.writeError(w, http.StatusInternalServerError, "the gateway has no workspace root")
		return
	}
	// An open GET stream only listens: it does not keep a chat from
	// expiring.
	counted := r.Method != http.MethodGet
	if r.Method == http.MethodPost && m.sid == "" && !m.init {
		// The SDK would make a session for it, only to close it after:
		// a session starts with an initialize.
		g.noSession(w, r, id)
		return
	}
	gc, created := g.enter(w, r, id, m.init, m.initID, counted)
	if gc == nil {
		return
	}
	defer g.leave(gc, created, counted)
	g.front.serve(w, r, m, id, gc.server, gc.handler)
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
		g.writeError(w, http.StatusServiceUnavailable, runtime.ErrHostClosed.Error())
		return nil, false
	}
	if max := g.opts.MaxChats; max > 0 && g.httpChats >= max {
		first := !g.chatsLogged
		g.chatsLogged = true
		g.mu.Unlock()
		msg := fmt.Sprintf("the gateway serves its maximum of %d chats (--max-chats): no new chat until one closes%s", max, idleNote("a chat", g.opts.ChatIdleTimeout))
		if first {
			g.h.Log("Warning", "", "", "%s; a new chat is refused with 503", msg)
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
	var chat *runtime.Chat
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
		g.writeError(w, http.StatusServiceUnavailable, runtime.ErrHostClosed.Error())
		return nil, false
	}
	defer g.mu.Unlock()
	server := gc.server
	gc.http = true
	gc.madeDir = madeDir
	server.AddReceivingMiddleware(g.front.countCalls)
	gc.handler = newSDKHandler(server)
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
	drop := created && !gc.gone && gc.active == 0 && g.pool.Count(gc.handler) == 0
	if drop {
		g.forgetLocked(gc)
	} else {
		g.armChatLocked(gc)
	}
	g.mu.Unlock()
	if drop {
		gc.chat.CloseFor(runtime.StopChatClosed)
		if gc.madeDir {
			os.Remove(gc.chat.Workspace()) // only if still empty
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
	if g.chats[gc.chat.ID()] == gc {
		delete(g.chats, gc.chat.ID())
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
	gc.idle = g.h.Clock().AfterFunc(d, func() { g.chatIdle(gc, gen, d) })
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
	g.h.Do(func() {
		// The processes first: a handler still running (there should be
		// none) then ends, and closing its session does not wait for it.
		gc.chat.CloseFor(runtime.StopReason("the chat was idle for " + transport.FormatDuration(d)))
		for ss := range gc.server.Sessions() {
			_ = ss.Close()
		}
		g.h.Log("Information", gc.chat.ID(), "", "chat %s closed after %s without requests: its sessions ended and its server processes stopped (its workspace stays)", gc.chat.ID(), transport.FormatDuration(d))
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
