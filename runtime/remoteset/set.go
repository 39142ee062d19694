// Package remoteset is the set of one chat's connections to its remote MCP
// servers (SPEC §4): it connects every server of servers.json in the
// background, retries unreachable ones on a schedule, names their tools and
// calls them. A chat of a host owns one and hears from it through Hooks;
// `mcpc remote list` and `mcpc tools` use one on their own. Package remote
// reads servers.json, opens its sealed entries and dials one server.
package remoteset

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
	"github.com/mcpc-dev/mcpc/internal/clock"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// Retry schedule of an unreachable remote server (SPEC §4): before a
// listing, once 1, 2, 4, 8 minutes … after the last failure, at most 15
// minutes. Options.RetryBase and RetryMax override it.
const (
	DefaultRetryBase = time.Minute
	DefaultRetryMax  = 15 * time.Minute
)

// State is where the connection to a remote server stands.
type State string

const (
	Connecting  State = "connecting"
	Connected   State = "connected"
	Unavailable State = "unavailable"
)

// Warning is a remote tool that was renamed or skipped while naming,
// or an allowlisted tool that its server does not offer.
type Warning struct {
	Rule, Message, Suggestion string
}

// Listing is what Set.List returns: the tools to offer and
// the state of every server, for status output and the system prompt.
type Listing struct {
	// Tools are the remote tools, in servers.json order.
	Tools    []*Tool
	Servers  []ServerStatus
	Skipped  []Skipped
	Warnings []Warning
	// FileProblem is set when servers.json as a whole cannot be used.
	FileProblem string
	// Seq orders the listings of one set: Call uses the tools of the
	// listing with the highest Seq, and a chat applies listings in the
	// same order, so that what a chat offers is what Call finds even when
	// two listings finish out of order.
	Seq uint64
}

// A Set keeps one chat's connections to its remote servers (SPEC §4). It
// connects every server in the background when started; the
// first List waits for those connects, later ones first retry the
// unreachable servers that are due. A call runs on the server's
// connection, one at a time per tool; a transport failure drops the
// connection and the next call reconnects. servers.json is re-read before
// each listing and each call, so the `mcpc remote` commands take effect at
// once, without a restart. All methods are safe for concurrent use.
//
// Every goroutine of the set (a connect, the ping after a timed-out call,
// the close of a dropped connection) is one that Close waits for; in a
// chat, also one that Host.Close waits for (Hooks.Track).
type Set struct {
	workspace, scope string
	opts             Options
	clock            clock.Clock
	key              *remote.Key
	hooks            Hooks

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // goroutines, see background

	mu          sync.Mutex
	started     bool
	closed      bool
	fileData    []byte
	fileExists  bool
	loaded      bool
	readFailed  bool // the last read failed: the next one applies whatever it finds
	servers     []*server
	skipped     []Skipped
	fileProblem string
	secrets     map[string]bool
	redactor    *redact.Redactor
	tools       map[string]toolRef   // visible name → server and tool, from the latest listing
	named       map[*server][]string // each server's visible names, from the latest listing
	listSeq     uint64               // listings started
	appliedSeq  uint64               // the listing tools and named are from
	locks       map[string]chan struct{}
}

type toolRef struct {
	srv  *server
	tool string
}

// server is one opened entry.
type server struct {
	m       *Set
	entry   remote.Server
	sealed  string
	headers remote.Headers

	mu        sync.Mutex
	conn      *remote.Conn
	listed    bool
	offered   []*mcp.Tool // everything the server lists
	state     State
	reason    string
	failures  int
	nextRetry time.Time
	// retryDelay is the wait that set nextRetry.
	retryDelay time.Duration
	attempt    chan struct{} // closed when the running attempt ends
	removed    bool
	route      Route // what the server sends during calls, and the calls' params
}

// Hooks are what a set reports to and runs on; the zero value is a set of
// its own (`mcpc remote list`, `mcpc tools`): the real clock, no parent
// context, goroutines of its own. Every hook may be nil.
type Hooks struct {
	// Clock runs the retry schedule; nil means the real clock.
	Clock clock.Clock
	// Context is the parent of every connection: when it ends, they end.
	Context context.Context
	// Track, if set, runs f as a goroutine that its owner waits for too (a
	// host: Host.Close returns once its connects, pings and closes have
	// ended). It reports false, without running f, once the owner is closed.
	Track func(f func()) bool
	// Log receives the failures of calls that a host logs: a connection
	// that failed during a call, a call that timed out.
	Log func(server, msg string)
	// Changed runs in the background (a goroutine Close waits for), on the
	// set's context, when a call found servers.json changed: a chat then
	// lists again and tells its clients.
	Changed func(ctx context.Context)
	// Route is called once for each server opened: how what it sends besides
	// tools passes through a chat's gateway, and how its calls carry their
	// origin.
	Route func(server string) Route
	// Connected is called after each connect of a server.
	Connected func(server string, conn *remote.Conn)
}

