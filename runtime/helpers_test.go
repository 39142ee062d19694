package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// fakeClock is a Clock that moves only when a test advances it. Timers
// that come due run synchronously inside Advance, in due order.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
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

// Advance moves the clock by d and runs every timer that came due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due, keep []*fakeTimer
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
}

// Pending returns the number of timers not yet due.
func (c *fakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// eventually waits until cond holds, with no deadline but the test
// binary's (testservers.WaitUntil).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testservers.WaitUntil(t, what, cond)
}

// leakMarkerVar is put in the environment of every process a test starts,
// so that leftovers are found whatever their parent or process group.
const leakMarkerVar = "MCPC_TEST_LEAK_MARKER"

// leakLabel is the pprof label that marks the goroutines of a test that
// called noLeaks: its value is the test's marker.
const leakLabel = "mcpc-test-leak"

// noLeaks returns a fresh marker value and registers a check, run after
// every other cleanup registered after it, that no process carrying the
// marker in its environment still runs and that the goroutines of the
// test are gone.
//
// The goroutines of the test are told apart by a pprof label, not by
// counting runtime.NumGoroutine: tests run in parallel (t.Parallel), and
// the number of goroutines of the whole binary then says nothing about
// one test. noLeaks labels the calling goroutine (the test's) with
// leakLabel=marker; a goroutine inherits the labels of the goroutine that
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
// of the fake clock (newFakeClock) run on the goroutine that advances the
// clock, usually the test's, and are seen.
func noLeaks(t testing.TB) string {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	marker := hex.EncodeToString(b)
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(leakLabel, marker)))
	t.Cleanup(func() {
		if pids := testservers.MarkedProcesses(leakMarkerVar + "=" + marker); len(pids) > 0 {
			t.Errorf("processes left running after the test: %v", pids)
		}
		// The cleanups run on the test's goroutine: it is the one
		// labelled goroutine allowed to stay.
		pprof.SetGoroutineLabels(context.Background())
		// Goroutines of a finished test end on their own time: wait for
		// them, not for a guess at how long they take.
		if !testservers.Await(t, func() bool { n, _ := labelledGoroutines(marker); return n == 0 }) {
			n, stacks := labelledGoroutines(marker)
			t.Errorf("goroutine leak: %d goroutines started by the test still run (pprof label %s=%s):\n%s", n, leakLabel, marker, stacks)
		}
	})
	return marker
}

// labelledGoroutines counts the goroutines that carry the pprof label
// leakLabel=marker and returns their stacks. It reads the goroutine
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
	label := strconv.Quote(leakLabel) + ":" + strconv.Quote(marker)
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

// patientSeconds is testservers.Patient in seconds: the startup and call
// timeouts of test servers on the real clock, which no start or call that
// must succeed may reach, however busy the machine. A test of a timeout
// sets a short one on a fake clock, or against a server that never answers.
const patientSeconds = int(testservers.Patient / time.Second)

// testServer is a plan server running the Go test server with args.
func testServer(name string, args ...string) plan.Server {
	return plan.Server{
		Name: name, Command: testBin, Args: args, Cwd: "${workspace}",
		Enabled: true, Env: map[string]*string{}, Transport: "stdio",
		StartupTimeoutSeconds: patientSeconds, CallTimeoutSeconds: patientSeconds, IdleTimeoutSeconds: 1800,
		StderrLevel: "Warning",
	}
}

func testPlan(servers ...plan.Server) *plan.Plan {
	return &plan.Plan{PlanVersion: plan.Version, Profile: "volcanic", Servers: servers}
}

// testEnv is a host environment with PATH, the leak marker and vars.
func testEnv(marker string, vars ...string) HostEnv {
	return EnvFromList(append([]string{"PATH=" + os.Getenv("PATH"), leakMarkerVar + "=" + marker}, vars...), nil)
}

// newTestHost builds a host that is closed at the end of the test.
func newTestHost(t testing.TB, p *plan.Plan, opts HostOptions) *Host {
	t.Helper()
	h, err := NewHost(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// logRecorder collects a host's log entries.
type logRecorder struct {
	mu      sync.Mutex
	entries []LogEntry
}

func (l *logRecorder) log(e LogEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

func (l *logRecorder) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.entries {
		fmt.Fprintf(&b, "%s [%s/%s] %s\n", e.Level, e.Chat, e.Server, e.Message)
	}
	return b.String()
}

// lines reads a file of lines (a start or call log); a missing file has none.
func lines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func ptr(s string) *string { return &s }
