package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// The connections of one chat to its remote servers (SPEC §4). Package
// remote reads servers.json, opens its sealed entries and dials a server;
// a RemoteServers set keeps the connections: it connects every server in
// the background, retries unreachable ones on a schedule, names their
// tools and calls them. A chat owns one (chatRemote); `mcpc remote list`
// and `mcpc tools` use one on their own.

// Retry schedule of an unreachable remote server (SPEC §4): before a
// listing, once 1, 2, 4, 8 minutes … after the last failure, at most 15
// minutes. RemoteOptions.RetryBase and RetryMax override it.
const (
	DefaultRemoteRetryBase = time.Minute
	DefaultRemoteRetryMax  = 15 * time.Minute
)

// RemoteState is where the connection to a remote server stands.
type RemoteState string

const (
	RemoteConnecting  RemoteState = "connecting"
	RemoteConnected   RemoteState = "connected"
	RemoteUnavailable RemoteState = "unavailable"
)

// RemoteWarning is a remote tool that was renamed or skipped while naming,
// or an allowlisted tool that its server does not offer.
type RemoteWarning struct {
	Rule, Message, Suggestion string
}

// RemoteListing is what RemoteServers.List returns: the tools to offer and
// the state of every server, for status output and the system prompt.
type RemoteListing struct {
	// Tools are the remote tools (Tool.Remote), in servers.json order.
	Tools    []*Tool
	Servers  []RemoteServerStatus
	Skipped  []RemoteSkipped
	Warnings []RemoteWarning
	// FileProblem is set when servers.json as a whole cannot be used.
	FileProblem string
	// Seq orders the listings of one set: Call uses the tools of the
	// listing with the highest Seq, and a chat applies listings in the
	// same order, so that what a chat offers is what Call finds even when
	// two listings finish out of order.
	Seq uint64
}

// RemoteServers keep one chat's connections to its remote servers (SPEC
// §4). They connect every server in the background when started; the
// first List waits for those connects, later ones first retry the
// unreachable servers that are due. A call runs on the server's
// connection, one at a time per tool; a transport failure drops the
// connection and the next call reconnects. servers.json is re-read before
// each listing and each call, so the `mcpc remote` commands take effect at
// once, without a restart. All methods are safe for concurrent use.
//
// Every goroutine of the set (a connect, the ping after a timed-out call,
// the close of a dropped connection) is one that Close waits for; in a
// chat, also one that Host.Close waits for (Host.track).
type RemoteServers struct {
	workspace, scope string
	opts             RemoteOptions
	clock            Clock
	key              *remote.Key
	host             *Host // nil for a set of its own (NewRemoteServers)
	// log, if set, receives the failures of calls that a host logs: a
	// connection that failed during a call, a call that timed out.
	log func(server, msg string)
	// onChange, if set, is called when a call found servers.json changed
	// (a chat then lists again and tells its clients; remote.go).
	onChange func()

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // goroutines, see background
	// clientFor and onConnect, if set, pass what a server offers besides
	// tools through a chat's gateway (passthrough_remote.go): the options
	// of a server's MCP client, and what follows each connect.
	clientFor func(server string, link *ProcLink) *mcp.ClientOptions
	onConnect func(server string, conn *remote.Conn)

	mu          sync.Mutex
	started     bool
	closed      bool
	fileData    []byte
	fileExists  bool
	loaded      bool
	readFailed  bool // the last read failed: the next one applies whatever it finds
	servers     []*remoteServer
	skipped     []RemoteSkipped
	fileProblem string
	secrets     map[string]bool
	redactor    *redact.Redactor
	tools       map[string]remoteToolRef   // visible name → server and tool, from the latest listing
	named       map[*remoteServer][]string // each server's visible names, from the latest listing
	listSeq     uint64                     // listings started
	appliedSeq  uint64                     // the listing tools and named are from
	locks       map[string]chan struct{}
}

type remoteToolRef struct {
	srv  *remoteServer
	tool string
}

