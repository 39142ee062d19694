package testservers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
)

// LeakMarkerVar is put in the environment of every process a test that
// calls NoLeaks starts (as LeakMarkerVar=marker), so that leftovers are
// found whatever their parent or process group.
const LeakMarkerVar = "MCPC_TEST_LEAK_MARKER"

// LeakLabel is the pprof label that marks the goroutines of a test that
// called NoLeaks: its value is the test's marker.
const LeakLabel = "mcpc-test-leak"

// NoLeaks is the leak check of mcpc's tests. It returns a fresh marker
// value and registers a check, run after every other cleanup registered
// after it, that no process carrying the marker in its environment
// (LeakMarkerVar) still runs and that the goroutines of the test are gone.
//
// The goroutines of the test are told apart by a pprof label, not by
// counting runtime.NumGoroutine: tests run in parallel (t.Parallel), and
// the number of goroutines of the whole binary then says nothing about
// one test. NoLeaks labels the calling goroutine (the test's) with
// LeakLabel=marker; a goroutine inherits the labels of the goroutine that
// starts it, so every goroutine the test starts, and those they start in
// turn, carry the label, and no goroutine of another test does. The check
// takes the label off the test's own goroutine and then waits until no
// goroutine carries it.
//
// What it does not see: a goroutine that a timer's callback starts
// (time.AfterFunc, and so a context deadline's cancellation and what a
// context.AfterFunc it fires starts) runs without labels, as the timer
// does not run on the test's goroutine; so does a goroutine started by
// one that existed before the test (a pool or worker shared across
// tests). A leak started only from such places is not caught here. Timers
// of a fake clock run on the goroutine that advances the clock, usually
// the test's, and are seen.
func NoLeaks(t testing.TB) string {
	t.Helper()
	// The first signal.Notify starts os/signal's goroutine for the life of
	// the process; start it before labelling, so that it is not the test's.
	warm := make(chan os.Signal, 1)
	signal.Notify(warm, os.Interrupt)
	signal.Stop(warm)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	marker := hex.EncodeToString(b)
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(LeakLabel, marker)))
	t.Cleanup(func() {
		if pids := MarkedProcesses(LeakMarkerVar + "=" + marker); len(pids) > 0 {
			for _, pid := range pids {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
			t.Errorf("processes left running after the test: %v", pids)
		}
		// The cleanups run on the test's goroutine: it is the one
		// labelled goroutine allowed to stay.
		pprof.SetGoroutineLabels(context.Background())
		// Goroutines of a finished test end on their own time: wait for
		// them, not for a guess at how long they take.
		if !Await(t, func() bool { n, _ := labelledGoroutines(marker); return n == 0 }) {
			n, stacks := labelledGoroutines(marker)
			t.Errorf("goroutine leak: %d goroutines started by the test still run (pprof label %s=%s):\n%s", n, LeakLabel, marker, stacks)
		}
	})
	return marker
}

// labelledGoroutines counts the goroutines that carry the pprof label
// LeakLabel=marker and returns their stacks. It reads the goroutine
// profile in its text form (debug=1): a line "goroutine profile: total
// N", then one group per distinct stack and label set, separated by blank
// lines, each starting with a line "N @ pc pc …" (N goroutines have that
// stack), then "# labels: {"key":"value", …}" when they carry labels,
// then the frames.
func labelledGoroutines(marker string) (n int, stacks string) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	total, groups, _ := strings.Cut(buf.String(), "\n")
	if !strings.HasPrefix(total, "goroutine profile: total ") {
		panic(fmt.Sprintf("goroutine profile: unexpected first line %q", total))
	}
	label := strconv.Quote(LeakLabel) + ":" + strconv.Quote(marker)
	var out strings.Builder
	for _, group := range strings.Split(groups, "\n\n") {
		group = strings.Trim(group, "\n")
		head, rest, _ := strings.Cut(group, "\n")
		labels, _, _ := strings.Cut(rest, "\n")
		if !strings.HasPrefix(labels, "# labels: {") || !labelsHold(labels, label) {
			continue
		}
		count, _, ok := strings.Cut(head, " @ ")
		c, err := strconv.Atoi(count)
		if !ok || err != nil {
			panic(fmt.Sprintf("goroutine profile: unexpected group header %q", head))
		}
		n += c
		out.WriteString(group + "\n\n")
	}
	return n, out.String()
}

// labelsHold reports whether a "# labels: {…}" line holds the pair
// label ("key":"value", quoted as the profile quotes them).
func labelsHold(line, label string) bool {
	body := strings.TrimSuffix(strings.TrimPrefix(line, "# labels: {"), "}")
	for _, pair := range strings.Split(body, ", ") {
		if pair == label {
			return true
		}
	}
	return false
}
