package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plandiff"
)

// Reload: a running host takes a new plan (Host.Apply; `mcpc run --watch`).
//
// The host's servers are a serverSet that Apply replaces whole. What
// package plandiff says of each server decides what happens to it: a server
// whose change has no effect keeps running as it is; every other one that
// changed (restart, re-register, update), was removed or was disabled is
// retired, and a changed or enabled one gets a new hostServer, discovered
// anew. Fields that plandiff calls "update" or "reregister" are applied as
// a restart too: running calls read a server's plan entry without a lock,
// and a new entry for a new hostServer is the one change that is safe at
// every moment (docs/decisions/0029-reload.md).
//
// The order makes a removed server unreachable before Apply returns:
//  1. the retired servers are marked: from then on a chat makes no slot
//     for them and their slots start nothing (a call gets retiredError);
//  2. the new set and its tool table are published: a lookup no longer
//     finds their tools, and every gateway's clients are told
//     (notifications/tools/list_changed);
//  3. every chat's processes of the retired servers stop (their calls in
//     flight end with "stopped …", and why: removed, disabled or changed);
//  4. the new and changed servers' discoveries start in the background;
//     each that ends rebuilds the table and tells the clients again.

// serverSet is the plan's servers at one moment, in plan order, disabled
// ones too. It is never modified once published.
type serverSet struct {
	list   []*hostServer
	byName map[string]*hostServer
}

func (s *serverSet) add(hs *hostServer) {
	s.list = append(s.list, hs)
	s.byName[hs.cfg.Name] = hs
}

// servers returns the plan's servers now, in plan order.
func (h *Host) servers() []*hostServer { return h.set.Load().list }

// server returns the plan's server name now, nil if there is none.
func (h *Host) server(name string) *hostServer { return h.set.Load().byName[name] }