// remoteServer is one opened entry.
type remoteServer struct {
	m       *RemoteServers
	entry   remote.Server
	sealed  string
	headers remote.Headers

	mu        sync.Mutex
	conn      *remote.Conn
	listed    bool
	offered   []*mcp.Tool // everything the server lists
	state     RemoteState
	reason    string
	failures  int
	nextRetry time.Time
	// retryDelay is the wait that set nextRetry.
	retryDelay time.Duration
	attempt    chan struct{} // closed when the running attempt ends
	removed    bool
	link       *ProcLink // routes what the server sends during calls (progress, log messages)
}

// NewRemoteServers returns the remote servers of the chat whose workspace
// and session scope are given, on their own: outside a host, on the real
// clock, with opts.Secret as the host secret ("" skips every entry).
// Nothing is read or connected before Start or the first List; Close ends
// every connection and waits for the set's goroutines.
func NewRemoteServers(workspace, scope string, opts RemoteOptions) (*RemoteServers, error) {
	return newRemoteServers(workspace, scope, opts.Secret, opts, RealClock{}, nil)
}

// newRemoteServers returns a chat's remote servers; with a host, they live
// on its clock, its context and its goroutine tracking.
func newRemoteServers(workspace, scope, secret string, opts RemoteOptions, clock Clock, h *Host) (*RemoteServers, error) {
	if workspace == "" {
		return nil, errors.New("remote: no workspace")
	}
	if scope == "" {
		return nil, errors.New("remote: no session scope")
	}
	m := &RemoteServers{workspace: workspace, scope: scope, opts: opts, clock: clock, host: h,
		secrets: map[string]bool{}, redactor: redact.New(nil), tools: map[string]remoteToolRef{}, locks: map[string]chan struct{}{}}
	if secret != "" {
		k, err := remote.NewKey(secret)
		if err != nil {
			return nil, err
		}
		m.key = k
	}
	parent := context.Background()
	if h != nil {
		parent = h.ctx
	}
	m.ctx, m.cancel = context.WithCancel(parent)
	return m, nil
}

// background runs f as a goroutine that Close waits for, and in a host one
// that Host.Close waits for too. It reports false, without running f, once
// the set or its host is closed.
func (m *RemoteServers) background(f func()) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.wg.Add(1)
	m.mu.Unlock()
	run := func() {
		defer m.wg.Done()
		f()
	}
	if m.host == nil {
		go run()
		return true
	}
	if !m.host.track(run) {
		m.wg.Done()
		return false
	}
	return true
}

