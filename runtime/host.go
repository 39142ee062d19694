package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/runtime/internal/hooks"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// DefaultDiscoveryRetry is how long a server whose discovery failed waits
// before it is discovered again (SPEC §4).
const DefaultDiscoveryRetry = 60 * time.Second

// ErrHostClosed is returned by every call on a Host, or on one of its
// chats, after Host.Close.
var ErrHostClosed = errors.New("the MCP host is shut down")

// HostOptions configure a Host. The zero value is ready to use: the
// process has an empty host environment, the built-in deny-list and the
// real clock.
type HostOptions struct {
	// Env is the host environment ${env:NAME} reads and servers inherit
	// (minus the deny-list). Env.Deny nil means the built-in deny-list.
	Env HostEnv
	// Builtins are the host's own tool names (SPEC §2.5 step 5); nil means
	// naming.DefaultBuiltins.
	Builtins []string
	// Secrets are more known secret values to redact (say, an admin token),
	// besides the deny-listed host variables and the ${env:…} resolutions.
	Secrets []string
	// Clock measures every rule's duration (see Clock); nil means RealClock.
	Clock Clock
	// DiscoveryRetry is the wait before a failed discovery is tried again;
	// 0 means DefaultDiscoveryRetry.
	DiscoveryRetry time.Duration
	// Log, if set, receives what the host would log: discovery results,
	// naming warnings, processes starting and stopping, and each stderr
	// line of a server at its stderrLevel (not at all for None). Messages
	// are redacted. Calls may come from several goroutines at once.
	Log func(LogEntry)
	// OnToolsChanged, if set, is called after the agent-visible tool list
	// changed because a discovery finished (the first one, or a retry that
	// succeeded). It runs on a background goroutine of the host.
	OnToolsChanged func()
	// MaxProcesses caps the chat processes the host runs at once (starting
	// ones included; discoveries are not counted: there is at most one per
	// server). A call whose server would need one more fails with
	// CallLimit; 0 means no cap.
	MaxProcesses int
	// Remote, if set, gives every chat with a session scope the remote
	// servers of its workspace's servers.json (SPEC §3, §4); see
	// RemoteOptions. nil: chats have stdio servers only.
	Remote *RemoteOptions
}

// LogEntry is one line the host logs.
type LogEntry struct {
	// Level is a .NET log level name: Trace, Debug, Information, Warning,
	// Error or Critical.
	Level   string
	Chat    string // "" for host-wide events such as discovery
	Server  string // "" when no single server is concerned
	Message string // redacted
	// Stderr marks a line the server wrote to its stderr (Message is the
	// line), as opposed to an event of the host.
	Stderr bool
}

