//go:build unix

package supervisor

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// setProcessGroup makes cmd the leader of a new process group, so that the
// server and everything it starts can be killed together; where the system
// can, the server is also killed when mcpc dies without stopping it (see
// setDeathSignal).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// killProcessGroup sends SIGKILL to the group that p leads. Once the group
// is empty this fails with ESRCH.
func killProcessGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}

// waitGroupGone waits until no process of the group pgid runs any more, or
// until limit passes. SIGKILL is asynchronous: kill(2) returns before the
// targets are gone.
func waitGroupGone(pgid int, limit time.Duration) {
	if pgid == 0 {
		return
	}
	deadline := time.Now().Add(limit)
	for groupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
}

// groupAlive reports whether a process of group pgid still runs. Zombies do
// not count: killed descendants are reparented to init, which may take a
// while to reap them, and they still answer kill(-pgid, 0).
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	procs, ok := listProcs()
	if !ok {
		return true // no /proc: trust kill(2)
	}
	for _, p := range procs {
		if p.Pgid == pgid && !p.Zombie {
			return true
		}
	}
	return false
}

// listProcs reads every process of /proc; ok is false without /proc.
func listProcs() (procs []ProcInfo, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		if p, ok := readProc(e.Name()); ok {
			procs = append(procs, p)
		}
	}
	return procs, true
}

// readProc reads /proc/PID/stat: "pid (comm) state ppid pgrp …"; comm may
// hold spaces and parentheses.
func readProc(pid string) (ProcInfo, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ProcInfo{}, false
	}
	s := string(b)
	open, i := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || i < open {
		return ProcInfo{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return ProcInfo{}, false
	}
	p := ProcInfo{Comm: s[open+1 : i], Zombie: f[0] == "Z"}
	p.Pid, _ = strconv.Atoi(pid)
	p.PPid, _ = strconv.Atoi(f[1])
	p.Pgid, _ = strconv.Atoi(f[2])
	return p, true
}

// escapedDescendants returns the live descendants of pid that are not in
// its process group: processes a server started that left its group
// (setsid, setpgid), which killing the group does not reach. Only
// descendants still linked to pid are found: one whose parent already
// died was reparented (to init, or to mcpc as a subreaper, see Guard).
func escapedDescendants(pid int) []ProcInfo {
	if pid <= 0 {
		return nil
	}
	procs, ok := listProcs()
	if !ok {
		return nil
	}
	children := map[int][]ProcInfo{}
	for _, p := range procs {
		children[p.PPid] = append(children[p.PPid], p)
	}
	var out []ProcInfo
	queue := []int{pid}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range children[parent] {
			queue = append(queue, c.Pid)
			if c.Pgid != pid && !c.Zombie {
				out = append(out, c)
			}
		}
	}
	return out
}

// killProcesses sends SIGKILL to each process and waits, up to limit, until
// none runs. It returns the ones still running.
func killProcesses(procs []ProcInfo, limit time.Duration) (left []ProcInfo) {
	for _, p := range procs {
		_ = syscall.Kill(p.Pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(limit)
	for {
		left = left[:0]
		for _, p := range procs {
			if q, ok := readProc(strconv.Itoa(p.Pid)); ok && !q.Zombie {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(2 * time.Millisecond)
	}
}
