package transport

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// StreamableServer is the server side of MCP Streamable HTTP for one
// mcp.Server (the gateway's chat): sessions (Mcp-Session-Id), POST answered
// as an SSE stream of the calls' messages, notifications and responses
// POSTed by the client answered 202, the GET stream for server-initiated
// messages, DELETE, and resumable streams (Last-Event-ID) when it has an
// event store.
//
// Why not the go-sdk's StreamableHTTPHandler: the CPU it spends per call
// (issue 13). A proxied call through `mcpc run --http` cost 2.5–3.1 × the
// CPU of the same call over stdio (BenchmarkGatewayCPUPerCall); profiles of
// the running gateway showed the SDK's handler decoding each POST body four
// times (the batch, the message, the params twice for _meta), each through
// a decoder that allocates a fresh 32 KiB buffer, and a fifth of the CPU in
// the collections that garbage causes; plus a flushed write for the priming
// event and another for each message. This transport decodes a body once
// (DecodeBody: json.Parse, no buffer), and an answer that comes at once
// leaves in one write with the end of the response. What stays the SDK's:
// the mcp.Server and its sessions, which run on the Connection this
// transport gives each session.
//
// The caller (the gateway) reads the body (its size and rate limits),
// checks authorization, Origin and Host, the protocol version header, and
// which requests may create a session; this type trusts none of the
// body's content.
type StreamableServer struct {
	server *mcp.Server
	opts   StreamableOptions

	mu       sync.Mutex
	sessions map[string]*streamSession
}

// StreamableOptions configure a StreamableServer.
type StreamableOptions struct {
	// EventStore keeps every event of every stream, so that a client that
	// lost a stream gets what it missed with GET and Last-Event-ID. nil:
	// streams are not resumable.
	EventStore mcp.EventStore
	// Retry, if set, is sent before the first event of every SSE answer:
	// how long a client that lost the stream waits before it reconnects.
	Retry time.Duration
	// Pool caps and expires the sessions, with those of the other servers
	// that share it; nil: no cap, no expiry.
	Pool *SessionPool
}

// Protocol versions that change what a stream carries.
const (
	// versionBatchless is the first version without JSON-RPC batches.
	versionBatchless = "2025-06-18"
	// versionPriming is the first version with a priming event (SEP-1699).
	versionPriming = "2025-11-25"
	// versionSessionless is the first version without sessions (SEP-2575),
	// which this transport, made of sessions, does not serve.
	versionSessionless = "2026-07-28"
	// versionDefault is the version of a request without the header.
	versionDefault = "2025-03-26"
)

// NewStreamableServer returns a transport serving server.
func NewStreamableServer(server *mcp.Server, opts StreamableOptions) *StreamableServer {
	s := &StreamableServer{server: server, opts: opts, sessions: map[string]*streamSession{}}
	server.AddReceivingMiddleware(relateRequests)
	return s
}

// Body is a decoded POST body: one JSON-RPC message, or a batch.
type Body struct {
	Messages []jsonrpc.Message
	Batch    bool
}

// DecodeBody decodes a POST body once. Its error names the kind and place
// of the fault, never the body's content.
func DecodeBody(data []byte) (*Body, error) {
	i := 0
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	if i == len(data) {
		return nil, errors.New("the body is empty")
	}
	if data[i] == '[' {
		msgs, err := decodeBatch(data)
		if err != nil {
			return nil, err
		}
		return &Body{Messages: msgs, Batch: true}, nil
	}
	msg, err := DecodeMessage(data[i:])
	if err != nil {
		return nil, err
	}
	return &Body{Messages: []jsonrpc.Message{msg}}, nil
}

