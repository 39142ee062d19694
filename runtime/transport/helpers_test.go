package transport

import (
	goruntime "runtime"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// noLeaks registers a check, run after every other cleanup of the test,
// that the goroutines of the test are gone: a connection's reading
// goroutine must end with its input or its Close. The tests of this
// package start no processes (the runtime's tests cover those).
func noLeaks(t testing.TB) {
	t.Helper()
	base := goruntime.NumGoroutine()
	t.Cleanup(func() {
		// Goroutines of a finished test end on their own time: wait for
		// them, not for a guess at how long they take.
		if !testservers.Await(t, func() bool { return goruntime.NumGoroutine() <= base }) {
			buf := make([]byte, 1<<20)
			n := goruntime.Stack(buf, true)
			t.Errorf("goroutine leak: %d running, %d before the test\n%s", goruntime.NumGoroutine(), base, buf[:n])
		}
	})
}

// eventually waits until cond holds; the test fails if it never does.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testservers.WaitUntil(t, what, cond)
}
