package supervisor

import (
	"sync"
	"time"
)

// Ledger counts, for one server process, the calls in flight and the
// notifications/cancelled still owed to it. The SDK writes the
// notification of a cancelled call in the background, after the call has
// returned; a shutdown that closed stdin at once would lose it, and the
// server would never hear that the call was cancelled. So mcpc, when
// it shuts down, cancels every call and waits (bounded) until each process
// has no call in flight and nothing owed before it stops the process.
//
// A call counts itself in flight (enter) before it is sent and out (leave)
// after it returned; a call that returned because it was cancelled owes a
// notification (owe) before it leaves; the connection pays (paid) when it
// has written one. The SDK may write the notification before the call has
// returned, so owed may be negative for a moment; it is never negative
// once no call is in flight.
type Ledger struct {
	mu      sync.Mutex
	calls   int
	owed    int
	changed chan struct{} // closed and replaced at every change
}

func NewLedger() *Ledger { return &Ledger{changed: make(chan struct{})} }

func (l *Ledger) update(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *Ledger) Enter() { l.update(func() { l.calls++ }) }
func (l *Ledger) Leave() { l.update(func() { l.calls-- }) }
func (l *Ledger) Owe()   { l.update(func() { l.owed++ }) }
func (l *Ledger) Paid()  { l.update(func() { l.owed-- }) }

// Settle waits until no call is in flight and no notification is owed, or
// until deadline (real time: it waits for the SDK and the pipe, not for a
// rule). It reports whether the ledger settled.
func (l *Ledger) Settle(deadline time.Time) bool {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		l.mu.Lock()
		done, ch := l.calls <= 0 && l.owed <= 0, l.changed
		l.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-t.C:
			return false
		}
	}
}
