package volcanic

import (
	"runtime"
	"slices"
	"sync"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// checkPool runs the schema checks of a compilation on GOMAXPROCS-1
// goroutines while the compilation goes on binding and reading entries:
// each entry is submitted once the checks of its own are made, and packed
// by the goroutine that checked it. Jobs go in small groups (a goroutine
// woken for each one cost more than many checks), and the queue is short,
// so that few entries wait with their trees whole. Checking the entries a
// batch of a thousand at a time instead, each batch waiting for its
// slowest check, cost more time on a busy machine (docs/performance.md).
type checkPool struct {
	jobs    chan []numberedJob
	pending []numberedJob
	wg      sync.WaitGroup
	// found holds, per goroutine, the diagnostics of the jobs that have
	// any, with the job's number.
	found [][]numberedDiags
	n     int
}

type numberedJob struct {
	n int
	checkJob
}

type numberedDiags struct {
	n  int
	ds []diag.Diagnostic
}

const (
	// checkGroup is how many jobs go to a goroutine at once.
	checkGroup = 32
	// checkQueue is how many groups wait for a goroutine at most.
	checkQueue = 4
)

// check has j's schema check run, and its entry packed after it.
func (c *compiler) check(j checkJob) {
	// The compilation's own goroutine stays busy binding and reading: one
	// goroutine fewer than GOMAXPROCS checks (the checks are an eighth of
	// a compilation), as more than GOMAXPROCS busy goroutines only take
	// turns.
	workers := runtime.GOMAXPROCS(0) - 1
	if workers < 1 {
		c.ds = append(c.ds, c.v.Check(j.def, j.data, j.subject, j.naming)...)
		if j.entry != nil {
			j.entry.Pack()
		}
		return
	}
	p := c.checks
	if p == nil {
		p = startChecks(workers)
		c.checks = p
	}
	p.pending = append(p.pending, numberedJob{p.n, j})
	p.n++
	if len(p.pending) == checkGroup {
		p.jobs <- p.pending
		p.pending = make([]numberedJob, 0, checkGroup)
	}
}

// startChecks starts workers goroutines, each with a Validator of its own.
func startChecks(workers int) *checkPool {
	p := &checkPool{jobs: make(chan []numberedJob, checkQueue), pending: make([]numberedJob, 0, checkGroup), found: make([][]numberedDiags, workers)}
	for w := range workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			v, err := schema.Acquire()
			if err == nil {
				defer schema.Release(v)
			}
			for group := range p.jobs {
				for _, j := range group {
					var ds []diag.Diagnostic
					if v == nil {
						// Cannot happen: the same schemas compiled for c.v.
						ds = []diag.Diagnostic{rules.TypeMismatch.At(j.data.Pos(), "internal: schema unavailable: "+err.Error(), "")}
					} else {
						ds = v.Check(j.def, j.data, j.subject, j.naming)
					}
					if len(ds) > 0 {
						p.found[w] = append(p.found[w], numberedDiags{j.n, ds})
					}
					if j.entry != nil {
						j.entry.Pack()
					}
				}
			}
		}()
	}
	return p
}

// waitChecks waits for every check submitted and adds their diagnostics,
// in the order the checks were submitted.
func (c *compiler) waitChecks() {
	p := c.checks
	if p == nil {
		return
	}
	c.checks = nil
	if len(p.pending) > 0 {
		p.jobs <- p.pending
	}
	close(p.jobs)
	p.wg.Wait()
	var all []numberedDiags
	for _, f := range p.found {
		all = append(all, f...)
	}
	slices.SortFunc(all, func(a, b numberedDiags) int { return a.n - b.n })
	for _, f := range all {
		c.ds = append(c.ds, f.ds...)
	}
}

// stopChecks ends the goroutines of the checks, if a compilation stopped
// before waiting for them.
func (c *compiler) stopChecks() {
	if p := c.checks; p != nil {
		c.checks = nil
		close(p.jobs)
		p.wg.Wait()
	}
}
