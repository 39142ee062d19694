package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Guard keeps the processes of mcpc's servers from outliving it,
// also when mcpc cannot stop them itself (SIGKILL, the OOM killer), and
// finds the ones that leave their process group. Linux only (StartGuard
// fails elsewhere):
//
//   - mcpc becomes a child subreaper (PR_SET_CHILD_SUBREAPER): a process
//     whose parent, a server or one of its descendants, dies is reparented
//     to mcpc rather than to init, so it is still found. The guard reaps
//     those that end; the ones that left their server's process group
//     (setsid) are logged, and killed when the guard closes.
//   - a watchdog, mcpc itself in a hidden mode (RunGuard) in a process
//     group of its own, holds a pipe from mcpc on which it learns every
//     server process group that starts and ends, and every orphan that
//     left its group. When the pipe closes without mcpc having ended them
//     all (mcpc died), it kills what is left, then exits.
//
// The kernel's parent-death signal still kills each server itself with
// mcpc (setDeathSignal); the guard adds its descendants.
//
// What no guard finds: a process that leaves its group while its server
// runs, when mcpc is killed before that server stops (the server dies with
// mcpc, and the process is reparented to init, not to mcpc). A server
// that stops while mcpc runs has such processes killed with it
// (escapedDescendants).
type Guard struct {
	cmd *exec.Cmd // the watchdog
	log func(string)

	mu      sync.Mutex
	w       *os.File // to the watchdog; nil once it failed
	groups  map[int]bool
	claimed map[int]int      // processes a stopping server kills on its own (count of claims)
	orphans map[int]ProcInfo // live orphans outside every server group
	found   int              // orphans found outside every server group
	stop    chan struct{}
	done    chan struct{}
}

// GuardReport is what a guard found by the time it closed.
type GuardReport struct {
	// Orphans counts the processes that outlived their server, outside its
	// process group; each was killed by Close.
	Orphans int
	// Survivors are the pids of those that would not die.
	Survivors []int
}

// activeGuard is the guard of this process, if one runs: starting and
// stopping server processes tell it about their groups.
var activeGuard atomic.Pointer[Guard]

// guardGroupStarted tells the guard about a server's new process group.
func guardGroupStarted(pgid int) {
	if g := activeGuard.Load(); g != nil && pgid > 0 {
		g.mu.Lock()
		g.groups[pgid] = true
		g.sendLocked('g', pgid)
		g.mu.Unlock()
	}
}

// guardGroupGone tells the guard that a server's process group is gone.
func guardGroupGone(pgid int) {
	if g := activeGuard.Load(); g != nil && pgid > 0 {
		g.mu.Lock()
		delete(g.groups, pgid)
		g.sendLocked('u', pgid)
		g.mu.Unlock()
	}
}

// guardClaim tells the guard that a stopping server kills these processes
// on its own (they left its group): they are no orphans to report when the
// server's death reparents them. guardRelease ends the claim.
func guardClaim(procs []ProcInfo) {
	if g := activeGuard.Load(); g != nil {
		g.mu.Lock()
		for _, p := range procs {
			g.claimed[p.Pid]++
		}
		g.mu.Unlock()
	}
}

func guardRelease(procs []ProcInfo) {
	if g := activeGuard.Load(); g != nil {
		g.mu.Lock()
		for _, p := range procs {
			if g.claimed[p.Pid]--; g.claimed[p.Pid] <= 0 {
				delete(g.claimed, p.Pid)
			}
		}
		g.mu.Unlock()
	}
}

// guardWriteLimit bounds one write to the watchdog: a watchdog that stopped
// reading must not stall process starts.
const guardWriteLimit = time.Second

// sendLocked writes one line to the watchdog: g/u PGID (a group started or
// ended), p/q PID (an orphan found or reaped). g.mu is held.
func (g *Guard) sendLocked(op byte, id int) {
	if g.w == nil {
		return
	}
	_ = g.w.SetWriteDeadline(time.Now().Add(guardWriteLimit))
	if _, err := fmt.Fprintf(g.w, "%c %d\n", op, id); err != nil {
		g.w.Close()
		g.w = nil
		g.log(fmt.Sprintf("the guard process no longer listens (%v): server processes are not killed if mcpc dies without stopping them", err))
	}
}

// guardCommand is one line from mcpc to the watchdog.
type guardCommand struct {
	op byte
	id int
}

func parseGuardLine(line string) (guardCommand, bool) {
	op, arg, ok := strings.Cut(strings.TrimSpace(line), " ")
	if !ok || len(op) != 1 || !strings.ContainsAny(op, "gupq") {
		return guardCommand{}, false
	}
	id, err := strconv.Atoi(arg)
	if err != nil || id <= 1 {
		return guardCommand{}, false
	}
	return guardCommand{op: op[0], id: id}, true
}
