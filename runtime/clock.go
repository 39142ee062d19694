package runtime

import "time"

// Clock is the runtime's source of time. Every duration the runtime
// enforces as a rule of SPEC §4 is measured on it:
//
//   - the 60 s after which a failed discovery is tried again,
//   - idleTimeoutSeconds, after which a chat's idle process stops,
//   - callTimeoutSeconds, after which a call is cancelled,
//   - startupTimeoutSeconds, within which a process must answer,
//   - a gateway's ChatIdleTimeout and SessionIdleTimeout, and the grace a
//     session gets after its initialize (transport.DefaultInitGrace; the
//     Craftbot's clock for its sessions),
//   - the 1, 2, 4 … 15 minutes after which an unreachable remote server is
//     tried again (RemoteServers).
//
// Tests pass a clock they advance by hand, so that these rules are checked
// without waiting for them and without depending on the machine's speed.
//
// What is not on the Clock: the short fixed waits that only bound cleanup
// (the grace a process gets between stdin closing and SIGKILL, polling that
// a killed process group is gone, draining stderr). They are real time on
// purpose: they wait for the operating system, which a fake clock cannot
// make faster, and no rule of the specification depends on them.
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

// RealClock is the wall clock: time.Now and time.AfterFunc.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc returns time.AfterFunc(d, f).
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
