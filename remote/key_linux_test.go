package remote

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
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
	deadline := time.Now().Add(5 * time.Second)
	for {
		tio, _ := tcget(slave.Fd())
		if tio != nil && tio.Lflag&syscall.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("echo was not turned off")
		}
		time.Sleep(5 * time.Millisecond)
	}
	master.Write([]byte(canaryToken + "\n"))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ReadKey did not return")
	}
	if err != nil || h["Authorization"] != "Bearer "+canaryToken {
		t.Fatalf("%v %v", h, err)
	}
	time.Sleep(50 * time.Millisecond)
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
