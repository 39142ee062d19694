package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/naming"
	"github.com/mcpc-dev/mcpc/redact"
)

// Retry schedule of an unreachable server (SPEC §4): before a listing, once
// 1, 2, 4, 8 minutes … after the last failure, at most 15 minutes.
const (
	RetryBase = time.Minute
	RetryMax  = 15 * time.Minute
)

// Options configure a Manager: one chat's remote servers.
type Options struct {
	// Workspace is the chat's workspace; servers.json is read from it.
	Workspace string
	// Scope is the chat's session scope, bound into every sealed entry.
	Scope string
	// Secret is the host secret (see Secret); "" makes every entry skipped.
	Secret string
	// Now is the clock of the retry schedule; nil means time.Now.
	Now func() time.Time
	// Dial tunes connections (timeouts, HTTP transport).
	Dial DialOptions
	// CallTimeout bounds one call; 0 means CallTimeout (120 s).
	CallTimeout time.Duration
	// RetryBase and RetryMax override the retry schedule (0: 1 and 15 min).
	RetryBase, RetryMax time.Duration
}

// State of one remote server.
type State string

const (
	StateConnecting  State = "connecting"
	StateConnected   State = "connected"
	StateUnavailable State = "unavailable"
)

// ServerStatus is one server as a status output shows it. It holds header
// names, never values.
type ServerStatus struct {
	Name string
	// URL is the server's URL without query.
	URL string
	// Transport as configured; Connected is the one in use ("http", "sse")
	// while connected.
	Transport string
	Connected string
	State     State
	// Reason says why the server is unavailable ("401 (Unauthorized)",
	// "no answer within 15s", …). Redacted.
	Reason string
	// Allowlist is the entry's tools (nil: every tool).
	Allowlist []string
	// Tools are the server's own names of the tools in use: offered and
	// allowed.
	Tools []string
	// Missing are allowlisted tools the server does not offer.
	Missing       []string
	HeaderNames   []string
	ServerName    string
	ServerVersion string
	// NextRetry is when an unavailable server is tried again.
	NextRetry time.Time
}

// String is the status column: "connecting", "connected · 3 tools",
// "unavailable: 401 (Unauthorized)".
func (s ServerStatus) String() string {
	switch s.State {
	case StateConnected:
		if len(s.Tools) == 1 {
			return "connected · 1 tool"
		}
		return fmt.Sprintf("connected · %d tools", len(s.Tools))
	case StateUnavailable:
		return "unavailable: " + s.Reason
	}
	return string(s.State)
}

// Skipped is an entry that is not used: invalid, or it does not open.
type Skipped struct {
	Name   string // as written ("" when it has none)
	Pos    diag.Pos
	Reason string
}

// Tool is one remote tool the agent sees.
type Tool struct {
	// Name is the visible name, <server>__<tool> sanitized and cut.
	Name   string
	Server string
	// Tool is the tool as the server listed it; Tool.Name is the server's
	// own name, used to call it.
	Tool *mcp.Tool
	// Def is the definition to show the agent: a copy of Tool with Name set
	// to the visible name and every other string (title, description,
	// schemas, annotations, _meta) redacted.
	Def *mcp.Tool
}

// Warning is a tool that was renamed or skipped while naming.
type Warning struct {
	Rule, Message, Suggestion string
}

// Listing is what List returns: the tools to register and the state of
// every server, for status output and the system prompt.
type Listing struct {
	Tools    []Tool
	Servers  []ServerStatus
	Skipped  []Skipped
	Warnings []Warning
	// FileProblem is set when servers.json as a whole cannot be used.
	FileProblem string
}

// Manager keeps one chat's connections to its remote servers (SPEC §4). It
// connects every server in the background when started; the first List
// waits for those connects, later ones first retry the unreachable servers
// that are due. A call runs on the server's connection, one at a time per
// tool; a transport failure drops the connection and the next call
// reconnects. It re-reads servers.json before each listing, so the `mcpc
// remote` commands take effect without a restart. All methods are safe for
// concurrent use.
type Manager struct {
	opts   Options
	key    *Key
	ctx    context.Context
	cancel context.CancelFunc

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
	tools       map[string]toolRef // visible name → server and tool, from the last listing
	locks       map[string]chan struct{}
}

type toolRef struct {
	srv  *server
	tool string
}

