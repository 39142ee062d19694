package transport

import (
	"fmt"
	"sync"
	"time"
)

// DefaultInitGrace is SessionPoolOptions.InitGrace's default: how long a
// session may wait, after its initialize was answered, for the client's
// next request (notifications/initialized, normally at once).
const DefaultInitGrace = 10 * time.Second

// SessionPool caps and expires the sessions of one or more
// StreamableServers (a gateway's chats): at most Max in all and MaxPerChat
// per chat. At a cap, a new session takes the place of the one that waited
// longest: first a session whose client never went on after initialize,
// then the longest idle; a session with a request or a call in flight is
// never closed for a new one, so that when every session is busy the new
// one gets 503. A session whose client does not go on after initialize
// closes after InitGrace; any other after Idle without requests. A closed
// session's client gets 404, as for one that expired.
type SessionPool struct {
	opts SessionPoolOptions

	mu       sync.Mutex
	closed   bool
	sessions map[*streamSession]*pooled
	perChat  map[string]int
	use      uint64 // counts uses, to order sessions by their last
	logged   bool   // a cap was logged since a session last came without eviction
}

// A nil *SessionPool caps and expires nothing.

// SessionPoolOptions configure a SessionPool.
type SessionPoolOptions struct {
	// Max caps the sessions of all the pool's servers; 0: no cap.
	Max int
	// MaxPerChat caps the sessions of one chat; 0: no cap.
	MaxPerChat int
	// Idle closes a session no request used for that long; 0: never.
	Idle time.Duration
	// InitGrace closes a session whose client sent nothing after the
	// answer to its initialize for that long; 0: DefaultInitGrace.
	InitGrace time.Duration
	// AfterFunc runs f after d (the runtime's Clock); nil: time.AfterFunc.
	AfterFunc func(d time.Duration, f func()) Timer
	// Log, if set, is told of a session closed by the pool (level
	// "Information" or "Warning"). It is called without the pool's lock.
	Log func(level, chat, msg string)
}

// Timer is a pending AfterFunc call.
type Timer interface{ Stop() bool }

// pooled is the pool's record of one session; the pool's mu guards it.
type pooled struct {
	chat        string
	initialized bool   // a request came after its initialize
	requests    int    // HTTP requests in flight, open GET streams excepted
	calls       int    // calls not answered yet
	lastUse     uint64 // SessionPool.use when it was last used
	timer       Timer
	gen         uint64
}

// NewSessionPool returns a pool.
func NewSessionPool(opts SessionPoolOptions) *SessionPool {
	if opts.InitGrace <= 0 {
		opts.InitGrace = DefaultInitGrace
	}
	if opts.AfterFunc == nil {
		opts.AfterFunc = func(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
	}
	return &SessionPool{opts: opts, sessions: map[*streamSession]*pooled{}, perChat: map[string]int{}}
}

// Close stops the pool's timers; sessions admitted later are not capped.
func (p *SessionPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, e := range p.sessions {
		if e.timer != nil {
			e.timer.Stop()
			e.timer = nil
		}
	}
}

// Len returns the number of sessions in the pool.
func (p *SessionPool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}

// Quiet reports whether no session has a request or a call in flight.
func (p *SessionPool) Quiet() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.sessions {
		if e.requests > 0 || e.calls > 0 {
			return false
		}
	}
	return true
}

// admit takes s in, for chat, with its initialize request in flight. At a
// cap, it closes the session that waited longest; if every session is
// busy, it refuses s with the text for the client.
func (p *SessionPool) admit(s *streamSession, chat string) (refused string) {
	if p == nil {
		return ""
	}
	p.mu.Lock()
	var victim *streamSession
	var capText string
	switch {
	case p.opts.MaxPerChat > 0 && p.perChat[chat] >= p.opts.MaxPerChat:
		victim = p.victimLocked(chat, true)
		capText = fmt.Sprintf("chat %s has its maximum of %d MCP sessions open (--max-sessions-per-chat)", chat, p.opts.MaxPerChat)
	case p.opts.Max > 0 && len(p.sessions) >= p.opts.Max:
		victim = p.victimLocked("", false)
		capText = fmt.Sprintf("the gateway has its maximum of %d MCP sessions open (--max-sessions)", p.opts.Max)
	}
	if capText != "" && victim == nil {
		first := !p.logged
		p.logged = true
		p.mu.Unlock()
		msg := capText + " and every one has a request in flight: no new session until one is free"
		if first && p.opts.Log != nil {
			p.opts.Log("Warning", chat, msg+"; a new session is refused with 503")
		}
		return msg
	}
	first := false
	if victim != nil {
		p.dropLocked(victim)
		first = !p.logged
		p.logged = true
	} else {
		p.logged = false
	}
	p.use++
	p.sessions[s] = &pooled{chat: chat, requests: 1, lastUse: p.use}
	p.perChat[chat]++
	p.mu.Unlock()
	if victim != nil {
		victim.endSession()
		if first && p.opts.Log != nil {
			p.opts.Log("Warning", chat, capText+": a new session takes the place of the one that waited longest (one whose client never went on after initialize, else the longest idle); its client gets 404 and initializes again")
		}
	}
	return ""
}

