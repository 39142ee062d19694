//go:build unix

package transport

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// PollableInput returns a copy of f, a pipe or a socket such as the stdin
// of mcpc run --stdio, that Go's network poller serves, and a function that
// closes the copy and restores f's blocking mode. ok is false, and f is
// left alone, for anything else: a terminal, a file, a descriptor already
// non-blocking, or one that is the same file as any of shared.
//
// Why: os.Stdin is read with a blocking read that holds an operating
// system thread, and the Go scheduler only takes that thread's processor
// back for other goroutines after a delay, so a gateway on one processor
// (see LineTransport) stalls on every message. The poller's reads wait
// without a thread. Closing the copy also ends a pending read, so nothing
// is left reading after the session.
//
// Non-blocking mode is a property of the open pipe or socket, which f and
// its copy share with every other descriptor of it. That is why terminals
// are left alone (a shell may share them), why done restores the mode, and
// why shared must name the descriptors that must stay blocking: a socket
// that is stdin and stdout at once (inetd, systemd's StandardOutput=socket)
// would make writes to os.Stdout fail with EAGAIN instead of waiting.
func PollableInput(f *os.File, shared ...*os.File) (in *os.File, done func(), ok bool) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil, nil, false
	}
	for _, other := range shared {
		if ofi, err := other.Stat(); err != nil || os.SameFile(fi, ofi) {
			return nil, nil, false
		}
	}
	// Through SyscallConn, not Fd: Fd would switch a pollable f to
	// blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, false
	}
	dup := -1
	if err := rc.Control(func(fd uintptr) { dup = dupForPoller(fd) }); err != nil || dup < 0 {
		return nil, nil, false
	}
	in = os.NewFile(uintptr(dup), f.Name())
	return in, func() {
		// Close first: it wakes a read waiting in the poller and waits
		// for it, which a read blocked in the kernel would never let
		// happen. Then blocking mode goes back on the pipe, through f.
		in.Close()
		_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
	}, true
}

// dupForPoller returns a non-blocking duplicate of fd if fd is blocking,
// else -1.
func dupForPoller(fd uintptr) int {
	flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
	if err != nil || flags&unix.O_NONBLOCK != 0 {
		return -1 // already non-blocking: os.NewFile puts it in the poller itself
	}
	// Under ForkLock, so that no process started meanwhile inherits the
	// copy before it is close-on-exec (F_DUPFD_CLOEXEC is not everywhere).
	syscall.ForkLock.RLock()
	dup, err := unix.Dup(int(fd))
	if err == nil {
		unix.CloseOnExec(dup)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return -1
	}
	return dup
}