// server is one opened entry.
type server struct {
	m       *Manager
	entry   Server
	sealed  string
	headers Headers

	mu        sync.Mutex
	conn      *Conn
	listed    bool
	offered   []*mcp.Tool // everything the server lists
	state     State
	reason    string
	failures  int
	nextRetry time.Time
	attempt   chan struct{} // closed when the running attempt ends
	removed   bool
}

// NewManager returns the manager of one chat. Nothing is read or connected
// before Start or the first List.
func NewManager(opts Options) (*Manager, error) {
	if opts.Workspace == "" {
		return nil, errors.New("remote: no workspace")
	}
	if opts.Scope == "" {
		return nil, errors.New("remote: no session scope")
	}
	m := &Manager{opts: opts, secrets: map[string]bool{}, redactor: redact.New(nil), tools: map[string]toolRef{}, locks: map[string]chan struct{}{}}
	if opts.Secret != "" {
		k, err := NewKey(opts.Secret)
		if err != nil {
			return nil, err
		}
		m.key = k
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m, nil
}

func (m *Manager) now() time.Time {
	if m.opts.Now != nil {
		return m.opts.Now()
	}
	return time.Now()
}

func (m *Manager) retryDelay(failures int) time.Duration {
	base, max := m.opts.RetryBase, m.opts.RetryMax
	if base <= 0 {
		base = RetryBase
	}
	if max <= 0 {
		max = RetryMax
	}
	d := base
	for i := 1; i < failures && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// Start reads servers.json and connects every server in the background
// (handshake and tools/list). It returns at once; calling it again does
// nothing.
func (m *Manager) Start() {
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
// are disconnected.
func (m *Manager) reload() {
	data, exists, err := readLimited(m.opts.Workspace)
	m.mu.Lock()
	if m.closed || m.loaded && err == nil && !m.readFailed && exists == m.fileExists && bytes.Equal(data, m.fileData) {
		m.mu.Unlock()
		return
	}
	m.loaded, m.fileData, m.fileExists, m.readFailed = true, data, exists, err != nil
	old := m.servers
	m.servers, m.skipped, m.fileProblem = nil, nil, ""
	var fresh []*server
	switch {
	case err != nil:
		m.fileProblem = err.Error()
	case exists:
		f := Parse(Path(m.opts.Workspace), data)
		m.fileProblem = f.Problem
		for _, e := range f.Entries {
			if !e.Valid() {
				m.skipped = append(m.skipped, Skipped{Name: e.Name, Pos: e.Pos, Reason: strings.TrimPrefix(e.Problem, e.Label()+": ")})
				continue
			}
			if m.key == nil {
				m.skipped = append(m.skipped, Skipped{Name: e.Name, Pos: e.Pos, Reason: "cannot be opened: the host has no " + SecretVar + " or " + FallbackSecretVar})
				continue
			}
			h, err := m.key.Open(m.opts.Scope, e.Server, e.Sealed)
			if err != nil {
				m.skipped = append(m.skipped, Skipped{Name: e.Name, Pos: e.Pos, Reason: NotOpenReason})
				continue
			}
			var keep *server
			for _, s := range old {
				if s.sealed == e.Sealed && sameServer(s.entry, e.Server) {
					keep = s
				}
			}
			if keep == nil {
				keep = &server{m: m, entry: e.Server, sealed: e.Sealed, headers: h, state: StateConnecting}
				fresh = append(fresh, keep)
			}
			m.servers = append(m.servers, keep)
			for _, v := range h.Secrets() {
				m.secrets[v] = true
			}
		}
	}
	var all []string
	for v := range m.secrets {
		all = append(all, SecretForms(v)...)
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
}

// NotOpenReason is why an entry that does not open is skipped.
const NotOpenReason = "does not open: it was written or edited without the host secret, copied from another chat, or sealed with another secret; add it again with mcpc remote add"

func sameServer(a, b Server) bool {
	if a.Name != b.Name || a.URL != b.URL || a.Transport != b.Transport || a.Auth != b.Auth || (a.Tools == nil) != (b.Tools == nil) || len(a.Tools) != len(b.Tools) {
		return false
	}
	for i := range a.Tools {
		if a.Tools[i] != b.Tools[i] {
			return false
		}
	}
	return true
}

// startAttempt starts connecting in the background, unless an attempt is
// running. full also lists the tools. It returns the channel closed when
// the attempt ends.
func (s *server) startAttempt(full bool) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attempt != nil {
		return s.attempt
	}
	if s.removed {
		done := make(chan struct{})
		close(done)
		return done
	}
	done := make(chan struct{})
	s.attempt = done
	if full || !s.listed {
		full = true
		s.state = StateConnecting
	}
	go s.connect(full, done)
	return done
}

func (s *server) connect(full bool, done chan struct{}) {
	m := s.m
	conn, err := Dial(m.ctx, s.entry, s.headers, m.opts.Dial)
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
		s.state = StateUnavailable
		s.reason = reason
		s.failures++
		s.nextRetry = m.now().Add(m.retryDelay(s.failures))
		s.conn = nil
		return
	}
	if s.conn != nil {
		s.conn.Close()
	}
	s.conn, s.state, s.reason, s.failures = conn, StateConnected, "", 0
	if full {
		s.offered, s.listed = tools, true
	}
}

func reasonOf(err error) string {
	var f *Failure
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

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{
		Name: s.entry.Name, URL: URLWithoutQuery(s.entry.URL), Transport: s.entry.Transport,
		State: s.state, Reason: s.reason, Allowlist: s.entry.Tools, HeaderNames: s.headers.Names(),
	}
	if s.state == StateUnavailable {
		st.NextRetry = s.nextRetry
	}
	if s.state == StateConnected {
		tools, missing := s.allowed()
		for _, t := range tools {
			st.Tools = append(st.Tools, t.Name)
		}
		st.Missing = missing
		if s.conn != nil {
			st.Connected, st.ServerName, st.ServerVersion = s.conn.Transport, s.conn.ServerName, s.conn.ServerVersion
		}
	}
	return st
}

// List returns the chat's remote tools. The first listing waits for the
// connects Start began (Start is called if it was not); later ones re-read
// servers.json and first retry each unavailable server whose retry time
// has come, waiting for those attempts (each bounded by the handshake and
// list timeouts). taken reports names some other tool already has (built-in
// or stdio tools); such remote tools are skipped with a warning. When ctx
// ends first, List returns what is known, with ctx's error.
func (m *Manager) List(ctx context.Context, taken func(name string) bool) (*Listing, error) {
	m.Start()
	m.reload()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("remote: the chat's connections are closed")
	}
	servers := append([]*server(nil), m.servers...)
	m.mu.Unlock()

	now := m.now()
	var waits []<-chan struct{}
	for _, s := range servers {
		s.mu.Lock()
		running, due := s.attempt, s.state == StateUnavailable && !now.Before(s.nextRetry)
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
func (m *Manager) listing(servers []*server, taken func(string) bool) *Listing {
	l := &Listing{}
	var groups []naming.ServerTools
	byName := map[string]*server{}
	toolsOf := map[string]map[string]*mcp.Tool{}
	for _, s := range servers {
		st := s.status()
		l.Servers = append(l.Servers, st)
		for _, name := range st.Missing {
			l.Warnings = append(l.Warnings, Warning{Rule: RuleTools, Message: fmt.Sprintf("remote server %q does not offer the allowlisted tool %q", s.entry.Name, name), Suggestion: fmt.Sprintf("mcpc remote tools %s shows the tools it offers", s.entry.Name)})
		}
		if st.State != StateConnected {
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
		def, err := RedactTool(orig, red.Redact)
		if err != nil {
			l.Warnings = append(l.Warnings, Warning{Rule: RuleTools,
				Message: m.Redact(fmt.Sprintf("tool %q of remote server %q is not offered: its definition could not be checked for secrets (%v)", r.Tool, r.Server, err))})
			continue
		}
		def.Name = r.Name
		refs[r.Name] = toolRef{srv: byName[r.Server], tool: r.Tool}
		l.Tools = append(l.Tools, Tool{Name: r.Name, Server: r.Server, Tool: orig, Def: def})
	}
	m.mu.Lock()
	m.tools = refs
	l.Skipped = append(l.Skipped, m.skipped...)
	l.FileProblem = m.fileProblem
	m.mu.Unlock()
	return l
}

// Status returns every server's state now, without waiting or retrying,
// then the skipped entries and the problem of the file, if any.
func (m *Manager) Status() ([]ServerStatus, []Skipped, string) {
	m.mu.Lock()
	servers := append([]*server(nil), m.servers...)
	skipped := append([]Skipped(nil), m.skipped...)
	problem := m.fileProblem
	m.mu.Unlock()
	var out []ServerStatus
	for _, s := range servers {
		out = append(out, s.status())
	}
	return out, skipped, problem
}

// Call calls the remote tool with the visible name from the last listing.
// Calls of one tool run one at a time; each runs at most the call timeout
// and is never retried. A transport failure or a timeout drops the
// connection: the next call reconnects. Results and errors are redacted:
// header values and credentials show as [REDACTED].
func (m *Manager) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	m.mu.Lock()
	ref, ok := m.tools[name]
	closed := m.closed
	lock := m.locks[name]
	if lock == nil {
		lock = make(chan struct{}, 1)
		m.locks[name] = lock
	}
	m.mu.Unlock()
	if closed {
		return nil, &CallError{Msg: "the chat's remote connections are closed"}
	}
	if !ok {
		return nil, &CallError{Msg: fmt.Sprintf("unknown remote tool %q", name)}
	}
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		return nil, &CallError{Msg: "the call was cancelled"}
	}
	defer func() { <-lock }()

	s := ref.srv
	conn, err := s.connForCall(ctx)
	if err != nil {
		return nil, err
	}
	res, err := conn.Call(ctx, ref.tool, args, m.opts.CallTimeout)
	if err == nil {
		return redactResult(res, m.Redact), nil
	}
	var ce *CallError
	if !errors.As(err, &ce) {
		return nil, &CallError{Msg: m.Redact(fmt.Sprintf("remote server %s: %v", s.entry.Name, err))}
	}
	prefix := fmt.Sprintf("remote server %s: ", s.entry.Name)
	out := &CallError{Transport: ce.Transport, Timeout: ce.Timeout, Server: ce.Server, Code: ce.Code}
	switch {
	case ce.Transport:
		s.drop(conn)
		out.Msg = prefix + "the connection failed during the call (" + ce.Msg + "). The call was not retried, since the server may have run it; the next call reconnects."
	case ce.Timeout:
		// The server was told (notifications/cancelled). If it no longer
		// answers at all, the connection is dropped: the next call
		// reconnects.
		go func() {
			if conn.Ping(m.ctx) != nil {
				s.drop(conn)
			}
		}()
		out.Msg = prefix + ce.Msg
	default:
		out.Msg = prefix + ce.Msg
	}
	out.Msg = m.Redact(out.Msg)
	return nil, out
}

// connForCall returns the server's live connection, reconnecting (handshake
// only) when it was dropped.
func (s *server) connForCall(ctx context.Context) (*Conn, error) {
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
			return nil, &CallError{Msg: fmt.Sprintf("remote server %s was removed from servers.json", s.entry.Name)}
		case c != nil && c.Alive():
			return c, nil
		case running != nil:
		case state == StateUnavailable && m.now().Before(next):
			return nil, &CallError{Msg: fmt.Sprintf("remote server %s is unavailable: %s", s.entry.Name, reason)}
		default:
			if c != nil {
				s.drop(c)
			}
			running = s.startAttempt(false)
		}
		select {
		case <-running:
		case <-ctx.Done():
			return nil, &CallError{Msg: "the call was cancelled"}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && s.conn.Alive() {
		return s.conn, nil
	}
	reason := s.reason
	if reason == "" {
		reason = "it did not reconnect"
	}
	return nil, &CallError{Msg: fmt.Sprintf("remote server %s is unavailable: %s", s.entry.Name, reason)}
}

// drop forgets c if it is still the server's connection, and closes it in
// the background (closing may wait for a server that no longer answers).
func (s *server) drop(c *Conn) {
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.mu.Unlock()
	go c.Close()
}

// Redact replaces the header values and credentials of every entry the
// chat has opened with [REDACTED]. The runtime applies it to every tool
// result of the chat, stdio tools included.
func (m *Manager) Redact(s string) string {
	m.mu.Lock()
	r := m.redactor
	m.mu.Unlock()
	return r.Redact(s)
}

// Secrets returns the values Redact replaces, for a runtime that builds one
// redactor per chat.
func (m *Manager) Secrets() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for v := range m.secrets {
		out = append(out, v)
	}
	return out
}

// Close disconnects every server; the manager cannot be used afterwards.
// Call it when the chat is reset or the host shuts down.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
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
}

// PromptSection is the text a host puts in the agent's system prompt: which
// remote servers are unavailable and why, and which entries are skipped.
// It is "" when every server is connected.
func (l *Listing) PromptSection() string {
	var b strings.Builder
	for _, s := range l.Servers {
		if s.State == StateUnavailable {
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
