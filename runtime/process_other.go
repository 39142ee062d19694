//go:build !unix

package runtime

import (
	"os"
	"os/exec"
	"time"
)

// setProcessGroup does nothing where there are no process groups.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills only p where there are no process groups.
func killProcessGroup(p *os.Process) error { return p.Kill() }

func waitGroupGone(int, time.Duration) {}

// procInfo is a process; there are none to find on this system.
type procInfo struct {
	pid, ppid, pgid int
	comm            string
	zombie          bool
}

func escapedDescendants(int) []procInfo { return nil }

func killProcesses([]procInfo, time.Duration) []procInfo { return nil }
