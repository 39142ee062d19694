package remote

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
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

// On a terminal the key is read with echo off, and echo is back on after.
func TestReadKeyFromATerminalDoesNotEcho(t *testing.T) {
	master, slave := openPTY(t)
	if !isTerminal(slave) {
		t.Fatal("the pty is not a terminal")
	}
	var mu sync.Mutex
	var echoed bytes.Buffer
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			echoed.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var prompt bytes.Buffer
	done := make(chan struct{})
	var h Headers
	var err error
	go func() {
		h, err = ReadKey(slave, &prompt, "notes")
		close(done)
	}()
	// Wait until echo is off before typing.
	testservers.WaitUntil(t, "echo is turned off", func() bool {
		tio, _ := tcget(slave.Fd())
		return tio != nil && tio.Lflag&syscall.ECHO == 0
	})
	master.Write([]byte(canaryToken + "\n"))
	testservers.Recv(t, "ReadKey to return", done)
	if err != nil || h["Authorization"] != "Bearer "+canaryToken {
		t.Fatalf("%v %v", h, err)
	}
	// Echo is on again: a line typed now comes back, after anything the
	// terminal echoed before it.
	master.Write([]byte("typed-after\n"))
	testservers.WaitUntil(t, "the line typed after the key is echoed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(echoed.String(), "typed-after")
	})
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(echoed.String(), "CANARY") {
		t.Errorf("the key was echoed: %q", echoed.String())
	}
	if !strings.Contains(prompt.String(), "Key for notes") {
		t.Errorf("prompt %q", prompt.String())
	}
	if tio, _ := tcget(slave.Fd()); tio == nil || tio.Lflag&syscall.ECHO == 0 {
		t.Error("echo was not turned back on")
	}
}
