package testservers

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// OpenPTY returns the two ends of a new pseudo-terminal (the test is
// skipped where there are none): a test types into master what a reader of
// slave gets as typed at a terminal, and reads from master what the
// terminal echoes.
func OpenPTY(t testing.TB) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open the pty: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// Echoes reports whether the terminal f echoes what is typed (false also
// when f is no terminal).
func Echoes(f *os.File) bool {
	var t syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		return false
	}
	return t.Lflag&syscall.ECHO != 0
}
