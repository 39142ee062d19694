//go:build !unix

package supervisor

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

func escapedDescendants(int) []ProcInfo { return nil }

func killProcesses([]ProcInfo, time.Duration) []ProcInfo { return nil }
