// Package watch calls a reload when files change (`mcpc run --watch`). It
// watches the directories that hold the files, not the files themselves:
// editors and `mcpc plan -o` write a temporary file and rename it over the
// original, which a watch on the original would lose with its inode. The
// changes of a burst (an editor's write-rename sequence, a storm of writes)
// are debounced: Reload runs once the files have been quiet for the
// debounce time, once for the whole burst, and never two at a time.
//
// Reload is a plain `func(ctx) error`, so that any runtime that can take a
// new plan (the volcanic runtime.Host, the craftbot runtime) can be wired to
// it. Every goroutine of a Watcher is owned: Close cancels the reload in
// progress and returns once all of them have ended.
package watch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mcpc-dev/mcpc/internal/clock"
)

// DefaultDebounce is how long the watched files must be quiet before a
// reload: long enough for an editor's write, rename and chmod to end as
// one change, short enough to feel immediate.
const DefaultDebounce = 250 * time.Millisecond

// Options configure a Watcher.
type Options struct {
	// Files are the files whose changes call Reload (creating, writing,
	// renaming over, removing, changing the mode). Their directories must
	// exist.
	Files []string
	// Reload is called once per settled burst of changes, never twice at a
	// time; ctx ends when the Watcher closes.
	Reload func(ctx context.Context) error
	// OnError, if set, receives the errors of Reload and of the watch
	// itself (say, the kernel's event queue overflowed: a reload follows).
	// It is called from the Watcher's goroutine.
	OnError func(error)
	// Debounce is the quiet time before a reload; 0 means DefaultDebounce.
	Debounce time.Duration
	// Clock measures the debounce; nil means clock.Real. Tests pass a
	// clock they advance by hand, so that a burst of changes is one burst
	// whatever the machine's speed.
	Clock clock.Clock
}

// Watcher watches files for changes and reloads; see the package comment.
type Watcher struct {
	opts   Options
	fw     *fsnotify.Watcher
	files  map[string]bool // cleaned absolute paths
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop and the reload have ended
	wake   chan struct{} // a debounce ended (capacity 1)
	// finished takes the outcome of the reload that runs (capacity 1:
	// one runs at a time, and its goroutine never waits to end).
	finished chan error
	reloads  sync.WaitGroup

	mu    sync.Mutex
	gen   uint64 // bumped by each change: only the latest timer counts
	due   bool   // the latest timer fired: a reload is due
	timer clock.Timer
}

// Start watches the directories of opts.Files. The returned Watcher runs
// until Close (or until ctx ends, after which Close still must be called
// to wait for it).
func Start(ctx context.Context, opts Options) (*Watcher, error) {
	if opts.Reload == nil {
		return nil, errors.New("watch: no Reload")
	}
	if len(opts.Files) == 0 {
		return nil, errors.New("watch: no files to watch")
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{opts: opts, fw: fw, files: map[string]bool{}, done: make(chan struct{}), wake: make(chan struct{}, 1), finished: make(chan error, 1)}
	dirs := map[string]bool{}
	for _, f := range opts.Files {
		abs, err := filepath.Abs(f)
		if err != nil {
			fw.Close()
			return nil, fmt.Errorf("watch: %s: %w", f, err)
		}
		w.files[abs] = true
		dirs[filepath.Dir(abs)] = true
	}
	for dir := range dirs {
		if err := fw.Add(dir); err != nil {
			fw.Close()
			return nil, fmt.Errorf("watch: cannot watch directory %s: %w", dir, err)
		}
	}
	w.ctx, w.cancel = context.WithCancel(ctx)
	go w.loop()
	return w, nil
}

// Close stops watching, cancels a reload in progress and waits for it and
// for every goroutine of the Watcher. It may be called more than once.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return nil
}

// testHookEvent, when set, sees every event the loop takes, before it is
// filtered (tests know from it that the events of their writes arrived).
var testHookEvent func(fsnotify.Event)

// loop is the Watcher's goroutine: it takes the events, arms the
// debounce, and starts the reloads, one at a time, on a goroutine of their
// own, so that the events of a change made during a reload are taken (and
// debounced) meanwhile: such a change reloads once more after it.
func (w *Watcher) loop() {
	defer close(w.done)
	defer w.reloads.Wait()
	defer w.fw.Close()
	defer w.stopTimer()
	running, again := false, false
	for {
		select {
		case <-w.ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if testHookEvent != nil {
				testHookEvent(ev)
			}
			if w.files[filepath.Clean(ev.Name)] {
				w.changed()
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.report(fmt.Errorf("watch: %w", err))
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.changed() // events were lost: one of them may be ours
			}
		case <-w.wake:
			switch {
			case !w.takeDue():
			case running:
				again = true
			default:
				running = true
				w.startReload()
			}
		case err := <-w.finished:
			if err != nil && w.ctx.Err() == nil {
				w.report(err)
			}
			running = again
			if again {
				again = false
				w.startReload()
			}
		}
	}
}

// startReload runs Reload on a goroutine that Close waits for.
func (w *Watcher) startReload() {
	w.reloads.Add(1)
	go func() {
		defer w.reloads.Done()
		w.finished <- w.opts.Reload(w.ctx)
	}()
}

// changed (re)starts the debounce: the reload waits for the files to be
// quiet for the whole debounce time.
func (w *Watcher) changed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	gen := w.gen
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = w.opts.Clock.AfterFunc(w.opts.Debounce, func() { w.fire(gen) })
}

// fire ends the debounce of change gen, unless a later change restarted
// it. It never blocks: a fake clock may call it from its own goroutine.
func (w *Watcher) fire(gen uint64) {
	w.mu.Lock()
	if gen != w.gen {
		w.mu.Unlock()
		return
	}
	w.due, w.timer = true, nil
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // a wake is pending already
	}
}

// takeDue reports whether a reload is due, and marks it taken.
func (w *Watcher) takeDue() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	due := w.due
	w.due = false
	return due
}

func (w *Watcher) stopTimer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++ // a timer that fires now finds itself outdated
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

func (w *Watcher) report(err error) {
	if w.opts.OnError != nil {
		w.opts.OnError(err)
	}
}
