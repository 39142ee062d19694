//go:build unix

package runtime

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// A pipe gets a pollable copy: it reads what the pipe carries, done ends a
// pending read at once, and the pipe is blocking again afterwards.
func TestPollableInputPipe(t *testing.T) {
	noLeaks(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// os.Pipe's ends are already in the poller: make r look like a
	// process's inherited stdin, a blocking descriptor os.NewFile leaves
	// out of the poller.
	fd, err := syscall.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
	stdin := os.NewFile(uintptr(fd), "stdin")
	defer stdin.Close()

	in, done, ok := PollableInput(stdin)
	if !ok {
		t.Fatal("a pipe was not made pollable")
	}
	if _, err := w.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := in.Read(buf); err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := in.Read(buf)
		read <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read wait in the poller
	done()
	select {
	case err := <-read:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("pending read after done: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("done did not end a pending read")
	}
	if nonblocking(t, stdin) {
		t.Error("the pipe was left non-blocking")
	}
	// The original still reads the pipe.
	if _, err := w.Write([]byte("again")); err != nil {
		t.Fatal(err)
	}
	if n, err := stdin.Read(buf); err != nil || string(buf[:n]) != "again" {
		t.Errorf("the original reads %q, %v", buf[:n], err)
	}
}

// A file, and a pipe already non-blocking, are left alone.
func TestPollableInputOthers(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, _, ok := PollableInput(file); ok {
		t.Error("a regular file was made pollable")
	}
	if nonblocking(t, file) {
		t.Error("a regular file was made non-blocking")
	}
	r, w, err := os.Pipe() // non-blocking already
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	if _, _, ok := PollableInput(r); ok {
		t.Error("a non-blocking pipe was copied")
	}
	if _, err := io.WriteString(w, "x"); err != nil {
		t.Fatal(err)
	}
}
