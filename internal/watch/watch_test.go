package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/mcpc-dev/mcpc/internal/clock"
	"github.com/mcpc-dev/mcpc/internal/clocktest"
)

// events lets a test wait until the watcher has taken the event of a
// file name: inotify keeps the order of one directory's events, so every
// earlier write's events have been taken too.
type events struct {
	mu    sync.Mutex
	names map[string]chan struct{}
	n     int
}

func hookEvents(t *testing.T) *events {
	e := &events{names: map[string]chan struct{}{}}
	testHookEvent = func(ev fsnotify.Event) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if ch := e.names[filepath.Base(ev.Name)]; ch != nil {
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
	}
	t.Cleanup(func() { testHookEvent = nil })
	return e
}

// seen returns a channel closed once an event of base name arrives.
func (e *events) seen(name string) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch := make(chan struct{})
	e.names[name] = ch
	return ch
}

// settle returns once the watcher has taken the events of every write
// made so far in dir: it writes one more file there and waits for its
// event.
func (e *events) settle(t *testing.T, dir string) {
	t.Helper()
	e.mu.Lock()
	e.n++
	name := fmt.Sprintf("settle-%d", e.n)
	e.mu.Unlock()
	seen := e.seen(name)
	write(t, filepath.Join(dir, name), "x")
	<-seen
}

// fireOne ends the pending debounce, which must be there.
func fireOne(t *testing.T, c *clocktest.Fake) {
	t.Helper()
	if n := c.Advance(DefaultDebounce); n != 1 {
		t.Fatalf("%d debounce timers pending, want 1", n)
	}
}

// reloads counts the Reload calls and reports each on a channel.
type reloads struct {
	mu   sync.Mutex
	n    int
	read []string // the file's content at each reload
	each chan struct{}
}

func (r *reloads) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func startWatch(t *testing.T, file string, clock clock.Clock, r *reloads) *Watcher {
	t.Helper()
	w, err := Start(context.Background(), Options{Files: []string{file}, Clock: clock,
		Reload: func(context.Context) error {
			data, _ := os.ReadFile(file)
			r.mu.Lock()
			r.n++
			r.read = append(r.read, string(data))
			r.mu.Unlock()
			r.each <- struct{}{}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// An editor's write-to-temporary-then-rename is seen (the directory is
// watched, not the file's first inode) and reloads once, after the
// debounce; so does the next such save.
func TestRenameOverFileReloadsOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	write(t, file, "v0")
	ev := hookEvents(t)
	clock := clocktest.New()
	r := &reloads{each: make(chan struct{}, 10)}
	startWatch(t, file, clock, r)
	for i := 1; i <= 2; i++ {
		tmp := filepath.Join(dir, ".plan.json.tmp")
		write(t, tmp, fmt.Sprintf("v%d", i))
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
		ev.settle(t, dir)
		if r.count() != i-1 {
			t.Fatalf("reloaded before the debounce ended: %d reloads", r.count())
		}
		fireOne(t, clock)
		<-r.each
	}
	if got := r.read; len(got) != 2 || got[0] != "v1" || got[1] != "v2" {
		t.Fatalf("reloads read %q, want [v1 v2]", got)
	}
}

// A storm of 100 writes is one change: one reload, which reads the last
// version. The writes' events have all been taken (the event of a later
// file in the same directory has) before the debounce ends.
func TestStormOf100WritesReloadsOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	write(t, file, "v0")
	ev := hookEvents(t)
	clock := clocktest.New()
	r := &reloads{each: make(chan struct{}, 200)}
	w := startWatch(t, file, clock, r)
	for i := 1; i <= 100; i++ {
		write(t, file, fmt.Sprintf("v%d", i))
	}
	ev.settle(t, dir)
	fireOne(t, clock)
	<-r.each
	w.Close()
	if r.count() != 1 || r.read[0] != "v100" {
		t.Fatalf("the storm made %d reloads reading %q, want 1 reading v100", r.count(), r.read)
	}
}

// Files other than the watched ones in the same directory reload nothing.
func TestOtherFilesAreIgnored(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	write(t, file, "v0")
	ev := hookEvents(t)
	clock := clocktest.New()
	r := &reloads{each: make(chan struct{}, 10)}
	w := startWatch(t, file, clock, r)
	write(t, filepath.Join(dir, "notes.txt"), "x")
	ev.settle(t, dir)
	if n := clock.Pending(); n != 0 {
		t.Fatalf("a change of another file armed %d reloads", n)
	}
	w.Close()
	if r.count() != 0 {
		t.Fatalf("%d reloads, want none", r.count())
	}
}

// A change during a reload makes one more reload after it, never two at a
// time; Reload's error goes to OnError.
func TestChangeDuringReloadReloadsAgainAfterIt(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	write(t, file, "v0")
	ev := hookEvents(t)
	clock := clocktest.New()
	entered := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	running, most, calls := 0, 0, 0
	errs := make(chan error, 10)
	w, err := Start(context.Background(), Options{Files: []string{file}, Clock: clock, OnError: func(err error) { errs <- err },
		Reload: func(context.Context) error {
			mu.Lock()
			running++
			most = max(most, running)
			calls++
			n := calls
			mu.Unlock()
			if n == 1 {
				entered <- struct{}{}
				<-release
			}
			mu.Lock()
			running--
			mu.Unlock()
			return fmt.Errorf("reload %d failed", n)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write(t, file, "v1")
	ev.settle(t, dir)
	fireOne(t, clock)
	<-entered
	write(t, file, "v2")
	ev.settle(t, dir)
	fireOne(t, clock) // due while the first reload runs
	close(release)
	for i := 1; i <= 2; i++ {
		if err := <-errs; err.Error() != fmt.Sprintf("reload %d failed", i) {
			t.Fatalf("OnError got %v", err)
		}
	}
	w.Close()
	if most != 1 || calls != 2 {
		t.Fatalf("%d reloads, at most %d at a time; want 2, one at a time", calls, most)
	}
}

// Close cancels the reload in progress and waits for it.
func TestCloseCancelsAndAwaitsTheReload(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	write(t, file, "v0")
	ev := hookEvents(t)
	clock := clocktest.New()
	entered := make(chan struct{})
	var ended bool
	w, err := Start(context.Background(), Options{Files: []string{file}, Clock: clock,
		Reload: func(ctx context.Context) error {
			close(entered)
			<-ctx.Done()
			ended = true
			return ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, file, "v1")
	ev.settle(t, dir)
	fireOne(t, clock)
	<-entered
	w.Close()
	if !ended {
		t.Fatal("Close returned before the reload ended")
	}
	w.Close() // again: no panic, no wait
}

func TestStartRefusesAMissingDirectory(t *testing.T) {
	_, err := Start(context.Background(), Options{Files: []string{filepath.Join(t.TempDir(), "no", "plan.json")},
		Reload: func(context.Context) error { return nil }})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want a missing directory", err)
	}
}
