package supervisor

import (
	"os/exec"
	"sync"
)

// children are the processes mcpc started itself and still has to reap
// with exec.Cmd.Wait: server processes and the guard. When mcpc is a child
// subreaper (see StartGuard), orphaned descendants of its servers become
// its children too, and the guard's sweep reaps those; it must never reap
// one of these, or exec.Cmd.Wait would lose the exit status. A child is
// registered between its start and its reaping; a sweep holds starting for
// writing, so that no child is between fork and registration while it
// looks.
var children = struct {
	starting sync.RWMutex
	mu       sync.Mutex
	pids     map[int]bool
}{pids: map[int]bool{}}

// startChild starts cmd and registers its process.
func startChild(cmd *exec.Cmd) error {
	children.starting.RLock()
	defer children.starting.RUnlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	children.mu.Lock()
	children.pids[cmd.Process.Pid] = true
	children.mu.Unlock()
	return nil
}

// unregisterChild forgets cmd's process once exec.Cmd.Wait reaped it.
func unregisterChild(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	children.mu.Lock()
	delete(children.pids, cmd.Process.Pid)
	children.mu.Unlock()
}

// isOwnChild reports whether pid is a registered child.
func isOwnChild(pid int) bool {
	children.mu.Lock()
	defer children.mu.Unlock()
	return children.pids[pid]
}