// Host runs one plan for many chats (SPEC §4): it discovers each server's
// tools once, names them (SPEC §2.5), and gives every chat its own server
// processes. All methods are safe for concurrent use.
//
// Example:
//
//	p, ds := plan.Read("plan.json", data)
//	if p == nil { … print ds … }
//	host, err := runtime.NewHost(p, runtime.HostOptions{
//		Env: runtime.EnvFromList(os.Environ(), nil),
//	})
//	if err != nil { … }
//	defer host.Close()
//
//	chat, err := host.Chat("42", "/srv/chats/42")
//	tools, err := chat.Tools(ctx) // discovers on first use, shared by all chats
//	res, err := chat.Call(ctx, tools[0].Name, json.RawMessage(`{"text":"hi"}`))
//	chat.Reset() // "/new": stop this chat's processes
type Host struct {
	plan  *plan.Plan
	opts  HostOptions
	clock Clock
	env   HostEnv
	// prof is what the plan's profile decides (profile.go): how tools are
	// named, how an entry is launched, how secrets are learned, how tools
	// are discovered. shared, if not nil, is the one chat every client of
	// a profile without chats uses.
	prof   hostProfile
	shared *Chat
	// red redacts the host's known secrets; forms are their forms, from
	// which a chat with remote servers builds its own redactor. A profile
	// that learns secrets on a reload replaces both (learnSecrets).
	red     atomic.Pointer[redact.Redactor]
	formsMu sync.Mutex
	forms   []string
	// maxForm is the length of the longest text red replaces;
	// remoteMaxForm the same for remoteRed.
	maxForm       atomic.Int64
	remoteMaxForm atomic.Int64
	retry         time.Duration
	// set is the plan's servers now; a reload (Host.Apply, reload.go)
	// replaces it whole, so readers take it once and need no lock.
	set atomic.Pointer[serverSet]
	// applyMu makes reloads one at a time; plan is the plan applied last.
	applyMu sync.Mutex

	ctx       context.Context // ends at Close: cancels starts, discoveries and calls
	cancel    context.CancelFunc
	wg        sync.WaitGroup // background goroutines, see track
	closeDone chan struct{}  // closed when the first Close is done

	mu        sync.Mutex
	closed    bool
	chats     map[string]*Chat
	listeners []func() // besides HostOptions.OnToolsChanged: gateways

	procs processLimit // chat processes, against MaxProcesses
	// escapes counts the processes found outside their server's process
	// group when it stopped (see escaped).
	escapes atomic.Int64

	rebuildMu sync.Mutex // one rebuild at a time, so the last one sees every result
	// namingLogged holds the naming warnings logged already (server, rule
	// and message): each table rebuild names every tool again, and a
	// warning is logged once. Under rebuildMu.
	namingLogged map[string]bool
	tableMu      sync.RWMutex
	table        *ToolTable

	// Remote servers (HostOptions.Remote).
	remoteSecret  string          // opens sealed entries; "" if the host has none
	remoteHTTP    *http.Transport // shared by the chats' connections; nil if given
	rmu           sync.Mutex
	remoteSecrets map[string]bool                 // header values opened by any chat
	remoteRed     atomic.Pointer[redact.Redactor] // redacts them in log lines
}

// NewHost builds a host for the plan. Nothing starts until a chat lists or
// calls tools.
func NewHost(p *plan.Plan, opts HostOptions) (*Host, error) {
	return newHost(p, opts, volcanicProfile{})
}

// newHost builds a host for a plan of prof's profile.
func newHost(p *plan.Plan, opts HostOptions, prof hostProfile) (*Host, error) {
	if err := checkPlan(p, prof.name()); err != nil {
		return nil, err
	}
	h := &Host{plan: p, opts: opts, clock: opts.Clock, env: opts.Env, retry: opts.DiscoveryRetry, prof: prof,
		chats: map[string]*Chat{}, closeDone: make(chan struct{})}
	if h.clock == nil {
		h.clock = RealClock{}
	}
	h.procs.max = max(opts.MaxProcesses, 0)
	if h.retry <= 0 {
		h.retry = DefaultDiscoveryRetry
	}
	if h.env.Deny == nil {
		h.env.Deny = denylist.Default()
	}
	if h.env.Vars == nil {
		h.env.Vars = map[string]string{}
	}
	set := &serverSet{byName: map[string]*hostServer{}}
	secrets := append([]string(nil), opts.Secrets...)
	for i := range p.Servers {
		s := &p.Servers[i]
		set.add(&hostServer{h: h, cfg: s})
		secrets = append(secrets, h.env.Secrets(s)...)
	}
	h.set.Store(set)
	var forms []string
	for _, s := range secrets {
		forms = append(forms, secretForms(s)...)
	}
	if ro := opts.Remote; ro != nil {
		h.remoteSecret = ro.Secret
		if h.remoteSecret == "" {
			h.remoteSecret, _, _ = remote.Secret(func(name string) string { return h.env.Vars[name] })
		}
		// A known secret, also when it does not come from a deny-listed
		// host variable.
		forms = append(forms, secretForms(h.remoteSecret)...)
		if ro.Dial.Transport == nil {
			h.remoteHTTP = newRemoteTransport()
		}
	}
	h.red.Store(redact.New(nil))
	h.learnSecrets(forms)
	h.remoteSecrets = map[string]bool{}
	h.remoteRed.Store(redact.New(nil))
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.table = &ToolTable{byName: map[string]*Tool{}, perServer: map[string]int{}}
	for _, s := range set.list {
		h.warnUnsetEnv(s.cfg)
	}
	return h, nil
}

