package term

import (
	"os"
	"syscall"
	"unsafe"
)

const (
	ioctlGet = syscall.TCGETS
	ioctlSet = syscall.TCSETS
)

func tcget(fd uintptr) (*syscall.Termios, error) {
	var t syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlGet, uintptr(unsafe.Pointer(&t))); e != 0 {
		return nil, e
	}
	return &t, nil
}

func tcset(fd uintptr, t *syscall.Termios) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlSet, uintptr(unsafe.Pointer(t))); e != 0 {
		return e
	}
	return nil
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := tcget(f.Fd())
	return err == nil
}

// echoOff turns echo off on the terminal f (a typed line still ends with a
// newline on screen) and returns how to turn it back.
func echoOff(f *os.File) (restore func(), err error) {
	old, err := tcget(f.Fd())
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= syscall.ECHO
	t.Lflag |= syscall.ICANON | syscall.ECHONL
	if err := tcset(f.Fd(), &t); err != nil {
		return nil, err
	}
	return func() { tcset(f.Fd(), old) }, nil
}
