package transport

import (
	"fmt"
	"sync"
	"time"

	"github.com/mcpc-dev/mcpc/internal/clock"
)

// DefaultInitGrace is SessionPoolOptions.InitGrace's default: how long a
// session may wait, after its initialize was answered, for the client's
// next request (notifications/initialized, normally at once).
const DefaultInitGrace = 10 * time.Second

// CodeLimit is the JSON-RPC error code of an initialize refused because of
// a limit (implementation-defined server error range).
const CodeLimit = -32000

// SessionPool caps and expires the MCP sessions served over Streamable
// HTTP by one or more servers (a gateway's chats): at most Max in all and
// MaxPerChat per chat. At a cap, a new session takes the place of the one
// that waited longest: first a session whose client never went on after
// initialize, then the longest idle; a session with a request or a call in
// flight is never closed for a new one, so that when every session is busy
// the new one gets 503. A session whose client does not go on after
// initialize closes after InitGrace; any other after Idle without
// requests. A closed session's client gets 404, as for one that expired.
//
// The pool does not serve the sessions: the HTTP front of the endpoint
// tells it of each session (Admit, Bind, Attach, Remove), of each request
// (Begin) and of each call in flight (Call), and it closes a session
// through the function Attach gave it.
type SessionPool struct {
	opts SessionPoolOptions

	mu       sync.Mutex
	closed   bool
	sessions map[*PoolSession]bool
	byID     map[string]*PoolSession
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
	// Clock measures Idle and InitGrace (the runtime's Clock); nil:
	// clock.Real.
	Clock clock.Clock
	// Log, if set, is told of a session closed by the pool (level
	// "Information" or "Warning"). It is called without the pool's lock.
	Log func(level, chat, msg string)
}

// PoolSession is the pool's record of one session; the pool's mu guards
// it.
type PoolSession struct {
	chat        string
	owner       any    // the endpoint that serves it
	id          string // "" until Bind
	close       func() // ends the session; nil until Attach
	initialized bool   // a request came after its initialize
	requests    int    // HTTP requests in flight, open GET streams excepted
	calls       int    // calls not answered yet
	lastUse     uint64 // SessionPool.use when it was last used
	timer       clock.Timer
	gen         uint64
}

// NewSessionPool returns a pool.
func NewSessionPool(opts SessionPoolOptions) *SessionPool {
	if opts.InitGrace <= 0 {
		opts.InitGrace = DefaultInitGrace
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	return &SessionPool{opts: opts, sessions: map[*PoolSession]bool{}, byID: map[string]*PoolSession{}, perChat: map[string]int{}}
}

// Close stops the pool's timers; sessions admitted later are not expired.
func (p *SessionPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for e := range p.sessions {
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

// Count returns the number of sessions that owner serves.
func (p *SessionPool) Count(owner any) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for e := range p.sessions {
		if e.owner == owner {
			n++
		}
	}
	return n
}

// Quiet reports whether no session has a request or a call in flight.
func (p *SessionPool) Quiet() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for e := range p.sessions {
		if e.requests > 0 || e.calls > 0 {
			return false
		}
	}
	return true
}

// Admit takes a new session in, for chat, served by owner, with its
// initialize request in flight (counted in; End counts it out). At a cap,
// it closes the session that waited longest; if every session is busy, it
// refuses the new one with the text for the client.
func (p *SessionPool) Admit(chat string, owner any) (e *PoolSession, refused string) {
	p.mu.Lock()
	var victim *PoolSession
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
		return nil, msg
	}
	first := false
	var closeVictim func()
	if victim != nil {
		closeVictim = victim.close
		p.dropLocked(victim)
		first = !p.logged
		p.logged = true
	} else {
		p.logged = false
	}
	p.use++
	e = &PoolSession{chat: chat, owner: owner, requests: 1, lastUse: p.use}
	p.sessions[e] = true
	p.perChat[chat]++
	p.mu.Unlock()
	if victim != nil {
		closeVictim()
		if first && p.opts.Log != nil {
			p.opts.Log("Warning", chat, capText+": a new session takes the place of the one that waited longest (one whose client never went on after initialize, else the longest idle); its client gets 404 and initializes again")
		}
	}
	return e, ""
}

