package clocktest

import (
	"slices"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/internal/clock"
	"github.com/mcpc-dev/mcpc/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Run(m) }

var _ clock.Clock = (*Fake)(nil)

// Advance runs the timers it reaches, in due order, and no other; Now
// moves by what was advanced only.
func TestAdvanceRunsDueTimersInOrder(t *testing.T) {
	c := New()
	var ran []string
	c.AfterFunc(3*time.Second, func() { ran = append(ran, "3s") })
	c.AfterFunc(time.Second, func() { ran = append(ran, "1s") })
	c.AfterFunc(2*time.Second, func() { ran = append(ran, "2s") })
	c.AfterFunc(time.Minute, func() { ran = append(ran, "1m") })
	if n := c.Advance(3 * time.Second); n != 3 || !slices.Equal(ran, []string{"1s", "2s", "3s"}) {
		t.Fatalf("Advance ran %d: %v, want [1s 2s 3s]", n, ran)
	}
	if got := c.Now(); !got.Equal(Start.Add(3 * time.Second)) {
		t.Fatalf("Now %v, want Start+3s", got)
	}
	if n := c.Pending(); n != 1 {
		t.Fatalf("%d pending, want 1 (the minute)", n)
	}
	if n := c.Advance(time.Minute); n != 1 || ran[3] != "1m" {
		t.Fatalf("Advance ran %d: %v", n, ran)
	}
}

// A stopped timer never runs, and Stop says whether it stopped one.
func TestStop(t *testing.T) {
	c := New()
	ran := false
	tm := c.AfterFunc(time.Second, func() { ran = true })
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer returned false")
	}
	if tm.Stop() {
		t.Fatal("Stop of a stopped timer returned true")
	}
	if n := c.Advance(time.Hour); n != 0 || ran {
		t.Fatalf("a stopped timer ran (%d ran)", n)
	}
	fired := c.AfterFunc(0, func() {})
	c.Advance(0)
	if fired.Stop() {
		t.Fatal("Stop of a timer that ran returned true")
	}
}

// A timer that a callback arms waits for the next Advance, even when it
// is due at once: a callback that arms itself again cannot loop.
func TestTimerArmedByACallbackRunsInTheNextAdvance(t *testing.T) {
	c := New()
	runs := 0
	var again func()
	again = func() { runs++; c.AfterFunc(0, again) }
	c.AfterFunc(0, again)
	if n := c.Advance(0); n != 1 || runs != 1 || c.Pending() != 1 {
		t.Fatalf("Advance ran %d (%d runs), %d pending; want 1, 1, 1", n, runs, c.Pending())
	}
	if n := c.Advance(0); n != 1 || runs != 2 {
		t.Fatalf("second Advance ran %d (%d runs); want 1, 2", n, runs)
	}
}
