package runtime

import (
	"fmt"
	"sync"
)

// processLimit counts the chat processes of a host against
// HostOptions.MaxProcesses. A start takes a place before it begins and the
// process gives it back when it is gone; a start that finds no place fails
// at once (the call gets the reason), and the next call tries again.
type processLimit struct {
	mu     sync.Mutex
	max    int // 0: no limit
	used   int
	logged bool // the limit was logged since it was last not reached
}

// reserveProcess takes a place for a chat process. release gives it back;
// it may be called more than once.
func (h *Host) reserveProcess() (release func(), ok bool) {
	l := &h.procs
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && l.used >= l.max {
		if !l.logged {
			l.logged = true
			h.log("Warning", "", "", "the host runs its maximum of %d server processes (MaxProcesses, mcpc run --max-processes): a chat's server starts only once another process stopped (idle, reset or an expired chat)", l.max)
		}
		return nil, false
	}
	l.used++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.used--
			if l.used < l.max {
				l.logged = false
			}
		})
	}, true
}

// Processes returns the number of chat processes running or starting.
func (h *Host) Processes() int {
	h.procs.mu.Lock()
	defer h.procs.mu.Unlock()
	return h.procs.used
}

// limitError is the error of a call whose server could not start because
// the host runs its maximum of processes.
func (s *slot) limitError() *CallError {
	name := s.srv.cfg.Name
	msg := fmt.Sprintf("MCP server %s was not started: the host already runs its maximum of %d server processes (mcpc run --max-processes); it starts on a later call, once other processes stopped", name, s.c.h.procs.max)
	return &CallError{Kind: CallLimit, Server: name, Message: msg} // redacted where it leaves (Chat.Call)
}