func (m *RemoteServers) retryDelay(failures int) time.Duration {
	base, limit := m.opts.RetryBase, m.opts.RetryMax
	if base <= 0 {
		base = DefaultRemoteRetryBase
	}
	if limit <= 0 {
		limit = DefaultRemoteRetryMax
	}
	d := base
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Start reads servers.json and connects every server in the background
// (handshake and tools/list). It returns at once; calling it again does
// nothing.
func (m *RemoteServers) Start() {
	m.mu.Lock()
	if m.started || m.closed {
		m.mu.Unlock()
		return
	}
	m.started = true
	m.mu.Unlock()
	m.reload()
}

// reload re-reads servers.json; when it changed, servers whose entry is
// unchanged keep their connection, new ones start connecting, removed ones
// are disconnected. It reports whether it changed anything.
func (m *RemoteServers) reload() bool {
	data, exists, err := remote.ReadFile(m.workspace)
	m.mu.Lock()
	if m.closed || m.loaded && err == nil && !m.readFailed && exists == m.fileExists && bytes.Equal(data, m.fileData) {
		m.mu.Unlock()
		return false
	}
	m.loaded, m.fileData, m.fileExists, m.readFailed = true, data, exists, err != nil
	old := m.servers
	m.servers, m.skipped, m.fileProblem = nil, nil, ""
	var fresh []*remoteServer
	switch {
	case err != nil:
		m.fileProblem = err.Error()
	case exists:
		f := remote.Parse(remote.Path(m.workspace), data)
		m.fileProblem = f.Problem
		for _, e := range f.Entries {
			s, problem := m.open(e, old)
			if problem != "" {
				m.skipped = append(m.skipped, RemoteSkipped{Name: e.Name, Position: e.Pos.String(), Reason: problem})
				continue
			}
			if s.m == nil {
				s.m = m
				fresh = append(fresh, s)
			}
			m.servers = append(m.servers, s)
			for _, v := range s.headers.Secrets() {
				m.secrets[v] = true
			}
		}
	}
	var all []string
	for v := range m.secrets {
		all = append(all, redact.SecretForms(v)...)
	}
	m.redactor = redact.New(all)
	var gone []*remoteServer
	for _, s := range old {
		kept := false
		for _, n := range m.servers {
			kept = kept || n == s
		}
		if !kept {
			gone = append(gone, s)
		}
	}
	m.mu.Unlock()
	for _, s := range gone {
		s.remove()
	}
	for _, s := range fresh {
		s.startAttempt(true)
	}
	return true
}

// open returns the server of entry e: the one of old when its entry did not
// change, else a new one (without its set, m, yet). problem says why the
// entry is skipped instead.
func (m *RemoteServers) open(e *remote.Entry, old []*remoteServer) (s *remoteServer, problem string) {
	if !e.Valid() {
		return nil, strings.TrimPrefix(e.Problem, e.Label()+": ")
	}
	if m.key == nil {
		return nil, "cannot be opened: the host has no " + remote.SecretVar + " or " + remote.FallbackSecretVar
	}
	h, err := m.key.Open(m.scope, e.Server, e.Sealed)
	if err != nil {
		return nil, remote.NotOpenReason
	}
	for _, s := range old {
		if s.sealed == e.Sealed && s.entry.Equal(e.Server) {
			return s, ""
		}
	}
	return &remoteServer{entry: e.Server, sealed: e.Sealed, headers: h, state: RemoteConnecting, link: &ProcLink{}}, ""
}

// startAttempt starts connecting in the background, unless an attempt is
// running. full also lists the tools. It returns the channel closed when
// the attempt ends (at once when none can start: the set is closed).
func (s *remoteServer) startAttempt(full bool) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attempt != nil {
		return s.attempt
	}
	full = full || !s.listed
	done := make(chan struct{})
	if s.removed || !s.m.background(func() { s.connect(full, done) }) {
		close(done)
		return done
	}
	s.attempt = done
	if full {
		s.state = RemoteConnecting
	}
	return done
}

func (s *remoteServer) connect(full bool, done chan struct{}) {
	m := s.m
	dial := m.opts.Dial
	if m.clientFor != nil {
		dial.Client = m.clientFor(s.entry.Name, s.link)
	}
	var connected *remote.Conn
	defer func() {
		// After the attempt ends (List does not wait for this).
		if connected != nil && m.onConnect != nil {
			m.onConnect(s.entry.Name, connected)
		}
	}()
	conn, err := remote.Dial(m.ctx, s.entry, s.headers, dial)
	var tools []*mcp.Tool
	if err == nil && full {
		if tools, err = conn.ListTools(m.ctx); err != nil {
			conn.Close()
			conn = nil
		}
	}
	reason := ""
	if err != nil {
		reason = m.Redact(reasonOf(err))
	}
	s.mu.Lock()
	defer close(done)
	defer s.mu.Unlock()
	s.attempt = nil
	if s.removed || m.ctx.Err() != nil {
		if conn != nil {
			conn.Close()
		}
		return
	}
	if err != nil {
		s.state = RemoteUnavailable
		s.reason = reason
		s.failures++
		s.retryDelay = m.retryDelay(s.failures)
		s.nextRetry = m.clock.Now().Add(s.retryDelay)
		s.conn = nil
		return
	}
	if s.conn != nil {
		s.conn.Close()
	}
	s.conn, s.state, s.reason, s.failures = conn, RemoteConnected, "", 0
	connected = conn
	if full {
		s.offered, s.listed = tools, true
	}
}

func reasonOf(err error) string {
	var f *remote.Failure
	if errors.As(err, &f) {
		return f.Reason
	}
	if errors.Is(err, context.Canceled) {
		return "the chat ended"
	}
	return "connection failed"
}

