package craftbot

import (
	"runtime"
	"sync"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/schema"
)

// job is the schema check of one object entry.
type job struct {
	entry *Entry
	ds    []diag.Diagnostic
}

// checkAll checks every entry against #CraftbotServer on up to GOMAXPROCS
// goroutines (a CUE validator serves one goroutine at a time).
func checkAll(jobs []job) error {
	workers := min(runtime.GOMAXPROCS(0), 1+len(jobs)/64)
	next := make(chan int, len(jobs))
	for i := range jobs {
		next <- i
	}
	close(next)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := schema.Acquire()
			if err != nil {
				errs[w] = err
				return
			}
			defer schema.Release(v)
			for i := range next {
				e := jobs[i].entry
				jobs[i].ds = v.Check(schema.CraftbotServer, e.Node, e.Subject(), nil)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
