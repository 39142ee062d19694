//go:build unix

package runtime

import (
	"os"
	"syscall"
)

// PollableInput returns a copy of f, a pipe or a socket such as the stdin
// of mcpc run --stdio, that Go's network poller serves, and a function that
// closes the copy and restores f's blocking mode. ok is false, and f is
// left alone, for anything else: a terminal or a file.
//
// Why: os.Stdin is read with a blocking read that holds an operating
// system thread, and the Go scheduler only takes that thread's processor
// back for other goroutines after a delay, so a gateway on one processor
// (see LineTransport) stalls on every message. The poller's reads wait
// without a thread. Closing the copy also ends a pending read, so nothing
// is left reading after the session.
//
// Non-blocking mode is a property of the open pipe, which f and its copy
// share; it is why terminals are left alone (a shell may share them) and
// why done restores it.
func PollableInput(f *os.File) (in *os.File, done func(), ok bool) {
	// Through SyscallConn, not Fd: Fd would switch a pollable f to
	// blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, false
	}
	dup := -1
	if err := rc.Control(func(fd uintptr) { dup = dupForPoller(int(fd)) }); err != nil || dup < 0 {
		return nil, nil, false
	}
	in = os.NewFile(uintptr(dup), f.Name())
	return in, func() {
		// Close first: it wakes a read waiting in the poller and waits
		// for it, which a read blocked in the kernel would never let
		// happen. Then blocking mode goes back on the pipe, through f.
		in.Close()
		_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), false) })
	}, true
}

// dupForPoller returns a non-blocking duplicate of fd if fd is a blocking
// pipe or socket, else -1.
func dupForPoller(fd int) int {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return -1
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
		return -1
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 || flags&syscall.O_NONBLOCK != 0 {
		return -1 // already non-blocking: os.NewFile puts it in the poller itself
	}
	syscall.ForkLock.RLock()
	dup, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(dup)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1
	}
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return -1
	}
	return dup
}
