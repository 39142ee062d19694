package runtime

import "github.com/mcpc-dev/mcpc/internal/clock"

// Clock is the runtime's source of time (internal/clock, named here so
// that an embedder can implement it). Every duration the runtime enforces
// as a rule of SPEC §4 is measured on it:
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
// Tests pass a clock they advance by hand (internal/clocktest), so that
// these rules are checked without waiting for them and without depending
// on the machine's speed.
//
// What is not on the Clock: the short fixed waits that only bound cleanup
// (the grace a process gets between stdin closing and SIGKILL, polling that
// a killed process group is gone, draining stderr). They are real time on
// purpose: they wait for the operating system, which a fake clock cannot
// make faster, and no rule of the specification depends on them.
type Clock = clock.Clock

// Timer is a pending Clock.AfterFunc call.
type Timer = clock.Timer

// RealClock is the wall clock: time.Now and time.AfterFunc.
type RealClock = clock.Real
