// Package clocktest is the tests' clock: a clock.Clock that moves only when
// a test advances it, so that a test checks a timeout, an expiry or a
// debounce by stepping past it once the work it cuts short is done, never
// by waiting for the machine.
//
// Only tests import it.
package clocktest

import (
	"sort"
	"sync"
	"time"

	"github.com/mcpc-dev/mcpc/internal/clock"
)

// Start is the time a new Fake shows.
var Start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Fake is a clock.Clock that moves only in Advance. Timers that come due
// run synchronously inside Advance, on the goroutine that advances it, in
// due order.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

type timer struct {
	c  *Fake
	at time.Time
	f  func()
}

// New returns a Fake at Start.
func New() *Fake { return &Fake{now: Start} }

// Now returns the fake's time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges for f to run in the Advance that reaches d from now.
func (c *Fake) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop removes the timer if it is pending.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the clock by d, runs every timer that came due (the
// timers pending when it moved: one that a callback arms runs in a later
// Advance), and returns how many ran.
func (c *Fake) Advance(d time.Duration) int {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due, keep []*timer
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			due = append(due, t)
		} else {
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
	return len(due)
}

// Pending returns the number of timers not yet due.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