// victimLocked is the session a new one replaces: among those of chat
// (any chat if !inChat) that can be closed and have no request or call in
// flight, one not initialized, else the longest idle; nil if every one is
// busy.
func (p *SessionPool) victimLocked(chat string, inChat bool) *PoolSession {
	var best *PoolSession
	for e := range p.sessions {
		if (inChat && e.chat != chat) || e.requests > 0 || e.calls > 0 || e.close == nil {
			continue
		}
		if best == nil || (!e.initialized && best.initialized) || (e.initialized == best.initialized && e.lastUse < best.lastUse) {
			best = e
		}
	}
	return best
}

// Bind gives e the session id the server chose, as soon as the answer to
// its initialize names it: the client's next request may come before the
// initialize's request ends.
func (p *SessionPool) Bind(e *PoolSession, id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions[e] && e.id == "" && id != "" {
		e.id = id
		p.byID[id] = e
	}
}

// Attach gives e the function that ends its session, once its initialize
// succeeded; from then on the pool may close it. It reports false if e
// left the pool meanwhile.
func (p *SessionPool) Attach(e *PoolSession, close func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.sessions[e] {
		return false
	}
	e.close = close
	return true
}

// dropLocked takes e out of the pool. p.mu is held.
func (p *SessionPool) dropLocked(e *PoolSession) {
	if !p.sessions[e] {
		return
	}
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	delete(p.sessions, e)
	if e.id != "" && p.byID[e.id] == e {
		delete(p.byID, e.id)
	}
	if p.perChat[e.chat]--; p.perChat[e.chat] <= 0 {
		delete(p.perChat, e.chat)
	}
}

// Remove takes a session that ended (or never began) out of the pool. It
// may be called more than once.
func (p *SessionPool) Remove(e *PoolSession) {
	if p == nil || e == nil {
		return
	}
	p.mu.Lock()
	p.dropLocked(e)
	p.mu.Unlock()
}

// RemoveID is Remove for the session of id.
func (p *SessionPool) RemoveID(id string) {
	p.mu.Lock()
	if e := p.byID[id]; e != nil {
		p.dropLocked(e)
	}
	p.mu.Unlock()
}

// Has reports whether id is a session that owner serves.
func (p *SessionPool) Has(id string, owner any) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.byID[id]
	return e != nil && e.owner == owner
}

// Begin counts in a request of the session id (counted: not an open GET
// stream), which is its client going on after initialize, and returns
// the function that counts it out. A session the pool does not know
// (ended, or never) counts nothing: the server answers 404.
func (p *SessionPool) Begin(id string, counted bool) (end func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.byID[id]
	if e == nil {
		return func() {}
	}
	e.initialized = true
	if !counted {
		// An open GET stream is not a use: the client's SDK opens it on
		// its own after initialize, at no moment the client chose, so it
		// would reorder which session waited longest.
		return func() {}
	}
	p.use++
	e.lastUse = p.use
	e.requests++
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	return func() { p.End(e) }
}

// End counts out a request of e that Begin (or Admit) counted.
func (p *SessionPool) End(e *PoolSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions[e] {
		e.requests--
		p.armLocked(e)
	}
}

// Call counts in a call of the session id that the server handles, and
// returns the function that counts it out: a call keeps its session from
// expiring and from being closed for a new one, also after its client
// left the request.
func (p *SessionPool) Call(id string) (done func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.byID[id]
	if e == nil {
		return func() {}
	}
	e.calls++
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.sessions[e] {
			e.calls--
			p.use++
			e.lastUse = p.use
			p.armLocked(e)
		}
	}
}

// armLocked starts the wait after which an idle e closes: InitGrace
// until its client goes on after initialize, Idle after. p.mu is held.
func (p *SessionPool) armLocked(e *PoolSession) {
	d := p.opts.Idle
	if !e.initialized {
		d = p.opts.InitGrace
	}
	if p.closed || d <= 0 || e.requests > 0 || e.calls > 0 || e.close == nil {
		return
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	e.gen++
	gen := e.gen
	e.timer = p.opts.Clock.AfterFunc(d, func() { p.expire(e, gen, d) })
}

// expire closes e if it has been idle since the wait gen began.
func (p *SessionPool) expire(e *PoolSession, gen uint64, d time.Duration) {
	p.mu.Lock()
	if p.closed || !p.sessions[e] || e.gen != gen || e.requests > 0 || e.calls > 0 {
		p.mu.Unlock()
		return
	}
	p.dropLocked(e)
	initialized, closeSession := e.initialized, e.close
	p.mu.Unlock()
	closeSession()
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
