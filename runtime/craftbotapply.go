package runtime

import (
	"context"
	"reflect"
	"sort"
	"sync"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plandiff"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// Apply makes p (with config, where its ${config:KEY} values are read) the
// running plan, as a reload of mcp_config.json does (SPEC §5), acting on
// the plan diff (package plandiff):
//
//   - a removed or disabled server's actions are unregistered, and its
//     process or connection stopped, before Apply returns: a call to one
//     of them fails at once from then on, and a call in flight fails;
//   - a server whose launch changed (command, args, env, transport, url,
//     or a config value its env refers to) is stopped and its actions
//     unregistered; it connects anew, and its actions come back with its
//     new listing;
//   - a new or newly enabled server connects (auto_connect) or waits for
//     its first use;
//   - other changes take effect in place.
//
// Clients are told with notifications/tools/list_changed. With
// auto_connect, Apply waits (until ctx ends) for the connects it started,
// so that when it returns the new plan's actions are served. It returns
// what it did, as Host.Apply does; a plan the runtime cannot run is
// refused and the running plan kept.
func (c *Craftbot) Apply(ctx context.Context, p *plan.Plan, config ConfigLookup) (*ApplyResult, error) {
	if err := checkPlan(p, plan.ProfileCraftbot); err != nil {
		return nil, err
	}
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	if c.isClosed() {
		return nil, ErrHostClosed
	}
	c.mu.Lock()
	old, oldConfig := c.plan, c.config
	c.mu.Unlock()
	d, err := plandiff.Compare(old, p)
	if err != nil {
		return nil, err
	}
	// The new values are secrets before any process could print them.
	c.learnSecrets(configSecrets(p, config))
	newCfg := map[string]*plan.Server{}
	for i := range p.Servers {
		newCfg[p.Servers[i].Name] = &p.Servers[i]
	}

	// Servers that go: unregistered first, then stopped.
	var out []leaving
	restart := map[string]bool{}
	for _, ds := range d.Servers {
		switch ds.Effect {
		case plandiff.Disconnect:
			why := stopDisabled
			if ds.Change == plandiff.Removed {
				why = stopRemoved
			}
			if s := c.server(ds.Name); s != nil {
				s.retire(why)
				out = append(out, leaving{s, why})
			}
		case plandiff.Restart:
			restart[ds.Name] = true
		}
	}
	// A config value changed under an unchanged plan entry: the process
	// would start with another environment.
	for _, s := range c.serverList() {
		if n := newCfg[s.name()]; n != nil && n.Enabled && !restart[n.Name] && launchChanged(s.config(), n, c.env, oldConfig, config) {
			restart[n.Name] = true
		}
	}
	for name := range restart {
		if s := c.server(name); s != nil {
			s.retire(stopChanged)
			out = append(out, leaving{s, stopChanged})
		}
	}
	c.register()
	var wg sync.WaitGroup
	for _, l := range out {
		wg.Go(func() { l.s.stop(l.why, true) })
	}
	wg.Wait()

	// The new plan: servers in its order, each with its new entry.
	c.setPlan(p, config)
	servers := make([]*cbServer, 0, len(p.Servers))
	byName := make(map[string]*cbServer, len(p.Servers))
	var connect []*cbServer
	revived := map[string]bool{}
	c.mu.Lock()
	auto, existing := c.autoConnect, c.byName
	c.mu.Unlock()
	// Not under c.mu: a server's lock is taken before the runtime's (a
	// connect starts under the server's lock and is tracked by the runtime).
	for i := range p.Servers {
		cfg := &p.Servers[i]
		s := existing[cfg.Name]
		if s == nil {
			s = &cbServer{c: c, state: StateNotStarted}
		}
		if s.revive(cfg) {
			revived[cfg.Name] = true
			if auto {
				connect = append(connect, s)
			}
		}
		servers = append(servers, s)
		byName[cfg.Name] = s
	}
	c.mu.Lock()
	c.servers, c.byName = servers, byName
	c.mu.Unlock()
	c.register()
	res := applied(d, p, out, restart, revived, auto)
	if res.Changed() {
		c.log("Information", "", "plan reloaded: %s", res.summary())
	}
	for _, s := range connect {
		s.connectInBackground()
	}
	for _, s := range connect {
		if op := s.lastConnect(); op != nil {
			select {
			case <-op.done:
			case <-ctx.Done():
				return res, nil
			}
		}
	}
	return res, nil
}

// leaving is a server that Apply takes out of service, and why.
type leaving struct {
	s   *cbServer
	why stopReason
}

// applied is what a reload did to the servers: stopped (removed,
// disabled; sorted), restarted (changed, or a config value its env reads
// changed) and started (new, enabled; without auto_connect they start on
// first use), in plan order.
func applied(d *plandiff.Diff, p *plan.Plan, out []leaving, restart, revived map[string]bool, auto bool) *ApplyResult {
	res := &ApplyResult{Diff: d, OnFirstUse: !auto}
	for _, l := range out {
		if l.why != stopChanged {
			res.Stopped = append(res.Stopped, l.s.name())
		}
	}
	for _, s := range p.Servers {
		switch {
		case restart[s.Name]:
			res.Restarted = append(res.Restarted, s.Name)
		case revived[s.Name]:
			res.Started = append(res.Started, s.Name)
		}
	}
	sort.Strings(res.Stopped)
	return res
}

func (c *Craftbot) server(name string) *cbServer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byName[name]
}