// warnUnsetEnv logs, once for a server's configuration, the host
// variables its env refers to that the host environment (fixed when mcpc
// run starts) does not hold: the server would get them empty, silently.
func (h *Host) warnUnsetEnv(s *plan.Server) {
	if names := h.env.Unset(s); s.Enabled && len(names) > 0 {
		h.log("Warning", "", s.Name, "MCP server %s: env refers to host variables that are not set: %s; the server gets them empty", s.Name, strings.Join(names, ", "))
	}
}

// Redact replaces every known secret of the host in s with [REDACTED].
func (h *Host) Redact(s string) string { return h.red.Load().Redact(s) }

// redactor returns what the host redacts its known secrets with now.
func (h *Host) redactor() *redact.Redactor { return h.red.Load() }

// knownForms returns the forms of the host's known secrets.
func (h *Host) knownForms() []string {
	h.formsMu.Lock()
	defer h.formsMu.Unlock()
	return append([]string(nil), h.forms...)
}

// learnSecrets adds forms (of secretForms) to what the host redacts. A
// secret once known stays known: a reload does not make an old value
// showable.
func (h *Host) learnSecrets(forms []string) {
	h.formsMu.Lock()
	defer h.formsMu.Unlock()
	known := make(map[string]bool, len(h.forms))
	for _, f := range h.forms {
		known[f] = true
	}
	added := false
	for _, f := range forms {
		if !known[f] {
			known[f], added = true, true
			h.forms = append(h.forms, f)
		}
	}
	if !added {
		return
	}
	h.red.Store(redact.New(h.forms))
	h.maxForm.Store(int64(longestForm(h.forms)))
}

// track runs f as a background goroutine that Close waits for. It reports
// false, without running f, once the host is closed.
func (h *Host) track(f func()) bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

// do runs f synchronously as work that Close waits for; it does nothing
// once the host is closed (Close then stops everything itself).
func (h *Host) do(f func()) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	defer h.wg.Done()
	f()
}

// log sends a redacted entry to HostOptions.Log.
func (h *Host) log(level, chat, server, format string, args ...any) {
	if h.opts.Log == nil {
		return
	}
	h.opts.Log(LogEntry{Level: level, Chat: chat, Server: server, Message: h.redactLog(fmt.Sprintf(format, args...))})
}

// logStderr logs one stderr line of a server at its stderrLevel; line is
// redacted already (redactLog), whole, before any cut.
func (h *Host) logStderr(level, chat, server, line string) {
	h.opts.Log(LogEntry{Level: level, Chat: chat, Server: server, Message: line, Stderr: true})
}

// Chat returns the chat id, creating it on first use with workspace as its
// workspace directory (made absolute). Asking again for the same id with
// another workspace is an error. The workspace is created (0700) when the
// chat's first process starts, if it does not exist. The chat's session
// scope, which its remote servers are sealed for, is its id (see
// ChatWithScope).
func (h *Host) Chat(id, workspace string) (*Chat, error) {
	return h.ChatWithScope(id, workspace, id)
}

// ChatWithScope is Chat with a session scope other than the chat id, as
// for `mcpc run --stdio --scope SCOPE`. With HostOptions.Remote set, a new
// chat starts connecting to the remote servers of its servers.json that
// are sealed for scope, in the background; scope "" means the chat uses no
// remote servers. Asking again for the same id with another scope is an
// error.
func (h *Host) ChatWithScope(id, workspace, scope string) (*Chat, error) {
	if id == "" {
		return nil, errors.New("runtime: empty chat id")
	}
	if workspace == "" {
		return nil, fmt.Errorf("runtime: chat %q: empty workspace", id)
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("runtime: chat %q: workspace: %w", id, err)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrHostClosed
	}
	if c, ok := h.chats[id]; ok {
		h.mu.Unlock()
		if c.workspace != abs {
			return nil, fmt.Errorf("runtime: chat %q already runs in workspace %s, not %s", id, c.workspace, abs)
		}
		if c.scope != scope {
			return nil, fmt.Errorf("runtime: chat %q already runs with session scope %q, not %q", id, c.scope, scope)
		}
		return c, nil
	}
	c := newChat(h, id, abs, scope)
	h.chats[id] = c
	h.mu.Unlock()
	// Outside h.mu: it reads servers.json. A Close that comes first has
	// closed the manager, and Start then does nothing.
	c.remote.start()
	return c, nil
}