// Serve answers one request to the endpoint, of chat (the label of the
// session an initialize opens, for SessionPoolOptions.MaxPerChat). body is
// the POST body, decoded by DecodeBody (nil for GET and DELETE).
func (h *StreamableServer) Serve(w http.ResponseWriter, r *http.Request, chat string, body *Body) {
	switch r.Method {
	case http.MethodPost:
		h.servePOST(w, r, chat, body)
	case http.MethodGet:
		h.serveGET(w, r)
	case http.MethodDelete:
		h.serveDELETE(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// Close ends every session.
func (h *StreamableServer) Close() {
	h.mu.Lock()
	sessions := make([]*streamSession, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		s.endSession()
	}
}

// Has reports whether sid is a session of h.
func (h *StreamableServer) Has(sid string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[sid] != nil
}

// Len returns the number of sessions.
func (h *StreamableServer) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// session returns the session of r's Mcp-Session-Id, answering 400 or 404
// if there is none. A session found counts r in its pool (an open GET
// stream only as a use); the caller counts it out with the returned
// function.
func (h *StreamableServer) session(w http.ResponseWriter, r *http.Request) (*streamSession, func()) {
	sid := r.Header.Get(sessionIDHeader)
	if sid == "" {
		http.Error(w, fmt.Sprintf("Bad Request: %s requires an Mcp-Session-Id header", r.Method), http.StatusBadRequest)
		return nil, nil
	}
	h.mu.Lock()
	s := h.sessions[sid]
	h.mu.Unlock()
	if s == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return nil, nil
	}
	counted := r.Method != http.MethodGet
	h.opts.Pool.begin(s, counted)
	if !counted {
		return s, func() {}
	}
	return s, func() { h.opts.Pool.end(s) }
}

const (
	sessionIDHeader   = "Mcp-Session-Id"
	lastEventIDHeader = "Last-Event-ID"
	versionHeader     = "Mcp-Protocol-Version"
)

func (h *StreamableServer) serveDELETE(w http.ResponseWriter, r *http.Request) {
	s, done := h.session(w, r)
	if s == nil {
		return
	}
	defer done()
	s.endSession()
	w.WriteHeader(http.StatusNoContent)
}

func (h *StreamableServer) servePOST(w http.ResponseWriter, r *http.Request, chat string, body *Body) {
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return
	}
	if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		return
	}
	if len(r.Header.Values(lastEventIDHeader)) > 0 {
		http.Error(w, "can't send Last-Event-ID for POST request", http.StatusBadRequest)
		return
	}
	if body == nil || len(body.Messages) == 0 {
		http.Error(w, "POST requires a non-empty body", http.StatusBadRequest)
		return
	}
	version := r.Header.Get(versionHeader)
	if version == "" {
		version = versionDefault
	}
	if body.Batch && version >= versionBatchless {
		http.Error(w, fmt.Sprintf("JSON-RPC batching is not supported in %s and later (request version: %s)", versionBatchless, version), http.StatusBadRequest)
		return
	}
	var s *streamSession
	var init *jsonrpc.Request
	for _, msg := range body.Messages {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "initialize" {
			init = req
		}
	}
	if r.Header.Get(sessionIDHeader) == "" {
		if init == nil || len(body.Messages) != 1 {
			http.Error(w, "Bad Request: a session starts with one initialize request, without Mcp-Session-Id", http.StatusBadRequest)
			return
		}
		s = h.newStreamSession()
		if refused := h.opts.Pool.admit(s, chat); refused != "" {
			writeRPCError(w, http.StatusServiceUnavailable, init.ID, CodeLimit, refused)
			return
		}
		defer h.opts.Pool.end(s)
		if err := h.connect(s, r); err != nil {
			http.Error(w, "failed connection", http.StatusInternalServerError)
			return
		}
		defer func() {
			// An initialize the server refused leaves no session (as in the
			// SDK's handler, go-sdk#578).
			if s.ss.InitializeParams() == nil {
				s.endSession()
			}
		}()
	} else {
		var done func()
		if s, done = h.session(w, r); s == nil {
			return
		}
		defer done()
	}

	calls := 0
	for _, msg := range body.Messages {
		if req, ok := msg.(*jsonrpc.Request); ok {
			req.Extra = &mcp.RequestExtra{Header: r.Header}
			if req.IsCall() {
				calls++
			}
		}
	}
	if calls == 0 {
		// Notifications and responses: accepted, nothing to answer (202).
		for _, msg := range body.Messages {
			if !s.deliver(msg) {
				http.Error(w, "session is closing", http.StatusNotFound)
				return
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}

	if init != nil {
		if v := initializeVersion(init); v != "" {
			version = v
		}
	}
	st, err := s.openStream(w, body.Messages, calls, version)
	if err != nil {
		var dup duplicateID
		if errors.As(err, &dup) {
			writeRPCError(w, http.StatusBadRequest, dup.id, jsonrpc.CodeInvalidRequest, err.Error())
		} else {
			http.Error(w, "session is closing", http.StatusNotFound)
		}
		return
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Connection", "keep-alive")
	if init != nil {
		w.Header().Set(sessionIDHeader, s.id)
	}
	h.serveStream(w, r, s, st, version, body.Messages)
}

// serveStream holds an SSE answer open until its stream is done, the
// client goes away, or the session ends; msgs are handed to the server
// once the stream can take their answers.
func (h *StreamableServer) serveStream(w http.ResponseWriter, r *http.Request, s *streamSession, st *stream, version string, msgs []jsonrpc.Message) {
	st.mu.Lock()
	st.writePreamble(h.opts.Retry)
	if s.store != nil && version >= versionPriming && version < versionSessionless {
		// The priming event: an id to resume from before any message. It is
		// in the store too, so that the indexes agree.
		_ = s.store.Append(r.Context(), s.id, st.id, nil)
		st.lastIdx++
		st.buf = appendEvent(st.buf, "prime", st.eventID(), nil)
	}
	// The headers and the priming event go at once, before the server has
	// the calls: a client takes a POST whose answer has not started as
	// never sent (the go-sdk's then sends no notifications/cancelled when
	// its caller gives up, and the call would run on). The answer, if it
	// ends the stream, then leaves with the end of the response.
	st.flushLocked()
	st.mu.Unlock()
	for _, msg := range msgs {
		if !s.deliver(msg) {
			st.release()
			return
		}
	}
	select {
	case <-r.Context().Done():
	case <-st.done:
	case <-s.done:
	}
	st.release()
	s.forgetIfDone(st)
}

func (h *StreamableServer) serveGET(w http.ResponseWriter, r *http.Request) {
	if _, streamOK := accepts(r.Header.Values("Accept")); !streamOK {
		http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
		return
	}
	s, done := h.session(w, r)
	if s == nil {
		return
	}
	defer done()
	streamID, lastIdx := "", -1
	if len(r.Header.Values(lastEventIDHeader)) > 0 {
		eid := r.Header.Get(lastEventIDHeader)
		var ok bool
		if streamID, lastIdx, ok = parseEventID(eid); !ok {
			http.Error(w, "malformed Last-Event-ID", http.StatusBadRequest)
			return
		}
		if s.store == nil {
			http.Error(w, "stream replay unsupported", http.StatusBadRequest)
			return
		}
	}
	st, code, msg := s.resume(r.Context(), w, streamID, lastIdx, h.opts.Retry)
	if code != 0 {
		http.Error(w, msg, code)
		return
	}
	if st == nil {
		return // replayed a finished stream
	}
	select {
	case <-r.Context().Done():
	case <-st.done:
	case <-s.done:
	}
	st.release()
}

// CodeLimit is the JSON-RPC error code of an initialize refused because of
// a limit (implementation-defined server error range).
const CodeLimit = -32000

// newStreamSession makes a session, not connected yet.
func (h *StreamableServer) newStreamSession() *streamSession {
	s := &streamSession{
		h:        h,
		id:       rand.Text(),
		store:    h.opts.EventStore,
		incoming: make(chan jsonrpc.Message),
		done:     make(chan struct{}),
		streams:  map[string]*stream{},
		calls:    map[jsonrpc.ID]*pendingCall{},
		related:  map[*mcp.RequestExtra]jsonrpc.ID{},
	}
	s.streams[""] = s.newStreamLocked("", 0)
	return s
}

// connect connects s to the server.
func (h *StreamableServer) connect(s *streamSession, r *http.Request) error {
	h.mu.Lock()
	h.sessions[s.id] = s
	h.mu.Unlock()
	// The session outlives this request: not its context, its values.
	ss, err := h.server.Connect(context.WithoutCancel(r.Context()), sessionTransport{s}, nil)
	if err != nil {
		s.Close()
		return err
	}
	s.ss = ss
	return nil
}

// sessionTransport hands the server its session's connection.
type sessionTransport struct{ s *streamSession }

func (t sessionTransport) Connect(context.Context) (mcp.Connection, error) { return t.s, nil }

// SupportsProtocolVersion keeps the sessionless versions out of what the
// server negotiates: this transport is made of sessions.
func (t sessionTransport) SupportsProtocolVersion(v string) bool { return v < versionSessionless }

// streamSession is one session: the mcp.Connection its ServerSession runs
// on.
type streamSession struct {
	h        *StreamableServer
	id       string
	store    mcp.EventStore
	ss       *mcp.ServerSession
	incoming chan jsonrpc.Message
	done     chan struct{}

	mu      sync.Mutex
	closed  bool
	nextID  uint64
	streams map[string]*stream               // open streams by id; "" is the GET stream
	calls   map[jsonrpc.ID]*pendingCall      // calls not answered yet
	related map[*mcp.RequestExtra]jsonrpc.ID // each call's Extra, to find its stream
}

// pendingCall is a call not answered yet: the stream its messages go on.
type pendingCall struct {
	stream *stream
	extra  *mcp.RequestExtra
}

// duplicateID is the error of a call whose id is in flight already.
type duplicateID struct{ id jsonrpc.ID }

func (e duplicateID) Error() string {
	return "duplicate in-flight request ID " + IDText(e.id)
}

// deliver hands msg to the server; false if the session ended.
func (s *streamSession) deliver(msg jsonrpc.Message) bool {
	select {
	case s.incoming <- msg:
		return true
	case <-s.done:
		return false
	}
}

// openStream registers a POST's stream for its calls.
func (s *streamSession) openStream(w http.ResponseWriter, msgs []jsonrpc.Message, calls int, version string) (*stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("session closed")
	}
	// An id in flight, or twice in one batch: the second would never be
	// answered to this stream, and its session would count a call for
	// good (never idle, never evicted).
	seen := make(map[jsonrpc.ID]bool, len(msgs))
	for _, msg := range msgs {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if s.calls[req.ID] != nil || seen[req.ID] {
				return nil, duplicateID{req.ID}
			}
			seen[req.ID] = true
		}
	}
	s.nextID++
	st := s.newStreamLocked(strconv.FormatUint(s.nextID, 10), calls)
	st.w = w
	st.rc = http.NewResponseController(w)
	st.done = make(chan struct{})
	s.streams[st.id] = st
	for _, msg := range msgs {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			extra := req.Extra.(*mcp.RequestExtra)
			s.calls[req.ID] = &pendingCall{stream: st, extra: extra}
			s.related[extra] = req.ID
		}
	}
	s.h.opts.Pool.callsChanged(s, calls)
	return st, nil
}