// remove disconnects a server that is no longer in servers.json.
func (s *remoteServer) remove() {
	s.mu.Lock()
	s.removed = true
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// allowed returns the offered tools the allowlist allows, in listing order,
// and the allowlisted names that are not offered.
func (s *remoteServer) allowed() (tools []*mcp.Tool, missing []string) {
	if s.entry.Tools == nil {
		return s.offered, nil
	}
	allow := map[string]bool{}
	for _, t := range s.entry.Tools {
		allow[t] = true
	}
	offered := map[string]bool{}
	for _, t := range s.offered {
		offered[t.Name] = true
		if allow[t.Name] {
			tools = append(tools, t)
		}
	}
	for _, t := range s.entry.Tools {
		if !offered[t] {
			missing = append(missing, t)
		}
	}
	return tools, missing
}

// status is the server now. ToolNames and Tools are left to the caller,
// who knows which tools were named.
func (s *remoteServer) status() RemoteServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := RemoteServerStatus{
		Name: s.entry.Name, URL: remote.URLWithoutQuery(s.entry.URL), Transport: s.entry.Transport,
		Phase: s.state, Reason: s.reason, Allowlist: s.entry.Tools, HeaderNames: s.headers.Names(),
		ToolNames: []string{},
	}
	if st.HeaderNames == nil {
		st.HeaderNames = []string{}
	}
	if s.state == RemoteUnavailable {
		st.RetryAt, st.retryDelay = s.nextRetry, s.retryDelay
	}
	if s.state == RemoteConnected {
		tools, missing := s.allowed()
		for _, t := range tools {
			st.ServerTools = append(st.ServerTools, t.Name)
		}
		st.Missing = missing
		if s.conn != nil {
			st.Connected, st.ServerName, st.ServerVersion = s.conn.Transport, s.conn.ServerName, s.conn.ServerVersion
		}
	}
	st.State = st.line()
	return st
}

// line is the status column: "connecting", "connected · 3 tools",
// "unavailable: 401 (Unauthorized)".
func (s RemoteServerStatus) line() string {
	switch s.Phase {
	case RemoteConnected:
		if len(s.ServerTools) == 1 {
			return "connected · 1 tool"
		}
		return fmt.Sprintf("connected · %d tools", len(s.ServerTools))
	case RemoteUnavailable:
		return "unavailable: " + s.Reason
	}
	return string(s.Phase)
}

// List returns the chat's remote tools. The first listing waits for the
// connects Start began (Start is called if it was not); later ones re-read
// servers.json and first retry each unavailable server whose retry time
// has come, waiting for those attempts (each bounded by the handshake and
// list timeouts). taken reports names some other tool already has (built-in
// or stdio tools); such remote tools are skipped with a warning. When ctx
// ends first, List returns what is known, with ctx's error.
func (m *RemoteServers) List(ctx context.Context, taken func(name string) bool) (*RemoteListing, error) {
	m.Start()
	m.reload()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("remote: the chat's connections are closed")
	}
	servers := append([]*remoteServer(nil), m.servers...)
	m.mu.Unlock()

	now := m.clock.Now()
	var waits []<-chan struct{}
	for _, s := range servers {
		s.mu.Lock()
		running, due := s.attempt, s.state == RemoteUnavailable && !now.Before(s.nextRetry)
		s.mu.Unlock()
		switch {
		case running != nil:
			waits = append(waits, running)
		case due:
			waits = append(waits, s.startAttempt(true))
		}
	}
	var ctxErr error
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			ctxErr = ctx.Err()
		}
		if ctxErr != nil {
			break
		}
	}
	return m.listing(servers, taken), ctxErr
}