func (s *cbServer) config() *plan.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// retire takes the server out of service: its actions are no longer
// offered and calls fail at once (stop ends the connection).
func (s *cbServer) retire(why stopReason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone, s.listed, s.tools = why, false, nil
}

// revive gives the server its entry of the new plan. A server retired by
// this Apply (disabled, changed) or new is served again when enabled, and
// reports true: it is to connect (with auto_connect). Others keep their
// connection.
func (s *cbServer) revive(cfg *plan.Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	fresh := s.cfg == nil || !s.cfg.Enabled || (s.gone != "" && s.gone != stopHostClosed)
	s.cfg = cfg
	if !cfg.Enabled {
		s.state = StateDisabled
		return false
	}
	if !fresh {
		return false
	}
	s.gone, s.tried, s.state, s.lastErr = "", false, StateNotStarted, ""
	return true
}

// launchChanged reports whether an enabled stdio server would start with
// another environment under the new config than under the old one, its
// plan entry alike.
func launchChanged(o, n *plan.Server, env HostEnv, oldConfig, newConfig ConfigLookup) bool {
	if o == nil || n.Transport != plan.TransportStdio || o.Transport != n.Transport {
		return false
	}
	lookup := func(l ConfigLookup) ConfigLookup {
		if l == nil {
			return func(string, string) (string, bool) { return "", false }
		}
		return l
	}
	a, errA := CraftbotLaunch(o, env, lookup(oldConfig))
	b, errB := CraftbotLaunch(n, env, lookup(newConfig))
	if (errA == nil) != (errB == nil) {
		return true
	}
	return !reflect.DeepEqual(a.Env, b.Env)
}

// CraftbotStatus is the runtime's state: GET /status and the status
// socket show it. Every text is redacted; no env value is in it.
type CraftbotStatus struct {
	Profile     string `json:"profile"`
	AutoConnect bool   `json:"autoConnect"`
	// Servers in plan order.
	Servers []CraftbotServerStatus `json:"servers"`
	// Actions counts the actions served.
	Actions int `json:"actions"`
	// EscapedProcesses counts the processes of servers found outside
	// their server's process group when it stopped (killed on their own).
	EscapedProcesses int `json:"escapedProcesses"`
}

// CraftbotServerStatus is one server.
type CraftbotServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// URL is an sse or websocket server's url without its query.
	URL string `json:"url,omitempty"`
	// State: "not started", "starting", "running", "exited",
	// "failed: <reason>" or "disabled".
	State     string `json:"state"`
	ActionSet string `json:"actionSet"`
	// Tools counts the server's actions served.
	Tools      int      `json:"tools"`
	LastError  string   `json:"lastError,omitempty"`
	Pid        int      `json:"pid,omitempty"`
	Starts     int      `json:"starts"`
	StderrTail []string `json:"stderrTail,omitempty"`
}

// Status returns the state of every server, redacted.
func (c *Craftbot) Status() CraftbotStatus {
	c.mu.Lock()
	st := CraftbotStatus{Profile: plan.ProfileCraftbot, AutoConnect: c.autoConnect, Servers: []CraftbotServerStatus{}}
	servers := append([]*cbServer(nil), c.servers...)
	c.mu.Unlock()
	perServer := map[*cbServer]int{}
	c.regMu.Lock()
	for _, a := range c.actions {
		perServer[a.server]++
	}
	st.Actions = len(c.actions)
	c.regMu.Unlock()
	for _, s := range servers {
		st.Servers = append(st.Servers, s.status(perServer[s]))
	}
	st.EscapedProcesses = int(c.escapes.Load())
	return st
}

func (s *cbServer) status(tools int) CraftbotServerStatus {
	c := s.c
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := s.cfg
	st := CraftbotServerStatus{Name: cfg.Name, Transport: cfg.Transport, ActionSet: cfg.ActionSet, Tools: tools,
		LastError: c.Redact(s.lastErr), Starts: s.starts}
	if st.ActionSet == "" {
		st.ActionSet = "mcp_" + cfg.Name
	}
	if cfg.URL != "" {
		st.URL = c.Redact(remote.URLWithoutQuery(cfg.URL))
	}
	tail := s.stderr
	switch {
	case !cfg.Enabled:
		st.State = StateDisabled
	case s.conn != nil:
		st.State = StateRunning
		if s.conn.p != nil {
			st.Pid = s.conn.p.pid()
			tail = c.Redact(s.conn.p.stderrTail())
		}
	case s.pending != nil:
		st.State = "starting"
	case s.state == StateFailed:
		st.State = "failed: " + trimPrefix(st.LastError, "MCP server "+cfg.Name+" failed to start: ")
	default:
		st.State = s.state
	}
	st.StderrTail = lastLines(tail, detailStderrLines, reasonLineWidth)
	return st
}

func trimPrefix(s, prefix string) string {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):]
	}
	return s
}