// FindChat returns the chat id if it exists, without creating it.
func (h *Host) FindChat(id string) (*Chat, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.chats[id]
	return c, ok
}

// Close stops every process of every chat (whole process groups), cancels
// discoveries, starts and calls in progress, and waits for all of it. A
// cancelled call's server is told so (notifications/cancelled) before its
// process is asked to exit. Every later call on the host or its chats
// returns ErrHostClosed. Close may be called more than once, also
// concurrently; every call returns once the first is done.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		<-h.closeDone
		return nil
	}
	h.closed = true
	chats := make([]*Chat, 0, len(h.chats))
	for _, c := range h.chats {
		chats = append(chats, c)
	}
	h.mu.Unlock()
	defer close(h.closeDone)
	h.cancel()
	// The calls end at once; the SDK writes their notifications/cancelled
	// in the background. Give those a moment to reach the servers before
	// stdin closes.
	deadline := time.Now().Add(cancelNotifyLimit)
	for _, c := range chats {
		c.settleCalls(deadline)
	}
	var wg sync.WaitGroup
	for _, c := range chats {
		wg.Go(func() { c.stopAll(stopHostClosed, true) })
	}
	wg.Wait()
	h.wg.Wait()
	if h.remoteHTTP != nil {
		h.remoteHTTP.CloseIdleConnections()
	}
	return nil
}

// cancelNotifyLimit bounds the wait, at shutdown, for the cancelled calls'
// notifications/cancelled to be written. Real time (see Clock).
const cancelNotifyLimit = stopGrace

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Tool is one tool as the agent sees it.
type Tool struct {
	// Name is the agent-visible name (SPEC §2.5).
	Name string
	// Server is the plan server that offers it; ServerTool the server's own
	// name for it, with which the server is called.
	Server     string
	ServerTool string
	// Def is the definition to show the agent: the server's, with Name set
	// to the visible name and every other string (title, description,
	// input and output schemas, annotations, _meta) redacted. Do not
	// modify it.
	Def *mcp.Tool
	// Remote marks a tool of one of the chat's remote servers (servers.json):
	// Server is then the remote server's name.
	Remote bool
	// srv is the stdio server the tool was discovered from: a call goes to
	// that one, and fails once a reload removed or replaced it.
	srv *hostServer
}

// ToolTable is the agent-visible tool list of the host at one moment. It
// is immutable once built; a new discovery result builds a new one.
type ToolTable struct {
	gen       uint64
	list      []*Tool
	byName    map[string]*Tool
	perServer map[string]int // registered tools per server
}

// currentTable returns the tool table now, without discovering.
func (h *Host) currentTable() *ToolTable {
	h.tableMu.RLock()
	defer h.tableMu.RUnlock()
	return h.table
}

// tools makes sure every enabled server's first discovery has finished
// (starting the ones that never ran and waiting for them) and that failed
// discoveries whose retry time has come are started again, in the
// background: the chat carries on with the tools it has. It returns the
// table then.
func (h *Host) tools(ctx context.Context) (*ToolTable, error) { return h.toolsFor(ctx, "") }

// toolsFor is tools for a call of the tool name: only the servers that
// may serve it (hostProfile.mayServe) are discovered; "" for all.
func (h *Host) toolsFor(ctx context.Context, name string) (*ToolTable, error) {
	if h.isClosed() {
		return nil, ErrHostClosed
	}
	var waits []chan struct{}
	for _, s := range h.servers() {
		if !s.cfg.Enabled || (name != "" && !h.prof.mayServe(s.cfg.Name, name)) {
			continue
		}
		if ch := s.ensure(); ch != nil {
			waits = append(waits, ch)
		}
	}
	for _, ch := range waits {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.ctx.Done():
			return nil, ErrHostClosed
		}
	}
	return h.currentTable(), nil
}