func (s *streamSession) newStreamLocked(id string, calls int) *stream {
	if s.store != nil {
		_ = s.store.Open(context.Background(), s.id, id)
	}
	return &stream{id: id, session: s.id, pending: calls, lastIdx: -1}
}

// resume attaches w to stream id (the GET stream, or a POST's stream the
// client lost), after replaying its events after lastIdx. A nil stream
// and a 0 code: a finished stream, replayed whole.
func (s *streamSession) resume(ctx context.Context, w http.ResponseWriter, id string, lastIdx int, retry time.Duration) (*stream, int, string) {
	s.mu.Lock()
	st := s.streams[id]
	finished := st == nil
	if finished {
		// A stream that ended: replay it alone.
		st = &stream{id: id, session: s.id, lastIdx: -1, w: w}
		s.streams[id] = st
		defer func() {
			s.mu.Lock()
			if s.streams[id] == st {
				delete(s.streams, id)
			}
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()

	st.mu.Lock()
	defer st.mu.Unlock()
	if !finished && st.w != nil {
		return nil, http.StatusConflict, "stream ID conflicts with ongoing stream"
	}
	var replay [][]byte
	if s.store != nil && lastIdx >= 0 {
		for data, err := range s.store.After(ctx, s.id, id, lastIdx) {
			if err != nil {
				// 400, not 404: a 404 would tell the client that the session
				// is gone.
				return nil, http.StatusBadRequest, "failed to replay events"
			}
			replay = append(replay, data)
		}
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Connection", "keep-alive")
	st.w, st.rc = w, http.NewResponseController(w)
	st.writePreamble(retry)
	if id == "" {
		// The GET stream may wait long for its first event: its headers go
		// now (an SSE comment, so that proxies pass them on).
		st.buf = append(st.buf, ": ok\n\n"...)
	}
	if lastIdx >= 0 {
		st.lastIdx = lastIdx
	}
	for _, data := range replay {
		st.lastIdx++
		if len(data) > 0 {
			st.buf = appendEvent(st.buf, "message", st.eventID(), data)
		}
	}
	st.flushLocked()
	if finished || (st.done != nil && st.pending == 0) {
		st.w, st.rc = nil, nil
		return nil, 0, ""
	}
	st.done = make(chan struct{})
	if st.pending == 0 && id != "" {
		close(st.done)
	}
	return st, 0, ""
}

// Read implements mcp.Connection.
func (s *streamSession) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg := <-s.incoming:
		return msg, nil
	case <-s.done:
		return nil, io.EOF
	}
}

// rejected wraps what the jsonrpc2 layer of the SDK takes as a message
// refused, not a broken connection (its ErrRejected, code -32005).
func rejected(why string) error {
	return fmt.Errorf("%w: %s", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, why)
}

// Write implements mcp.Connection: a response goes on its call's stream;
// a request or notification sent while handling a call goes on that call's
// stream, any other on the GET stream.
func (s *streamSession) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := EncodeMessage(msg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return rejected("the session ended")
	}
	var st *stream
	answer := false
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if c := s.calls[resp.ID]; c != nil {
			st, answer = c.stream, true
			delete(s.calls, resp.ID)
			delete(s.related, c.extra)
			s.h.opts.Pool.callsChanged(s, -1)
		}
	} else {
		// Sent while handling a call that is not answered yet: on its
		// stream. Otherwise (no call, a notification's handler, a call
		// answered already) on the GET stream.
		if extra, ok := ctx.Value(extraKey{}).(*mcp.RequestExtra); ok {
			if id, ok := s.related[extra]; ok {
				if c := s.calls[id]; c != nil {
					st = c.stream
				}
			}
		}
		if st == nil {
			st = s.streams[""]
		}
	}
	s.mu.Unlock()
	if st == nil {
		return rejected("no stream for the message (its request was answered)")
	}
	if !st.send(ctx, s.store, data, answer) && answer {
		// Nobody holds the stream and nothing keeps the message: the
		// client can never get it.
		return rejected("undelivered message: the client left the stream")
	}
	if answer {
		s.forgetIfDone(st)
	}
	return nil
}