// victimLocked is the session a new one replaces: among those of chat
// (any chat if !inChat) without a request or call in flight, one not
// initialized, else the longest idle; nil if every one is busy.
func (p *SessionPool) victimLocked(chat string, inChat bool) *streamSession {
	var best *streamSession
	var be *pooled
	for s, e := range p.sessions {
		if (inChat && e.chat != chat) || e.requests > 0 || e.calls > 0 {
			continue
		}
		if be == nil || (!e.initialized && be.initialized) || (e.initialized == be.initialized && e.lastUse < be.lastUse) {
			best, be = s, e
		}
	}
	return best
}

// dropLocked takes s out of the pool. p.mu is held.
func (p *SessionPool) dropLocked(s *streamSession) {
	e := p.sessions[s]
	if e == nil {
		return
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	delete(p.sessions, s)
	if p.perChat[e.chat]--; p.perChat[e.chat] <= 0 {
		delete(p.perChat, e.chat)
	}
}

// remove takes a session that ended out of the pool.
func (p *SessionPool) remove(s *streamSession) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.dropLocked(s)
	p.mu.Unlock()
}

// begin counts in a request of s (counted: not an open GET stream), which
// is its client going on after initialize.
func (p *SessionPool) begin(s *streamSession, counted bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.sessions[s]
	if e == nil {
		return
	}
	e.initialized = true
	p.use++
	e.lastUse = p.use
	if counted {
		e.requests++
		if e.timer != nil {
			e.timer.Stop()
			e.timer = nil
		}
	}
}

// end counts out a request of s that begin (or admit) counted.
func (p *SessionPool) end(s *streamSession) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.sessions[s]; e != nil {
		e.requests--
		p.armLocked(s, e)
	}
}

// callsChanged tells the pool of a call of s taken in (+1) or answered
// (-1): a call keeps its session from expiring, also after its client
// left the request.
func (p *SessionPool) callsChanged(s *streamSession, delta int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.sessions[s]; e != nil {
		e.calls += delta
		if delta < 0 {
			p.use++
			e.lastUse = p.use
			p.armLocked(s, e)
		} else if e.timer != nil {
			e.timer.Stop()
			e.timer = nil
		}
	}
}

// armLocked starts the wait after which an idle s closes: InitGrace
// until its client goes on after initialize, Idle after. p.mu is held.
func (p *SessionPool) armLocked(s *streamSession, e *pooled) {
	d := p.opts.Idle
	if !e.initialized {
		d = p.opts.InitGrace
	}
	if p.closed || d <= 0 || e.requests > 0 || e.calls > 0 {
		return
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	e.gen++
	gen := e.gen
	e.timer = p.opts.AfterFunc(d, func() { p.expire(s, gen, d) })
}

// expire closes s if it has been idle since the wait gen began.
func (p *SessionPool) expire(s *streamSession, gen uint64, d time.Duration) {
	p.mu.Lock()
	e := p.sessions[s]
	if p.closed || e == nil || e.gen != gen || e.requests > 0 || e.calls > 0 {
		p.mu.Unlock()
		return
	}
	p.dropLocked(s)
	initialized := e.initialized
	p.mu.Unlock()
	s.endSession()
	if p.opts.Log == nil {
		return
	}
	if initialized {
		p.opts.Log("Information", e.chat, fmt.Sprintf("an MCP session of chat %s closed after %s without requests", e.chat, FormatDuration(d)))
	} else {
		p.opts.Log("Information", e.chat, fmt.Sprintf("an MCP session of chat %s closed: its client sent nothing within %s of the answer to its initialize", e.chat, FormatDuration(d)))
	}
}

// FormatDuration writes a duration as an operator sets it: 30m, 2h, 10s.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", int64(d/time.Hour))
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", int64(d/time.Minute))
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}