// rebuildTable names the tools of every server discovered so far, in plan
// order, and publishes the new table.
func (h *Host) rebuildTable() {
	h.rebuildMu.Lock()
	defer h.rebuildMu.Unlock()
	var enabled []*hostServer
	for _, s := range h.servers() {
		if s.cfg.Enabled {
			enabled = append(enabled, s)
		}
	}
	t := &ToolTable{byName: map[string]*Tool{}, perServer: map[string]int{}}
	for _, tool := range h.prof.assign(h, enabled) {
		t.list = append(t.list, tool)
		t.byName[tool.Name] = tool
		t.perServer[tool.Server]++
	}
	h.tableMu.Lock()
	t.gen = h.table.gen + 1
	h.table = t
	h.tableMu.Unlock()
	if hooks.TablePublished != nil {
		hooks.TablePublished()
	}
	if h.opts.OnToolsChanged != nil {
		h.opts.OnToolsChanged()
	}
	h.mu.Lock()
	listeners := append([]func(){}, h.listeners...)
	h.mu.Unlock()
	for _, f := range listeners {
		f()
	}
}

// addToolsListener adds f to the functions called after the tool list
// changed.
func (h *Host) addToolsListener(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.listeners = append(h.listeners, f)
}

// unservable says why a tool definition cannot be offered to an agent, ""
// when it can: MCP requires an input schema that is an object schema, and
// an agent could not call a tool without one.
func unservable(t *mcp.Tool) string {
	m, ok := t.InputSchema.(map[string]any)
	if !ok {
		return "its inputSchema is not a JSON object"
	}
	if m["type"] != "object" {
		return fmt.Sprintf("its inputSchema has type %v, MCP requires \"object\"", m["type"])
	}
	return ""
}

// discovery states of a hostServer.
const (
	discPending = "pending" // never ran
	discRunning = "running"
	discOK      = "ok"
	discFailed  = "failed"
)

// hostServer is one plan server at host level: its shared discovery.
type hostServer struct {
	h   *Host
	cfg *plan.Server
	// retired is set when a reload removed or replaced the server: its
	// chats' processes stop and no new one starts (reload.go).
	retired atomic.Bool
	// discover is shared by every process of the server (protocol.go).
	discover discoverMemo

	mu            sync.Mutex
	state         string
	first         bool          // the running discovery is the first one
	done          chan struct{} // closed when the running discovery ends
	tools         []*mcp.Tool
	serverName    string
	serverVersion string
	caps          *mcp.ServerCapabilities // from the last successful discovery
	instructions  string                  // the server's own, unredacted
	reason        string                  // of the last failure, redacted
	stderr        string                  // of the last discovery, redacted
	failedAt      time.Time               // on the host's clock
	count         int                     // discoveries started
}

// listed returns the server's tools as last listed.
func (s *hostServer) listed() []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// hookDiscovered, nil but in a test, runs in a discovery between its
// tools recorded and the table built with them.
var hookDiscovered func()

// ensure starts a discovery if none ran yet, or if the last one failed at
// least the retry interval ago. It returns a channel to wait on when the
// caller must wait: only for the first discovery, until its tools are in
// the table (its state says ok before then).
func (s *hostServer) ensure() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first && s.done != nil {
		select {
		case <-s.done:
		default:
			return s.done
		}
	}
	switch s.state {
	case "", discPending:
		s.start(true)
		return s.done
	case discRunning:
		if s.first {
			return s.done
		}
	case discFailed:
		if !s.h.clock.Now().Before(s.failedAt.Add(s.h.retry)) {
			s.start(false)
		}
	}
	return nil
}

// start runs one discovery in the background. s.mu is held.
func (s *hostServer) start(first bool) {
	s.startWith(first, make(chan struct{}))
}

