// Package clock is mcpc's one source of time for the durations it
// enforces (the runtime's timeouts and retries, the gateway's session
// expiry, the watcher's debounce): an interface that the wall clock and
// the tests' fake clock (internal/clocktest) implement, so that a test
// checks a duration by advancing a clock instead of waiting for it.
package clock

import "time"

// Clock is a source of time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once d has passed, like time.AfterFunc. A fake clock
	// may call f synchronously from the goroutine that advances it, so f
	// must not wait for that goroutine.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started, and reports whether it
	// did so.
	Stop() bool
}

// Real is the wall clock: time.Now and time.AfterFunc.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc returns time.AfterFunc(d, f).
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
