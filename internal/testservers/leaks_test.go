package testservers

import (
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTB is the part of testing.TB that NoLeaks uses, so that a test can
// run NoLeaks's check as another test would and see what it reports.
type fakeTB struct {
	testing.TB // nil: NoLeaks uses only the methods below

	deadline time.Time // what Deadline reports (Await gives up 20 s before it)

	mu       sync.Mutex
	cleanups []func()
	errors   []string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Deadline() (time.Time, bool) { return f.deadline, true }

// run runs body as the body of a test, on a goroutine of its own, then
// the cleanups on that goroutine, last registered first, as testing does;
// it returns what they reported.
func (f *fakeTB) run(body func()) []string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		body()
		f.mu.Lock()
		cleanups := f.cleanups
		f.mu.Unlock()
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.errors
}

// leakedWait and othersWait block until ch is closed: the goroutines of
// the test that leaks, and of another test, told apart by their stacks.
func leakedWait(ch <-chan struct{}) { <-ch }
func othersWait(ch <-chan struct{}) { <-ch }

// NoLeaks counts the goroutines that the test started, and those only:
// it reports one that still runs, with its stack, and none of the
// goroutines of other tests that run meanwhile, nor the test's own.
func TestNoLeaksSeesOnlyTheTestsGoroutines(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var stopped sync.WaitGroup
	defer stopped.Wait()
	defer close(release)

	// Another test's goroutines, three of one stack (a group of the
	// profile with a count of 3), run throughout.
	other := "other-" + t.Name()
	started := make(chan struct{})
	pprof.Do(context.Background(), pprof.Labels(LeakLabel, other), func(context.Context) {
		for range 3 {
			stopped.Go(func() {
				started <- struct{}{}
				othersWait(release)
			})
		}
	})
	for range 3 {
		<-started
	}
	if n, stacks := labelledGoroutines(other); n != 3 || strings.Count(stacks, "othersWait") == 0 {
		t.Fatalf("%d goroutines labelled %s, want 3:\n%s", n, other, stacks)
	}
	if n, stacks := labelledGoroutines("nobody"); n != 0 {
		t.Fatalf("%d goroutines labelled with a marker nobody uses:\n%s", n, stacks)
	}

	// A test that leaves a goroutine running fails, naming it. Its
	// deadline has passed: the check looks once and gives up.
	leaky := &fakeTB{deadline: time.Now()}
	var leakyMarker string
	errs := leaky.run(func() {
		leakyMarker = NoLeaks(leaky)
		up := make(chan struct{})
		stopped.Go(func() {
			close(up)
			leakedWait(release)
		})
		<-up
	})
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "goroutine leak: 1 goroutines started by the test still run") ||
		!strings.Contains(errs[0], "leakedWait") || strings.Contains(errs[0], "othersWait") || strings.Contains(errs[0], "fakeTB).run") {
		t.Errorf("the check of a test that leaks a goroutine reported %q, want the leaked goroutine (leakedWait) alone", errs)
	}

	// A test whose goroutines have ended passes, though the goroutines of
	// the two tests above still run: at once, without waiting ...
	quick := &fakeTB{deadline: time.Now()}
	if errs := quick.run(func() { NoLeaks(quick) }); len(errs) != 0 {
		t.Errorf("the check of a test without goroutines of its own reported %q", errs)
	}
	// ... and once a goroutine that ends on its own time has ended.
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(Patient)
	}
	patient := &fakeTB{deadline: deadline}
	if errs := patient.run(func() {
		NoLeaks(patient)
		ended := make(chan struct{})
		go func() { close(ended) }()
		<-ended
	}); len(errs) != 0 {
		t.Errorf("the check of a test whose goroutine ended reported %q", errs)
	}

	if n, _ := labelledGoroutines(leakyMarker); n != 1 {
		t.Errorf("%d goroutines of the leaking test, want 1 (leakedWait)", n)
	}
	if n, _ := labelledGoroutines(other); n != 3 {
		t.Errorf("%d goroutines of the other test, want 3", n)
	}
}