// startWith runs one discovery in the background, closing done when it
// ends. s.mu is held.
func (s *hostServer) startWith(first bool, done chan struct{}) {
	s.state, s.first, s.done = discRunning, first, done
	s.count++
	h := s.h
	if h.prof.listsOnConnect() {
		s.connectShared(done)
		return
	}
	ok := h.track(func() {
		defer close(done)
		cfg := s.cfg
		target := Target{Server: cfg.Name, Spec: func(ws string) (LaunchSpec, error) {
			return Launch(cfg, ws, h.env), nil
		}, discover: &s.discover}
		d := Discover(h.ctx, []Target{target}, DiscoverOptions{Redact: h.Redact, Clock: h.clock,
			OnEscaped: func(_ string, pid int, command string, killed bool) { h.escaped("", cfg.Name, pid, command, killed) },
			Reap:      h.reap})[0]
		s.mu.Lock()
		s.stderr = d.Stderr
		if d.Err != nil {
			s.state, s.reason, s.failedAt = discFailed, d.Reason, h.clock.Now()
			s.mu.Unlock()
			if h.ctx.Err() == nil {
				h.log("Warning", "", cfg.Name, "MCP server %s failed: %s; it is retried after %s", cfg.Name, d.Reason, formatSeconds(h.retry))
			}
			return
		}
		s.state, s.reason, s.tools = discOK, "", d.Tools
		s.serverName, s.serverVersion = d.ServerName, d.ServerVersion
		s.caps, s.instructions = d.Capabilities, d.Instructions
		s.mu.Unlock()
		h.log("Information", "", cfg.Name, "MCP server %s: %d tools (%s %s)", cfg.Name, len(d.Tools), d.ServerName, d.ServerVersion)
		if hookDiscovered != nil {
			hookDiscovered()
		}
		h.rebuildTable()
	})
	if !ok {
		s.state, s.reason = discFailed, ErrHostClosed.Error()
		close(done)
	}
}