// forgetIfDone drops a POST's stream once every call on it is answered
// and no request holds it: its events stay in the store for a replay.
func (s *streamSession) forgetIfDone(st *stream) {
	if st.id == "" {
		return // the GET stream lasts as long as the session
	}
	st.mu.Lock()
	done := st.pending == 0 && st.w == nil
	st.mu.Unlock()
	if done {
		s.mu.Lock()
		if s.streams[st.id] == st {
			delete(s.streams, st.id)
		}
		s.mu.Unlock()
	}
}

// Close implements mcp.Connection: the session ended (DELETE, the server
// closed it, the gateway expired it).
func (s *streamSession) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	s.h.mu.Lock()
	if s.h.sessions[s.id] == s {
		delete(s.h.sessions, s.id)
	}
	s.h.mu.Unlock()
	s.h.opts.Pool.remove(s)
	if s.store != nil {
		return s.store.SessionClosed(context.Background(), s.id)
	}
	return nil
}

// SessionID implements mcp.Connection.
func (s *streamSession) SessionID() string { return s.id }

// endSession closes the session through its ServerSession, which closes
// the connection.
func (s *streamSession) endSession() {
	if s.ss != nil {
		_ = s.ss.Close()
	} else {
		_ = s.Close()
	}
}

// stream is one SSE stream: a POST's (its calls' messages) or the
// session's GET stream. Its events are numbered from 0; with an event store,
// each is kept there and carries an id to resume from.
type stream struct {
	id      string
	session string

	mu      sync.Mutex
	w       http.ResponseWriter // the request that holds it; nil: none
	rc      *http.ResponseController
	buf     []byte        // written, not flushed yet
	pending int           // calls not answered yet
	done    chan struct{} // closed when its request should end
	lastIdx int
}

