//go:build unix

package runtime

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
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc: trust kill(2)
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 3 && f[0] != "Z" && f[2] == want {
			return true
		}
	}
	return false
}