// Route is one server's side of a chat's gateway (Hooks.Route).
type Route struct {
	// Client, if set, returns the options of the server's MCP client, for
	// each connect.
	Client func() *mcp.ClientOptions
	// Params, if set, makes the params of a call of the server's tool, and
	// returns what to run when the call ends.
	Params func(ctx context.Context, tool string, args any) (*mcp.CallToolParams, func())
	// Order, if set, orders what each connection reads for its client
	// (remote.DialOptions.Order).
	Order remote.Order
}

// New returns the remote servers of the chat whose workspace and session
// scope are given, with opts.Secret as the host secret ("" skips every
// entry). Nothing is read or connected before Start or the first List;
// Close ends every connection and waits for the set's goroutines.
func New(workspace, scope string, opts Options, hooks Hooks) (*Set, error) {
	if workspace == "" {
		return nil, errors.New("remote: no workspace")
	}
	if scope == "" {
		return nil, errors.New("remote: no session scope")
	}
	if hooks.Clock == nil {
		hooks.Clock = clock.Real{}
	}
	m := &Set{workspace: workspace, scope: scope, opts: opts, clock: hooks.Clock, hooks: hooks,
		secrets: map[string]bool{}, redactor: redact.New(nil), tools: map[string]toolRef{}, locks: map[string]chan struct{}{}}
	if opts.Secret != "" {
		k, err := remote.NewKey(opts.Secret)
		if err != nil {
			return nil, err
		}
		m.key = k
	}
	parent := hooks.Context
	if parent == nil {
		parent = context.Background()
	}
	m.ctx, m.cancel = context.WithCancel(parent)
	return m, nil
}

// background runs f as a goroutine that Close waits for, and one that
// Hooks.Track tracks too. It reports false, without running f, once the set
// or its owner is closed.
func (m *Set) background(f func()) bool {
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
	if m.hooks.Track == nil {
		go run()
		return true
	}
	if !m.hooks.Track(run) {
		m.wg.Done()
		return false
	}
	return true
}