// writePreamble starts an SSE answer with the retry hint. st.mu is held.
func (st *stream) writePreamble(retry time.Duration) {
	if retry > 0 {
		st.buf = append(st.buf, "retry: "...)
		st.buf = strconv.AppendInt(st.buf, retry.Milliseconds(), 10)
		st.buf = append(st.buf, "\n\n"...)
	}
}

func (st *stream) eventID() string {
	return st.id + "_" + strconv.Itoa(st.lastIdx)
}

// send stores and writes one message; it reports whether the message was
// kept or written. An answer that ends the stream is not flushed: the end
// of the response carries it.
func (st *stream) send(ctx context.Context, store mcp.EventStore, data []byte, answer bool) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	kept := false
	if store != nil {
		kept = store.Append(ctx, st.session, st.id, data) == nil
	}
	st.lastIdx++
	if answer {
		st.pending--
	}
	last := answer && st.pending == 0
	written := false
	if st.w != nil {
		id := ""
		if store != nil {
			id = st.eventID()
		}
		st.buf = appendEvent(st.buf, "message", id, data)
		if last {
			_, err := st.w.Write(st.buf)
			written = err == nil
			st.buf = st.buf[:0]
		} else {
			written = st.flushLocked()
		}
	}
	if last && st.done != nil {
		close(st.done)
	}
	return kept || written
}