// listing names the tools of the connected servers and records them for
// Call.
func (m *RemoteServers) listing(servers []*remoteServer, taken func(string) bool) *RemoteListing {
	m.mu.Lock()
	m.listSeq++
	l := &RemoteListing{Seq: m.listSeq}
	m.mu.Unlock()
	var groups []naming.ServerTools
	byName := map[string]*remoteServer{}
	toolsOf := map[string]map[string]*mcp.Tool{}
	for _, s := range servers {
		st := s.status()
		l.Servers = append(l.Servers, st)
		for _, name := range st.Missing {
			l.Warnings = append(l.Warnings, RemoteWarning{Rule: rules.RemoteToolMissing.ID, Message: fmt.Sprintf("remote server %q does not offer the allowlisted tool %q", s.entry.Name, name), Suggestion: fmt.Sprintf("mcpc remote tools %s shows the tools it offers", s.entry.Name)})
		}
		if st.Phase != RemoteConnected {
			continue
		}
		s.mu.Lock()
		tools, _ := s.allowed()
		s.mu.Unlock()
		g := naming.ServerTools{Server: s.entry.Name, Remote: true}
		toolsOf[s.entry.Name] = map[string]*mcp.Tool{}
		for _, t := range tools {
			g.Tools = append(g.Tools, t.Name)
			toolsOf[s.entry.Name][t.Name] = t
		}
		groups = append(groups, g)
		byName[s.entry.Name] = s
	}
	refs := map[string]remoteToolRef{}
	m.mu.Lock()
	red := m.redactor
	m.mu.Unlock()
	for _, r := range naming.Assign(groups, naming.Options{Builtins: []string{}}) {
		if r.Rule != "" {
			l.Warnings = append(l.Warnings, RemoteWarning{Rule: r.Rule, Message: m.Redact(r.Message), Suggestion: r.Suggestion})
		}
		if !r.Registered() {
			continue
		}
		if taken != nil && taken(r.Name) {
			l.Warnings = append(l.Warnings, RemoteWarning{Rule: naming.RuleCollision,
				Message:    m.Redact(fmt.Sprintf("tool %q of remote server %q is skipped: the name %q is already used by another tool", r.Tool, r.Server, r.Name)),
				Suggestion: "add the remote server under another name"})
			continue
		}
		orig := toolsOf[r.Server][r.Tool]
		// Every string of the definition, schemas included: a server could
		// put a secret in a default or an example.
		def, err := redact.Tool(orig, red.Redact)
		if err != nil {
			l.Warnings = append(l.Warnings, RemoteWarning{Rule: rules.RemoteToolMissing.ID,
				Message: m.Redact(fmt.Sprintf("tool %q of remote server %q is not offered: its definition could not be checked for secrets (%v)", r.Tool, r.Server, err))})
			continue
		}
		def.Name = r.Name
		refs[r.Name] = remoteToolRef{srv: byName[r.Server], tool: r.Tool}
		l.Tools = append(l.Tools, &Tool{Name: r.Name, Server: r.Server, ServerTool: r.Tool, Def: def, Remote: true})
	}
	named := map[*remoteServer][]string{}
	for _, t := range l.Tools {
		srv := refs[t.Name].srv
		named[srv] = append(named[srv], t.Name)
	}
	for i, s := range servers {
		l.Servers[i].ToolNames = append(l.Servers[i].ToolNames, named[s]...)
		l.Servers[i].Tools = len(named[s])
	}
	m.mu.Lock()
	// A listing that started earlier but finished later must not replace
	// a newer one's tools (see RemoteListing.Seq).
	if l.Seq > m.appliedSeq {
		m.tools, m.named, m.appliedSeq = refs, named, l.Seq
	}
	l.Skipped = append(l.Skipped, m.skipped...)
	l.FileProblem = m.fileProblem
	m.mu.Unlock()
	return l
}

// Status returns every server's state now, without waiting or retrying,
// then the skipped entries and the problem of the file, if any. The
// servers' ToolNames are those of the last listing.
func (m *RemoteServers) Status() ([]RemoteServerStatus, []RemoteSkipped, string) {
	m.mu.Lock()
	servers := append([]*remoteServer(nil), m.servers...)
	skipped := append([]RemoteSkipped(nil), m.skipped...)
	problem := m.fileProblem
	named := m.named
	m.mu.Unlock()
	var out []RemoteServerStatus
	for _, s := range servers {
		st := s.status()
		st.ToolNames = append(st.ToolNames, named[s]...)
		st.Tools = len(st.ToolNames)
		out = append(out, st)
	}
	return out, skipped, problem
}

