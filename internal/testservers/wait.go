package testservers

import (
	"testing"
	"time"
)

// Patient is the timeout a test gives an operation that must succeed: a
// day, longer than any test binary may run (go test -timeout, 10 minutes
// by default). The operation's own end, never the machine's speed, then
// decides the outcome; a hang is reported by go test's timeout, with every
// goroutine's stack. Short timeouts are only for operations that must time
// out: against a server that never answers, they end the same way on any
// machine.
const Patient = 24 * time.Hour

// reportMargin is the time kept before the test binary's deadline to say
// what a test was still waiting for (and to run the cleanups).
const reportMargin = 20 * time.Second

// Await polls cond until it holds and reports true. It has no deadline of
// its own: only when the test binary's time (go test -timeout) is about to
// run out does it give up and report false, so that the caller can say
// what never happened.
func Await(t testing.TB, cond func() bool) bool {
	t.Helper()
	deadline, bounded := time.Time{}, false
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			deadline, bounded = d.Add(-reportMargin), true
		}
	}
	pause := time.Millisecond
	for !cond() {
		if bounded && time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
	return true
}

// WaitUntil is Await that ends the test, naming what, when cond never
// held.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Await(t, cond) {
		t.Fatalf("the test's time ran out waiting until %s", what)
	}
}

// Recv waits for a value from ch and returns it. Like Await it has no
// deadline of its own: it ends the test, naming what, only when the test
// binary's time is about to run out.
func Recv[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	var timeout <-chan time.Time
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok {
			timer := time.NewTimer(time.Until(d.Add(-reportMargin)))
			defer timer.Stop()
			timeout = timer.C
		}
	}
	select {
	case v := <-ch:
		return v
	case <-timeout:
		t.Fatalf("the test's time ran out waiting for %s", what)
	}
	var zero T
	return zero
}
