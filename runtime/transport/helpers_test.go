package transport

import (
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// noLeaks is the tests' one leak check (testservers.NoLeaks): a
// connection's reading goroutine must end with its input or its Close.
func noLeaks(t testing.TB) { testservers.NoLeaks(t) }

// eventually waits until cond holds; the test fails if it never does.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testservers.WaitUntil(t, what, cond)
}
