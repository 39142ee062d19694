package runtime

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mcpc-dev/mcpc/naming"
)

// A chat's first call usually comes while the host still discovers its
// servers (SPEC §4): the call cannot know which server owns its tool until
// the discoveries end. Waiting for them and only then starting the chat's
// process made a cold call pay for two server starts in a row (issue 13).
// When only one server can own the tool, the chat's process of that server
// is started at once, alongside its discovery; the call then uses it, as if
// it had started it itself. A guess that turns out wrong (the tool belongs
// to no server, or to a remote one) stops the process again, unused.

// StartDiscovery starts the first discovery of every enabled server that
// has not run yet, in the background, and returns at once: `mcpc run`
// calls it as it starts, so that a first listing or call waits for less.
// A server whose discovery ran already is left alone (a failed one is
// retried by the next listing, once its time has come).
func (h *Host) StartDiscovery() {
	if h.isClosed() {
		return
	}
	for _, s := range h.servers() {
		if s.cfg.Enabled {
			s.ensure()
		}
	}
}

// earlyStart is a chat process started for a call before the call knew its
// tool's server.
type earlyStart struct {
	s  *slot
	op *startOp
	// The slot as it was before, restored when the start failed and no call
	// claimed it: the start was only a guess.
	epoch                   uint64
	state, lastErr, stderrT string
	claimed                 atomic.Bool
}

type earlyKey struct{}

// startForSession starts the chat's process of the plan's only enabled
// server when a session initializes while that server's first discovery
// runs: `initialize` waits for the discovery (its instructions), and the
// chat's first call, which comes after it, would otherwise start the
// process only then. The chat's first call settles the guess (settleGuess):
// a call to another tool stops the process again, unused; without any
// call it stops when idle, as any process of the chat.
func (c *Chat) startForSession() {
	var only *slot
	for _, hs := range c.h.servers() {
		if !hs.cfg.Enabled {
			continue
		}
		if only != nil {
			return
		}
		only = c.slotFor(hs)
	}
	if only == nil || !only.srv.firstRunning() || c.guess.Load() != nil {
		return
	}
	if h := c.h; h.procs.max > 0 && h.Processes() >= h.procs.max {
		return
	}
	if e := only.beginEarly(); e != nil && !c.guess.CompareAndSwap(nil, e) {
		only.dropEarly(e)
	}
}

// dropGuess stops the process startForSession started, if no call used
// it: after a first call that never reached Chat.Call.
func (c *Chat) dropGuess() { _ = c.settleGuess(nil) }

// settleGuess settles the process startForSession started, if it is still
// open: used by a call of tool (nil: a call that found no tool), else
// stopped again if unused. It returns the start's error as claimEarly does.
func (c *Chat) settleGuess(tool *Tool) error {
	e := c.guess.Swap(nil)
	if e == nil {
		return nil
	}
	if tool != nil && !tool.Remote && e.s.srv.cfg.Name == tool.Server {
		return e.claim(tool)
	}
	e.s.dropEarly(e)
	return nil
}

// startEarly starts the chat's process for a call of tool name when name is
// not known yet and exactly one enabled server, whose first discovery has
// not ended, can own it. It returns ctx carrying the start, for claimEarly,
// and a function to call when the call is over: it stops the process again
// if no call to that server claimed it.
func (c *Chat) startEarly(ctx context.Context, name string) (context.Context, func()) {
	s := c.earlyOwner(name)
	if s == nil {
		return ctx, func() {}
	}
	e := s.beginEarly()
	if e == nil {
		return ctx, func() {}
	}
	return context.WithValue(ctx, earlyKey{}, e), func() {
		if !e.claimed.Load() {
			s.dropEarly(e)
		}
	}
}