// checkPlan refuses a plan that the runtime of profile cannot run, at its
// start and at a reload, for both profiles: no plan, another profile's
// plan (a hand-made plan without a profile is a volcanic one), another
// planVersion, a transport the profile does not run, a name defined twice.
func checkPlan(p *plan.Plan, profile string) error {
	if p == nil {
		return errors.New("runtime: no plan")
	}
	if p.Profile != profile && (profile != plan.ProfileVolcanic || p.Profile != "") {
		return fmt.Errorf("runtime: a %s plan is not a %s plan", p.Profile, profile)
	}
	if p.PlanVersion != plan.Version {
		return fmt.Errorf("runtime: planVersion %d: this mcpc runs planVersion %d", p.PlanVersion, plan.Version)
	}
	seen := map[string]bool{}
	for i := range p.Servers {
		s := &p.Servers[i]
		switch {
		case profile == plan.ProfileVolcanic && s.Transport != "" && s.Transport != "stdio":
			return fmt.Errorf("runtime: server %q: transport %q is not run by this runtime (stdio only)", s.Name, s.Transport)
		case profile == plan.ProfileCraftbot && s.Transport != plan.TransportStdio && s.Transport != plan.TransportSSE && s.Transport != plan.TransportWebsocket:
			return fmt.Errorf("runtime: server %q: unknown transport %q", s.Name, s.Transport)
		case seen[s.Name]:
			return fmt.Errorf("runtime: server %q is defined twice in the plan", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// ApplyResult says what a reload did, of either profile (Host.Apply,
// Craftbot.Apply).
type ApplyResult struct {
	// Diff is the comparison of the running plan with the new one.
	Diff *plandiff.Diff
	// Stopped are the servers removed or disabled; Restarted those whose
	// change replaced them (discovered or connected anew); Started those
	// added or enabled.
	Stopped, Restarted, Started []string
	// OnFirstUse: the Started servers start on their first use, not now
	// (a craftbot plan without auto_connect).
	OnFirstUse bool
}

// Changed reports whether the reload changed anything that runs.
func (r *ApplyResult) Changed() bool {
	return len(r.Stopped)+len(r.Restarted)+len(r.Started) > 0
}

// Apply makes p the host's plan while it runs (see the top of reload.go):
// removed and disabled servers stop and lose their tools before Apply
// returns, changed ones restart, new ones are discovered in the
// background, and gateways tell their clients the tool list changed. A
// plan the host cannot take (another profile or planVersion, a transport
// other than stdio, a server whose ${env:…} values the host does not know
// as secrets yet) is refused with an error, and the running plan stays.
// Reloads run one at a time.
func (h *Host) Apply(ctx context.Context, p *plan.Plan) (*ApplyResult, error) {
	return h.apply(ctx, p, nil)
}

// apply is Apply with config, where a craftbot plan's values are read. The
// profile checks (or learns) the new plan's secrets and names the servers
// a changed config value restarts (hostProfile.reloading); it says
// whether new servers start now or on their first use, and whether Apply
// waits for them (hostProfile.startsOnApply).
func (h *Host) apply(ctx context.Context, p *plan.Plan, config ConfigLookup) (*ApplyResult, error) {
	if err := checkPlan(p, h.prof.name()); err != nil {
		return nil, err
	}
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if h.isClosed() {
		return nil, ErrHostClosed
	}
	d, err := plandiff.Compare(h.plan, p)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	restart, err := h.prof.reloading(h, p, config)
	if err != nil {
		return nil, err
	}
	start, wait := h.prof.startsOnApply()
	res, replace := applying(d, p, restart)
	res.OnFirstUse = !start
	old := h.set.Load()
	next := &serverSet{byName: map[string]*hostServer{}}
	var fresh []*hostServer
	for i := range p.Servers {
		cfg := &p.Servers[i]
		if hs := old.byName[cfg.Name]; hs != nil && !replace[cfg.Name] {
			next.add(hs) // unchanged, or changed without effect: it runs on
			continue
		}
		hs := &hostServer{h: h, cfg: cfg}
		next.add(hs)
		fresh = append(fresh, hs)
		h.warnUnsetEnv(cfg)
	}
	var retired []*hostServer
	for _, hs := range old.list {
		if next.byName[hs.cfg.Name] != hs {
			hs.retired.Store(true)
			retired = append(retired, hs)
		}
	}
	h.plan = p
	h.set.Store(next)
	h.rebuildTable()
	h.stopRetired(retired, next)
	var waits []chan struct{}
	for _, hs := range fresh {
		if hs.cfg.Enabled && start {
			// ensure: a chat's early start may have taken the first
			// discovery since the set was published (hostServer.adoptFirst).
			if ch := hs.ensure(); ch != nil && wait {
				waits = append(waits, ch)
			}
		}
	}
	if res.Changed() {
		h.log("Information", "", "", "plan reloaded: %s", res.summary())
	}
	for _, ch := range waits {
		select {
		case <-ch:
		case <-ctx.Done():
			return res, nil
		}
	}
	return res, nil
}

// applying is what a reload of p does, by the diff d and the servers the
// profile restarts: the servers it replaces (by name), and the result.
func applying(d *plandiff.Diff, p *plan.Plan, restart map[string]bool) (*ApplyResult, map[string]bool) {
	res := &ApplyResult{Diff: d}
	replace := map[string]bool{}
	for _, s := range d.Servers {
		if s.Effect == plandiff.None {
			continue
		}
		replace[s.Name] = true
		switch {
		case s.Effect == plandiff.Disconnect:
			res.Stopped = append(res.Stopped, s.Name)
		case s.Effect == plandiff.Connect:
			res.Started = append(res.Started, s.Name)
		default:
			res.Restarted = append(res.Restarted, s.Name)
		}
	}
	for i := range p.Servers {
		if name := p.Servers[i].Name; restart[name] && !replace[name] {
			replace[name] = true
			res.Restarted = append(res.Restarted, name)
		}
	}
	return res, replace
}

// summary is the one log line of a reload: "stopped a, b; restarted c;
// started d".
func (r *ApplyResult) summary() string {
	started := "started"
	if r.OnFirstUse {
		started = "to start on first use"
	}
	var parts []string
	for _, g := range []struct {
		what  string
		names []string
	}{{"stopped", r.Stopped}, {"restarted", r.Restarted}, {started, r.Started}} {
		if len(g.names) > 0 {
			parts = append(parts, g.what+" "+strings.Join(g.names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// checkSecrets refuses a plan whose servers would launch with a secret
// value (an ${env:…} resolution) that the host does not redact yet: the
// host's redactor is fixed when it starts (and copied into every chat), so
// such a value could leak into output. A restart of mcpc run takes it.
func (h *Host) checkSecrets(p *plan.Plan) error {
	known := map[string]bool{}
	for _, f := range h.knownForms() {
		known[f] = true
	}
	var missing []string
	for i := range p.Servers {
		s := &p.Servers[i]
		for _, v := range s.Env {
			if v == nil {
				continue
			}
			for _, name := range plan.EnvRefs(*v) {
				for _, f := range secretForms(h.env.Vars[name]) {
					if !known[f] {
						missing = append(missing, fmt.Sprintf("%s (${env:%s})", s.Name, name))
						break
					}
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	missing = compactStrings(missing)
	return fmt.Errorf("runtime: the new plan is not applied: %s read host variables that the running gateway does not redact (it learns secret values when it starts); restart mcpc run to take the new plan",
		strings.Join(missing, ", "))
}

// compactStrings drops adjacent repeats from a sorted list.
func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// retiredWhy is why a reload retired hs, next being the new servers.
func retiredWhy(hs *hostServer, next *serverSet) StopReason {
	switch n := next.byName[hs.cfg.Name]; {
	case n == nil:
		return stopRemoved
	case !n.cfg.Enabled:
		return stopDisabled
	}
	return stopChanged
}

// stopRetired stops every chat's processes of the retired servers, all at
// once, and forgets their slots; next are the new servers.
func (h *Host) stopRetired(retired []*hostServer, next *serverSet) {
	if len(retired) == 0 {
		return
	}
	h.mu.Lock()
	chats := make([]*Chat, 0, len(h.chats))
	for _, c := range h.chats {
		chats = append(chats, c)
	}
	h.mu.Unlock()
	var slots []*slot
	for _, c := range chats {
		c.slotMu.Lock()
		for _, hs := range retired {
			if s := c.slotBy[hs]; s != nil {
				slots = append(slots, s)
			}
		}
		c.slotMu.Unlock()
	}
	for _, hs := range retired {
		if n := h.runningOf(slots, hs); n > 0 {
			h.log("Information", "", hs.cfg.Name, "MCP server %s: %d chat process(es) stop: %s", hs.cfg.Name, n, retiredWhy(hs, next))
		}
	}
	stop := func() {
		var wg sync.WaitGroup
		for _, s := range slots {
			wg.Go(func() { s.stop(retiredWhy(s.srv, next), true) })
		}
		wg.Wait()
	}
	// As work Host.Close waits for; once it closes, Close stops them too
	// (they are still in their chats' tables), and so does this.
	ran := false
	h.do(func() { ran = true; stop() })
	if !ran {
		stop()
	}
	// Forgotten only once stopped: a Close meanwhile saw them.
	for _, c := range chats {
		c.slotMu.Lock()
		for _, hs := range retired {
			delete(c.slotBy, hs)
		}
		c.slotMu.Unlock()
	}
}

// runningOf counts the slots of hs that run or start a process.
func (h *Host) runningOf(slots []*slot, hs *hostServer) int {
	n := 0
	for _, s := range slots {
		if s.srv != hs {
			continue
		}
		s.mu.Lock()
		if s.run != nil || s.pending != nil {
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// retiredError is the error of a call that reached a server a reload
// removed or replaced after the call found its tool.
func retiredError(hs *hostServer, tool *Tool) error { return noLongerServed(hs.cfg.Name, tool.Name) }

// noLongerServed is the error of a call of tool, of either profile, that
// reached server after a reload removed, disabled or replaced it: the tool
// is unknown now (a protocol error for the client, which was told the
// list changed).
func noLongerServed(server, tool string) error {
	return &CallError{Kind: CallUnknownTool, Server: server, Tool: tool,
		Message: fmt.Sprintf("tool %s is no longer served: MCP server %s was removed, disabled or changed by a reload of the plan", tool, server)}
}

// slotFor returns the chat's slot of hs, made on first use. A retired
// server, or a closed chat, gets a closed slot that is not kept: it starts
// nothing, and its calls fail at once.
func (c *Chat) slotFor(hs *hostServer) *slot {
	c.slotMu.Lock()
	defer c.slotMu.Unlock()
	if s := c.slotBy[hs]; s != nil {
		return s
	}
	s := &slot{c: c, srv: hs, state: StateNotStarted}
	if c.slotsClosed || hs.retired.Load() {
		s.closed = true
		return s
	}
	c.slotBy[hs] = s
	return s
}

// goneSlot is the closed slot of a server that is not in the plan (any
// more): it answers like a retired server's.
func (c *Chat) goneSlot(server string) *slot {
	hs := &hostServer{h: c.h, cfg: &plan.Server{Name: server}}
	hs.retired.Store(true)
	return &slot{c: c, srv: hs, state: StateNotStarted, closed: true}
}

// slotList returns the chat's slots of the plan's servers now, in plan
// order.
func (c *Chat) slotList() []*slot {
	servers := c.h.servers()
	out := make([]*slot, len(servers))
	for i, hs := range servers {
		out[i] = c.slotFor(hs)
	}
	return out
}

// allSlots returns every slot the chat has made; final also closes the
// chat's slot table, so that no slot is made after this last look.
func (c *Chat) allSlots(final bool) []*slot {
	c.slotMu.Lock()
	defer c.slotMu.Unlock()
	if final {
		c.slotsClosed = true
	}
	out := make([]*slot, 0, len(c.slotBy))
	for _, s := range c.slotBy {
		out = append(out, s)
	}
	return out
}