// Call calls the remote tool with the visible name from the last listing.
// Calls of one tool run one at a time; each runs at most the call timeout
// and is never retried. A transport failure or a timeout drops the
// connection: the next call reconnects. Results and errors are redacted:
// header values and credentials show as [REDACTED]. Errors are *CallError
// (Remote set): CallServerError for a JSON-RPC error of the server,
// CallTimeout, CallCancelled, or CallUnavailable for a connection that
// failed, a server that is unavailable or was removed.
func (m *RemoteServers) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	// servers.json is read again before every call, not only by listings,
	// so that `mcpc remote remove|tools|add` take effect at once: no call
	// reaches a server or a tool the file no longer allows. Reading a file
	// of at most remote.MaxFileSize is cheap next to a remote call, and
	// unlike a file watch it cannot miss a change (docs/decisions/0018-remote-servers-in-the-runtime.md).
	// The tool is taken from the listing first: the listing that a change
	// starts (onChange) may replace it at any moment after the read.
	m.mu.Lock()
	ref, ok := m.tools[name]
	m.mu.Unlock()
	if m.reload() && m.onChange != nil {
		m.onChange()
	}
	m.mu.Lock()
	problem := ""
	if ok {
		ref, problem = m.successorLocked(ref)
	}
	closed := m.closed
	lock := m.locks[name]
	if lock == nil {
		lock = make(chan struct{}, 1)
		m.locks[name] = lock
	}
	m.mu.Unlock()
	fail := func(kind CallErrorKind, msg string) *CallError {
		if kind == CallUnavailable && ctx.Err() != nil {
			kind = CallCancelled
		}
		return &CallError{Kind: kind, Server: ref.server(), Tool: name, Remote: true, Message: m.Redact(msg)}
	}
	switch {
	case closed:
		return nil, fail(CallUnavailable, "the chat's remote connections are closed")
	case !ok:
		return nil, fail(CallUnavailable, fmt.Sprintf("unknown remote tool %q", name))
	case problem != "":
		return nil, fail(CallUnavailable, problem)
	}
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		return nil, fail(CallCancelled, "the call was cancelled")
	}
	defer func() { <-lock }()

	s := ref.srv
	conn, msg := s.connForCall(ctx)
	if conn == nil {
		return nil, fail(CallUnavailable, msg)
	}
	params, leave := callParams(ctx, s.link, ref.tool, args)
	defer leave()
	res, err := conn.CallParams(ctx, params, m.opts.CallTimeout)
	if err == nil {
		return redact.Result(res, m.Redact), nil
	}
	prefix := fmt.Sprintf("remote server %s: ", s.entry.Name)
	var f *remote.Failure
	if !errors.As(err, &f) {
		return nil, fail(CallUnavailable, prefix+err.Error())
	}
	switch {
	case f.ServerError:
		ce := fail(CallServerError, prefix+f.Reason)
		ce.Code = f.Code
		return nil, ce
	case f.Timeout:
		// The server was told (notifications/cancelled). If it no longer
		// answers at all, the connection is dropped: the next call
		// reconnects.
		s.pingOrDrop(conn)
		ce := fail(CallTimeout, prefix+f.Reason)
		m.logFailure(s.entry.Name, ce)
		return nil, ce
	case f.Lost:
		s.drop(conn)
		ce := fail(CallUnavailable, prefix+"the connection failed during the call ("+f.Reason+"). The call was not retried, since the server may have run it; the next call reconnects.")
		m.logFailure(s.entry.Name, ce)
		return nil, ce
	}
	return nil, fail(CallUnavailable, prefix+f.Reason)
}

// successorLocked follows a tool of the last listing whose server's entry
// was since edited in servers.json (`mcpc remote tools`, or added again):
// to the entry's new server, or to why the tool is no longer offered. A
// removed server is left to connForCall, which says so. m.mu is held.
func (m *RemoteServers) successorLocked(ref remoteToolRef) (remoteToolRef, string) {
	if ref.srv == nil {
		return ref, ""
	}
	ref.srv.mu.Lock()
	removed := ref.srv.removed
	ref.srv.mu.Unlock()
	if !removed {
		return ref, ""
	}
	for _, n := range m.servers {
		if n.entry.Name != ref.srv.entry.Name {
			continue
		}
		if n.entry.Tools != nil && !slices.Contains(n.entry.Tools, ref.tool) {
			return ref, fmt.Sprintf("remote server %s: tool %s is no longer allowed by servers.json (mcpc remote tools)", n.entry.Name, ref.tool)
		}
		return remoteToolRef{srv: n, tool: ref.tool}, ""
	}
	return ref, ""
}

// server is the name of the server the tool belongs to ("" when unknown).
func (r remoteToolRef) server() string {
	if r.srv == nil {
		return ""
	}
	return r.srv.entry.Name
}

