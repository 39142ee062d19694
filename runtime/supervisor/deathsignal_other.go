//go:build unix && !linux

package supervisor

import "syscall"

// setDeathSignal does nothing where the kernel has no parent-death signal:
// only mcpc's own stopping (on exit and on SIGINT, SIGTERM, SIGHUP and
// SIGQUIT) ends the servers there.
func setDeathSignal(*syscall.SysProcAttr) {}
