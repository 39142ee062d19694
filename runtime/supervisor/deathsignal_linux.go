//go:build linux

package supervisor

import "syscall"

// setDeathSignal makes the kernel send SIGKILL to the server when mcpc dies
// without stopping it (SIGKILL, a crash, the OOM killer), so that no server
// outlives mcpc even then (SPEC §4). Only the server itself gets it, not
// its descendants; a server normally ends them when it dies, and mcpc kills
// the whole group whenever it can.
//
// Linux ties the death signal to the thread that created the child, not to
// the process: it fires when that OS thread exits. Go creates the child
// from whatever thread runs the starting goroutine, and never retires a
// thread except when a goroutine that locked it (runtime.LockOSThread)
// exits without unlocking it. mcpc locks no threads, so the thread lives as
// long as mcpc does, and the signal comes only when mcpc itself dies.
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