// connectShared discovers the server by connecting the shared chat to it
// (hostProfile.listsOnConnect): the connect lists its tools (connected).
// s.mu is held.
func (s *hostServer) connectShared(done chan struct{}) {
	h := s.h
	ok := h.track(func() {
		defer close(done)
		sl := h.shared.slotFor(s)
		if op := sl.begin(); op != nil {
			select {
			case <-op.done:
			case <-h.ctx.Done():
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.done == done && s.state == discRunning {
			// Nothing to connect: it runs already, or it is not served.
			if s.retired.Load() {
				s.state, s.reason, s.failedAt = discFailed, "removed by a reload", h.clock.Now()
			} else {
				s.state = discOK
			}
		}
	})
	if !ok {
		s.state, s.reason = discFailed, ErrHostClosed.Error()
		close(done)
	}
}

// connected records what a connect of the shared chat (session cs)
// listed (hostProfile.listsOnConnect): the server's tools, until its next
// connect. The tool table is built anew.
func (s *hostServer) connected(cs *mcp.ClientSession, tools []*mcp.Tool) {
	s.mu.Lock()
	s.state, s.reason, s.tools = discOK, "", tools
	if init := cs.InitializeResult(); init != nil {
		s.caps = init.Capabilities
		if init.ServerInfo != nil {
			s.serverName, s.serverVersion = init.ServerInfo.Name, init.ServerInfo.Version
		}
	}
	s.mu.Unlock()
	s.h.rebuildTable()
}

// connectFailed records a connect of the shared chat that failed: a
// listing starts it again once the retry interval has passed; the tools it
// listed before stay.
func (s *hostServer) connectFailed(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.reason, s.failedAt = discFailed, reason, s.h.clock.Now()
}

// adoptFirst makes a chat's early start (GatewayOptions.StartEarly) the
// server's first discovery when none ran or runs yet: the discovery counts
// as running, and the start ends it with adopted. It returns the
// discovery's channel (closed when it ends) if it did, else nil.
// The early start then lists the tools of the chat's process instead of a
// discovery starting a process of its own beside it (docs/decisions/
// 0030-chat-processes-and-start-early.md).
func (s *hostServer) adoptFirst() (done chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != "" && s.state != discPending {
		return nil
	}
	s.state, s.first, s.done = discRunning, true, make(chan struct{})
	s.count++
	return s.done
}

// adopted ends the first discovery that adoptFirst gave to an early start
// (done is what it returned): with what the chat's process listed, or,
// when d is nil (the start or its listing failed, or it did not start),
// with a discovery of the server's own, as if none had been adopted; its
// waiters wait for that one. A discovery started meanwhile by other means
// (a reload's) has taken over: done is only closed then. A server a
// reload retired meanwhile is not discovered again.
func (s *hostServer) adopted(done chan struct{}, d *Discovery, chat string) {
	h := s.h
	s.mu.Lock()
	if s.done != done || s.state != discRunning {
		s.mu.Unlock()
		close(done)
		return
	}
	if d == nil && s.retired.Load() {
		s.state, s.reason, s.failedAt = discFailed, "removed by a reload", h.clock.Now()
		s.mu.Unlock()
		close(done)
		return
	}
	if d == nil {
		s.count-- // the discovery that replaces it counts instead
		s.startWith(true, done)
		s.mu.Unlock()
		return
	}
	s.state, s.reason, s.tools, s.stderr = discOK, "", d.Tools, d.Stderr
	s.serverName, s.serverVersion = d.ServerName, d.ServerVersion
	s.caps, s.instructions = d.Capabilities, d.Instructions
	s.mu.Unlock()
	h.log("Information", "", s.cfg.Name, "MCP server %s: %d tools (%s %s), listed by the process chat %s started early", s.cfg.Name, len(d.Tools), d.ServerName, d.ServerVersion, chat)
	h.rebuildTable()
	close(done)
}

// serverStatus is a snapshot of the discovery, for Status.
func (s *hostServer) snapshot() DiscoveryStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	ds := DiscoveryStatus{Name: s.cfg.Name, Discoveries: s.count, ServerName: s.serverName, ServerVersion: s.serverVersion}
	switch {
	case !s.cfg.Enabled:
		ds.State = StateDisabled
	case s.state == discOK:
		ds.State = "ok"
	case s.state == discFailed:
		ds.State = "failed: " + s.reason
		ds.LastError = s.reason
		ds.RetryAt = s.failedAt.Add(s.h.retry)
	case s.state == discRunning:
		ds.State = "discovering"
		if !s.first {
			ds.State = "discovering (retry)"
			ds.LastError = s.reason
		}
	default:
		ds.State = "not discovered"
	}
	ds.Tools = s.h.currentTable().perServer[s.cfg.Name]
	if s.cfg.Enabled {
		ds.UnsetEnv = s.h.env.Unset(s.cfg)
	}
	return ds
}

// escaped logs and counts a process that a server started and that had
// left its process group: stopping the server killed it on its own
// (killed), or could not.
func (h *Host) escaped(chat, server string, pid int, command string, killed bool) {
	h.escapes.Add(1)
	if killed {
		h.log("Warning", chat, server, "MCP server %s: process %d (%s) had left the server's process group (setsid); it was killed on its own", server, pid, command)
		return
	}
	h.log("Error", chat, server, "MCP server %s: process %d (%s) had left the server's process group (setsid) and could not be killed; it still runs", server, pid, command)
}

// Status returns the discovery of every server and the state of every
// chat, chats sorted by id. Every text is redacted.
func (h *Host) Status() HostStatus {
	servers := h.servers()
	st := HostStatus{Servers: make([]DiscoveryStatus, 0, len(servers)), Chats: []ChatStatus{},
		EscapedProcesses: int(h.escapes.Load()), Processes: h.Processes()}
	for _, s := range servers {
		st.Servers = append(st.Servers, s.snapshot())
	}
	h.mu.Lock()
	chats := make([]*Chat, 0, len(h.chats))
	for _, c := range h.chats {
		chats = append(chats, c)
	}
	h.mu.Unlock()
	sort.Slice(chats, func(i, j int) bool { return chats[i].id < chats[j].id })
	for _, c := range chats {
		st.Chats = append(st.Chats, c.Status())
	}
	return st
}

// ServerNames returns the plan's server names in plan order.
func (h *Host) ServerNames() []string {
	servers := h.servers()
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.cfg.Name
	}
	return out
}

// commandLine renders a launch for status: the command and its arguments,
// quoted where needed, never an environment value.
func commandLine(spec LaunchSpec) string {
	parts := append([]string{spec.Command}, spec.Args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\n\"'\\$") {
			parts[i] = fmt.Sprintf("%q", p)
		}
	}
	return strings.Join(parts, " ")
}
