package cli

import (
	"testing"
	"time"
)

// A host that closed by the time the grace ended is a clean stop, even
// when mcpc looks only after the grace (the HTTP server's shutdown may
// take all of it): mcpc must not report a grace that passed, and exit 3,
// for servers that are gone.
func TestShutdownWaitAfterTheGraceSeesTheHostClosed(t *testing.T) {
	for range 200 {
		sd := &shutdown{grace: time.Millisecond, done: make(chan struct{})}
		sd.start()
		sd.at = sd.at.Add(-time.Second) // the grace is over
		close(sd.done)
		if !sd.wait() {
			t.Fatal("wait reported the grace passed although the host had closed")
		}
	}
	sd := &shutdown{grace: time.Millisecond, done: make(chan struct{})}
	sd.start()
	sd.at = sd.at.Add(-time.Second)
	if sd.wait() {
		t.Fatal("wait reported a clean stop for a host that is still closing")
	}
}