// logFailure logs a call's failure that a host logs.
func (m *RemoteServers) logFailure(server string, ce *CallError) {
	if m.log != nil {
		m.log(server, ce.Message)
	}
}

// connForCall returns the server's live connection, reconnecting (handshake
// only) when it was dropped; without one, it says why.
func (s *remoteServer) connForCall(ctx context.Context) (*remote.Conn, string) {
	m := s.m
	for range 2 {
		s.mu.Lock()
		c, state, reason, removed, next := s.conn, s.state, s.reason, s.removed, s.nextRetry
		var running <-chan struct{}
		if s.attempt != nil {
			running = s.attempt
		}
		s.mu.Unlock()
		switch {
		case removed:
			return nil, fmt.Sprintf("remote server %s was removed from servers.json", s.entry.Name)
		case c != nil && c.Alive():
			return c, ""
		case running != nil:
		case state == RemoteUnavailable && m.clock.Now().Before(next):
			return nil, fmt.Sprintf("remote server %s is unavailable: %s", s.entry.Name, reason)
		default:
			if c != nil {
				s.drop(c)
			}
			running = s.startAttempt(false)
		}
		select {
		case <-running:
		case <-ctx.Done():
			return nil, "the call was cancelled"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && s.conn.Alive() {
		return s.conn, ""
	}
	reason := s.reason
	if reason == "" {
		reason = "it did not reconnect"
	}
	return nil, fmt.Sprintf("remote server %s is unavailable: %s", s.entry.Name, reason)
}

// pingOrDrop checks, in the background, that the server still answers on
// c within the list timeout, and drops c when it does not. Once the set is closed, Close ends c.
func (s *remoteServer) pingOrDrop(c *remote.Conn) {
	m := s.m
	wait := m.opts.Dial.ListTimeout
	if wait <= 0 {
		wait = remote.ListTimeout
	}
	m.background(func() {
		ctx, cancel := context.WithTimeout(m.ctx, wait)
		defer cancel()
		if c.Ping(ctx) != nil {
			s.drop(c)
		}
	})
}

// drop forgets c if it is still the server's connection, and abandons it
// in the background: c failed, and closing it as a healthy one would wait
// for a server that no longer answers.
// Once the set is closed it closes c at once: Close no longer sees it.
func (s *remoteServer) drop(c *remote.Conn) {
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.mu.Unlock()
	if !s.m.background(func() { c.Abandon() }) {
		c.Abandon()
	}
}

// Redact replaces the header values and credentials of every entry the
// chat has opened with [REDACTED].
func (m *RemoteServers) Redact(s string) string {
	m.mu.Lock()
	r := m.redactor
	m.mu.Unlock()
	return r.Redact(s)
}

// Secrets returns the values Redact replaces, for a chat that builds one
// redactor of its own.
func (m *RemoteServers) Secrets() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for v := range m.secrets {
		out = append(out, v)
	}
	return out
}

// Close disconnects every server and waits for the set's goroutines; the
// set cannot be used afterwards. A chat closes its set when it is closed
// and when the host shuts down.
func (m *RemoteServers) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.wg.Wait()
		return
	}
	m.closed = true
	servers := m.servers
	m.mu.Unlock()
	m.cancel()
	// Concurrently: closing one connection may wait for a server that does
	// not answer (the SDK's session DELETE), and the others need not.
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.remove)
	}
	wg.Wait()
	m.wg.Wait()
}

// PromptSection is the text a host puts in the agent's system prompt: which
// remote servers are unavailable and why, and which entries are skipped.
// It is "" when every server is connected.
func (l *RemoteListing) PromptSection() string {
	var b strings.Builder
	for _, s := range l.Servers {
		if s.Phase == RemoteUnavailable {
			fmt.Fprintf(&b, "- %s is unavailable: %s\n", s.Name, s.Reason)
		}
	}
	for _, s := range l.Skipped {
		name := s.Name
		if name == "" {
			name = "an entry"
		}
		fmt.Fprintf(&b, "- %s in servers.json is skipped: %s\n", name, s.Reason)
	}
	if l.FileProblem != "" {
		fmt.Fprintf(&b, "- servers.json is not used: %s\n", l.FileProblem)
	}
	if b.Len() == 0 {
		return ""
	}
	return "Remote MCP servers\n" + b.String()
}