// earlyOwner is the slot of the one server that can own tool name while
// discoveries still run, nil when the name is known already, when no server
// or several can own it, or when a start would meet the host's process
// limit.
func (c *Chat) earlyOwner(name string) *slot {
	h := c.h
	if name == "" || h.currentTable().byName[name] != nil || c.remote.find(name) != nil {
		return nil
	}
	builtins := h.opts.Builtins
	if builtins == nil {
		builtins = naming.DefaultBuiltins
	}
	if slices.Contains(builtins, name) {
		return nil
	}
	if h.procs.max > 0 && h.Processes() >= h.procs.max {
		return nil
	}
	var owner *slot
	for _, hs := range h.servers() {
		if !hs.cfg.Enabled || !hs.firstRunning() || !strings.HasPrefix(name, naming.Visible(hs.cfg.ToolPrefix, "")) {
			continue
		}
		if owner != nil {
			return nil
		}
		owner = c.slotFor(hs)
	}
	return owner
}

// firstRunning reports whether the server's first discovery has not ended
// (or not begun): its tools are not known.
func (s *hostServer) firstRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == "" || s.state == discPending || (s.state == discRunning && s.first)
}

// beginEarly starts the slot's process if none runs or starts; nil if one
// does (the call uses that one) or the slot is closed.
func (s *slot) beginEarly() *earlyStart {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.run != nil || s.pending != nil {
		return nil
	}
	e := &earlyStart{s: s, epoch: s.epoch, state: s.state, lastErr: s.lastErr, stderrT: s.stderr}
	e.op = s.startLocked()
	return e
}

// claimEarly tells the early start that ctx carries, if any, that the call
// is one to tool: when tool is of its server, the call uses its process.
// It returns the start's error when the start failed already and nothing
// changed the slot since, so that the call fails as if it had started the
// process itself instead of starting another one.
func claimEarly(ctx context.Context, tool *Tool) error {
	e, _ := ctx.Value(earlyKey{}).(*earlyStart)
	if e == nil || tool.Remote || e.s.srv.cfg.Name != tool.Server {
		return nil
	}
	return e.claim(tool)
}

// claim marks the early start as used by the call of tool, one of its
// server's, and returns the start's error as claimEarly does.
func (e *earlyStart) claim(tool *Tool) error {
	e.claimed.Store(true)
	select {
	case <-e.op.done:
	default:
		return nil // the call waits for it (slot.acquire)
	}
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.op.err == nil || s.epoch != e.epoch || s.run != nil || s.pending != nil {
		return nil
	}
	var ce *CallError
	if errors.As(e.op.err, &ce) {
		cp := *ce
		cp.Tool = tool.Name
		return &cp
	}
	return e.op.err
}

// dropEarly undoes an early start that no call claimed, in the background:
// once it is done, its process is stopped if it is still the slot's and
// unused, and a failed start leaves the slot as it was.
func (s *slot) dropEarly(e *earlyStart) {
	h := s.c.h
	h.track(func() {
		select {
		case <-e.op.done:
		case <-h.ctx.Done():
			return // Close stops everything
		}
		s.mu.Lock()
		if s.epoch != e.epoch || s.pending != nil {
			s.mu.Unlock()
			return
		}
		r := s.run
		if r == nil {
			if e.op.err != nil && s.state == StateFailed {
				s.state, s.lastErr, s.stderr = e.state, e.lastErr, e.stderrT
			}
			s.mu.Unlock()
			return
		}
		if r != e.op.run || s.inflight > 0 || s.waiting > 0 {
			s.mu.Unlock()
			return
		}
		s.run, s.state = nil, StateNotStarted
		if s.idle != nil {
			s.idle.Stop()
			s.idle = nil
		}
		s.mu.Unlock()
		h.log("Information", s.c.id, s.srv.cfg.Name, "MCP server %s stopped: %s", s.srv.cfg.Name, stopUnused)
		s.stopRun(r, stopUnused)
	})
}

// stopUnused is why an early start's process was stopped.
const stopUnused stopReason = "the call it was started for did not use it"