// flushLocked writes and flushes buf. st.mu is held.
func (st *stream) flushLocked() bool {
	if len(st.buf) > 0 {
		_, err := st.w.Write(st.buf)
		st.buf = st.buf[:0]
		if err != nil {
			return false
		}
	}
	return st.rc.Flush() == nil
}

// release lets go of the request that held the stream: later messages
// only go to the store, for a GET with Last-Event-ID.
func (st *stream) release() {
	st.mu.Lock()
	if st.w != nil && len(st.buf) > 0 {
		_, _ = st.w.Write(st.buf)
	}
	st.w, st.rc, st.buf = nil, nil, nil
	st.mu.Unlock()
}

// appendEvent appends one SSE event.
func appendEvent(buf []byte, name, id string, data []byte) []byte {
	buf = append(buf, "event: "...)
	buf = append(buf, name...)
	buf = append(buf, '\n')
	if id != "" {
		buf = append(buf, "id: "...)
		buf = append(buf, id...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

// parseEventID splits an event id "<stream>_<index>".
func parseEventID(eid string) (string, int, bool) {
	id, idx, ok := strings.Cut(eid, "_")
	if !ok || strings.Contains(idx, "_") {
		return "", 0, false
	}
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id, n, true
}

// initializeVersion is the protocol version an initialize asks for.
func initializeVersion(req *jsonrpc.Request) string {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if _, err := segjson.Parse(req.Params, &p, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return ""
	}
	return p.ProtocolVersion
}

// extraKey is the context key of the Extra of the call being handled.
type extraKey struct{}

// relateRequests puts each call's Extra in its handler's context, so that
// Write finds the call's stream for what the handler sends (progress, log
// messages, sampling): the SDK's own key for it is not exported.
func relateRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if extra := req.GetExtra(); extra != nil {
			ctx = context.WithValue(ctx, extraKey{}, extra)
		}
		return next(ctx, method, req)
	}
}

// mediaType is the media type of a Content-Type, "" if it has none.
func mediaType(v string) string {
	t, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return t
}

// acceptedType is the media type of one Accept entry, lower case.
func acceptedType(v string) string {
	v, _, _ = strings.Cut(v, ";")
	return strings.ToLower(strings.TrimSpace(v))
}

// accepts reports whether Accept values take JSON and SSE.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			switch acceptedType(raw) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// writeRPCError answers with one JSON-RPC error.
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, msg string) {
	data, err := EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