func (m *Set) retryDelay(failures int) time.Duration {
	base, limit := m.opts.RetryBase, m.opts.RetryMax
	if base <= 0 {
		base = DefaultRetryBase
	}
	if limit <= 0 {
		limit = DefaultRetryMax
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
func (m *Set) Start() {
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
func (m *Set) reload() bool {
	data, exists, err := remote.ReadFile(m.workspace)
	m.mu.Lock()
	if m.closed || m.loaded && err == nil && !m.readFailed && exists == m.fileExists && bytes.Equal(data, m.fileData) {
		m.mu.Unlock()
		return false
	}
	m.loaded, m.fileData, m.fileExists, m.readFailed = true, data, exists, err != nil
	old := m.servers
	m.servers, m.skipped, m.fileProblem = nil, nil, ""
	var fresh []*server
	switch {
	case err != nil:
		m.fileProblem = err.Error()
	case exists:
		f := remote.Parse(remote.Path(m.workspace), data)
		m.fileProblem = f.Problem
		for _, e := range f.Entries {
			s, problem := m.open(e, old)
			if problem != "" {
				m.skipped = append(m.skipped, Skipped{Name: e.Name, Position: e.Pos.String(), Reason: problem})
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
	var gone []*server
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
func (m *Set) open(e *remote.Entry, old []*server) (s *server, problem string) {
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
	return &server{entry: e.Server, sealed: e.Sealed, headers: h, state: Connecting, route: m.route(e.Name)}, ""
}

// startAttempt starts connecting in the background, unless an attempt is
// running. full also lists the tools. It returns the channel closed when
// the attempt ends (at once when none can start: the set is closed).
func (s *server) startAttempt(full bool) <-chan struct{} {
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
		s.state = Connecting
	}
	return done
}

func (s *server) connect(full bool, done chan struct{}) {
	m := s.m
	dial := m.opts.Dial
	if s.route.Client != nil {
		dial.Client = s.route.Client()
	}
	dial.Order = s.route.Order
	var connected *remote.Conn
	defer func() {
		// After the attempt ends (List does not wait for this).
		if connected != nil && m.hooks.Connected != nil {
			m.hooks.Connected(s.entry.Name, connected)
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
		reason = m.Redact(Reason(err))
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
		s.state = Unavailable
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
	s.conn, s.state, s.reason, s.failures = conn, Connected, "", 0
	connected = conn
	if full {
		s.offered, s.listed = tools, true
	}
}

// Reason is why a connect, a listing or a call failed, as status shows it.
func Reason(err error) string {
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
func (s *server) remove() {
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
func (s *server) allowed() (tools []*mcp.Tool, missing []string) {
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
func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{
		Name: s.entry.Name, URL: remote.URLWithoutQuery(s.entry.URL), Transport: s.entry.Transport,
		Phase: s.state, Reason: s.reason, Allowlist: s.entry.Tools, HeaderNames: s.headers.Names(),
		ToolNames: []string{},
	}
	if st.HeaderNames == nil {
		st.HeaderNames = []string{}
	}
	if s.state == Unavailable {
		st.RetryAt, st.retryDelay = s.nextRetry, s.retryDelay
	}
	if s.state == Connected {
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
func (s ServerStatus) line() string {
	switch s.Phase {
	case Connected:
		if len(s.ServerTools) == 1 {
			return "connected · 1 tool"
		}
		return fmt.Sprintf("connected · %d tools", len(s.ServerTools))
	case Unavailable:
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
func (m *Set) List(ctx context.Context, taken func(name string) bool) (*Listing, error) {
	m.Start()
	m.reload()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("remote: the chat's connections are closed")
	}
	servers := append([]*server(nil), m.servers...)
	m.mu.Unlock()

	now := m.clock.Now()
	var waits []<-chan struct{}
	for _, s := range servers {
		s.mu.Lock()
		running, due := s.attempt, s.state == Unavailable && !now.Before(s.nextRetry)
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
func (m *Set) listing(servers []*server, taken func(string) bool) *Listing {
	m.mu.Lock()
	m.listSeq++
	l := &Listing{Seq: m.listSeq}
	m.mu.Unlock()
	var groups []naming.ServerTools
	byName := map[string]*server{}
	toolsOf := map[string]map[string]*mcp.Tool{}
	for _, s := range servers {
		st := s.status()
		l.Servers = append(l.Servers, st)
		for _, name := range st.Missing {
			l.Warnings = append(l.Warnings, Warning{Rule: rules.RemoteToolMissing.ID, Message: fmt.Sprintf("remote server %q does not offer the allowlisted tool %q", s.entry.Name, name), Suggestion: fmt.Sprintf("mcpc remote tools %s shows the tools it offers", s.entry.Name)})
		}
		if st.Phase != Connected {
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
	refs := map[string]toolRef{}
	m.mu.Lock()
	red := m.redactor
	m.mu.Unlock()
	for _, r := range naming.Assign(groups, naming.Options{Builtins: []string{}}) {
		if r.Rule != "" {
			l.Warnings = append(l.Warnings, Warning{Rule: r.Rule, Message: m.Redact(r.Message), Suggestion: r.Suggestion})
		}
		if !r.Registered() {
			continue
		}
		if taken != nil && taken(r.Name) {
			l.Warnings = append(l.Warnings, Warning{Rule: naming.RuleCollision,
				Message:    m.Redact(fmt.Sprintf("tool %q of remote server %q is skipped: the name %q is already used by another tool", r.Tool, r.Server, r.Name)),
				Suggestion: "add the remote server under another name"})
			continue
		}
		orig := toolsOf[r.Server][r.Tool]
		// Every string of the definition, schemas included: a server could
		// put a secret in a default or an example.
		def, err := redact.Tool(orig, red.Redact)
		if err != nil {
			l.Warnings = append(l.Warnings, Warning{Rule: rules.RemoteToolMissing.ID,
				Message: m.Redact(fmt.Sprintf("tool %q of remote server %q is not offered: its definition could not be checked for secrets (%v)", r.Tool, r.Server, err))})
			continue
		}
		def.Name = r.Name
		refs[r.Name] = toolRef{srv: byName[r.Server], tool: r.Tool}
		l.Tools = append(l.Tools, &Tool{Name: r.Name, Server: r.Server, ServerTool: r.Tool, Def: def})
	}
	named := map[*server][]string{}
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
	// a newer one's tools (see Listing.Seq).
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
func (m *Set) Status() ([]ServerStatus, []Skipped, string) {
	m.mu.Lock()
	servers := append([]*server(nil), m.servers...)
	skipped := append([]Skipped(nil), m.skipped...)
	problem := m.fileProblem
	named := m.named
	m.mu.Unlock()
	var out []ServerStatus
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
func (m *Set) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
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
	if m.reload() && m.hooks.Changed != nil {
		m.background(func() { m.hooks.Changed(m.ctx) })
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
		return &CallError{Kind: kind, Server: ref.server(), Tool: name, Message: m.Redact(msg)}
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
	params, leave := &mcp.CallToolParams{Name: ref.tool, Arguments: args}, func() {}
	if s.route.Params != nil {
		params, leave = s.route.Params(ctx, ref.tool, args)
	}
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
func (m *Set) successorLocked(ref toolRef) (toolRef, string) {
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
		return toolRef{srv: n, tool: ref.tool}, ""
	}
	return ref, ""
}

// server is the name of the server the tool belongs to ("" when unknown).
func (r toolRef) server() string {
	if r.srv == nil {
		return ""
	}
	return r.srv.entry.Name
}

// logFailure logs a call's failure that a host logs.
func (m *Set) logFailure(server string, ce *CallError) {
	if m.hooks.Log != nil {
		m.hooks.Log(server, ce.Message)
	}
}

// connForCall returns the server's live connection, reconnecting (handshake
// only) when it was dropped; without one, it says why.
func (s *server) connForCall(ctx context.Context) (*remote.Conn, string) {
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
		case state == Unavailable && m.clock.Now().Before(next):
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
func (s *server) pingOrDrop(c *remote.Conn) {
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
func (s *server) drop(c *remote.Conn) {
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
func (m *Set) Redact(s string) string {
	m.mu.Lock()
	r := m.redactor
	m.mu.Unlock()
	return r.Redact(s)
}

// Secrets returns the values Redact replaces, for a chat that builds one
// redactor of its own.
func (m *Set) Secrets() []string {
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
func (m *Set) Close() {
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
func (l *Listing) PromptSection() string {
	var b strings.Builder
	for _, s := range l.Servers {
		if s.Phase == Unavailable {
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

// Options configure a set: the chats' remote servers of a host
// (HostOptions.Remote), or a set of its own. The
// zero value uses SPEC's timeouts and, in a host, the host environment's
// secret.
type Options struct {
	// Secret opens the sealed entries; in a host, "" means the host
	// environment's MCP_ENCRYPTION_SECRET, else TELEGRAM_BOT_TOKEN. Without
	// a secret every entry is skipped, with that reason.
	Secret string
	// Dial tunes the connections (handshake and list timeouts, client
	// version, HTTP transport). A nil Dial.Transport means one transport for
	// the whole host, whose idle connections Host.Close closes.
	Dial remote.DialOptions
	// CallTimeout bounds one remote call; 0 means remote.CallTimeout (120 s).
	CallTimeout time.Duration
	// RetryBase and RetryMax override the retry schedule of an unreachable
	// server (0: DefaultRetryBase and DefaultRetryMax). In a
	// host, the schedule runs on HostOptions.Clock.
	RetryBase, RetryMax time.Duration
}

// ServerStatus is one remote server of a chat: in its status, in a
// Listing and from Set.Status. It holds header names,
// never values.
type ServerStatus struct {
	Name string `json:"name"`
	// URL is the server's URL without query (a query may hold a key).
	URL string `json:"url"`
	// Transport as configured (auto, http, sse); Connected the one in use
	// ("http" or "sse") while connected.
	Transport string `json:"transport"`
	Connected string `json:"connected,omitempty"`
	// State is the status column: "connecting", "connected · N tools" (N
	// the ServerTools) or "unavailable: <reason>".
	State string `json:"state"`
	// Phase and Reason are State for programs (State shows both): where
	// the connection stands (in JSON too, for a client of the admin
	// interface such as mcpc remote list), and why the server is
	// unavailable ("401 (Unauthorized)", "no answer within 15s", …).
	Phase  State  `json:"phase"`
	Reason string `json:"-"`
	// Tools counts the agent-visible tools it contributes; ToolNames are
	// their names (in a chat: the ones it serves).
	Tools     int      `json:"tools"`
	ToolNames []string `json:"toolNames"`
	// ServerTools are the server's own names of the tools in use: offered
	// and allowed, in its listing order.
	ServerTools []string `json:"-"`
	// HeaderNames are the names of the headers sent; never their values.
	HeaderNames []string `json:"headerNames"`
	// Allowlist is the entry's tools; null allows every tool. Missing are
	// allowlisted tools the server does not offer.
	Allowlist     []string  `json:"allowlist"`
	Missing       []string  `json:"missing,omitempty"`
	ServerName    string    `json:"serverName,omitempty"`
	ServerVersion string    `json:"serverVersion,omitempty"`
	RetryAt       time.Time `json:"retryAt,omitzero"` // when an unavailable server is tried again

	// retryDelay is the wait from the failure to RetryAt, which the log
	// names: the time left until RetryAt depends on when the log is
	// written.
	retryDelay time.Duration
}

// RetryDelay is the wait from the failure to RetryAt, which a host's log
// names: the time left until RetryAt depends on when the log is written.
func (s ServerStatus) RetryDelay() time.Duration { return s.retryDelay }

// Skipped is an entry of servers.json that is not used: invalid, or
// it does not open (written without the host secret, copied from another
// chat, or sealed with another secret).
type Skipped struct {
	Name     string `json:"name,omitempty"` // as written ("" when it has none)
	Position string `json:"position"`       // file:line:column
	Reason   string `json:"reason"`
}

// Tool is a remote tool of a listing: its visible name, its server and
// the server's own name of it, and its definition (named, redacted).
type Tool struct {
	Name, Server, ServerTool string
	Def                      *mcp.Tool
}

// CallErrorKind classifies a failed call; the values are those of the
// host's call errors.
type CallErrorKind string

const (
	CallTimeout     CallErrorKind = "timeout"      // the call timeout passed; the server was told to cancel
	CallCancelled   CallErrorKind = "cancelled"    // the caller cancelled; the server was told
	CallServerError CallErrorKind = "server-error" // the server answered with a JSON-RPC error
	CallUnavailable CallErrorKind = "unavailable"  // the server is unreachable, was removed, or its connection failed during the call
)

// CallError is the error of a failed Set.Call. Its message is redacted.
type CallError struct {
	Kind   CallErrorKind
	Server string // the server's name in servers.json ("" when unknown)
	Tool   string // the visible name
	// Code is the JSON-RPC error code for CallServerError.
	Code    int64
	Message string
}

func (e *CallError) Error() string { return e.Message }

// route is the route of the server name (Hooks.Route).
func (m *Set) route(name string) Route {
	if m.hooks.Route == nil {
		return Route{}
	}
	return m.hooks.Route(name)
}

// server is the server of that name, nil if none.
func (m *Set) server(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.servers {
		if s.entry.Name == name {
			return s
		}
	}
	return nil
}

// Names are the set's servers, in servers.json order.
func (m *Set) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.entry.Name)
	}
	return out
}

// Live is a server with a live connection.
type Live struct {
	Name    string
	Session *mcp.ClientSession
}

// Live are the servers connected now, in servers.json order.
func (m *Set) Live() []Live {
	m.mu.Lock()
	servers := append([]*server(nil), m.servers...)
	m.mu.Unlock()
	var out []Live
	for _, s := range servers {
		s.mu.Lock()
		c := s.conn
		s.mu.Unlock()
		if c != nil && c.Alive() {
			out = append(out, Live{Name: s.entry.Name, Session: c.Session()})
		}
	}
	return out
}

// Session is the session of the server name, reconnecting as a call would.
func (m *Set) Session(ctx context.Context, name string) (*mcp.ClientSession, error) {
	s := m.server(name)
	if s == nil {
		return nil, fmt.Errorf("remote server %s is no longer in servers.json", name)
	}
	conn, msg := s.connForCall(ctx)
	if conn == nil {
		return nil, errors.New(msg)
	}
	return conn.Session(), nil
}

// RelistTools lists the tools of the server name again on its connection,
// after it said they changed; the next listing offers them. It reports
// false when the server has no connection or is gone, and the listing's
// error.
func (m *Set) RelistTools(ctx context.Context, name string) (bool, error) {
	s := m.server(name)
	if s == nil {
		return false, nil
	}
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return false, nil
	}
	tools, err := conn.ListTools(ctx)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	if s.conn == conn {
		s.offered, s.listed = tools, true
	}
	s.mu.Unlock()
	return true, nil
}
