//go:build unix

package transport

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	if err := rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return flags&unix.O_NONBLOCK != 0
}

// blockingCopy returns a blocking descriptor of the same open file as f,
// as a process inherits its stdin: os.NewFile leaves it out of the poller.
// The open file's mode is shared, so f becomes blocking too.
func blockingCopy(t *testing.T, f *os.File) *os.File {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(raw uintptr) { fd, dupErr = unix.Dup(int(raw)) }); err != nil || dupErr != nil {
		t.Fatal(err, dupErr)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
	c := os.NewFile(uintptr(fd), "stdin")
	t.Cleanup(func() { c.Close() })
	return c
}

// passes writes text to w and checks that r reads it.
func passes(t *testing.T, w io.Writer, r io.Reader, text string) {
	t.Helper()
	if _, err := io.WriteString(w, text); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(text)+16)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != text {
		t.Fatalf("read %q, %v; want %q", buf[:n], err, text)
	}
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
	stdin := blockingCopy(t, r) // os.Pipe's ends are in the poller already

	in, done, ok := PollableInput(stdin)
	if !ok {
		t.Fatal("a pipe was not made pollable")
	}
	passes(t, w, in, "hello\n")
	buf := make([]byte, 16)
	read := make(chan error, 1)
	go func() {
		_, err := in.Read(buf)
		read <- err
	}()
	eventually(t, "the read waits in the poller", func() bool { return waitsInPoller("TestPollableInputPipe.func") })
	done()
	if err := testservers.Recv(t, "done to end a pending read", read); !errors.Is(err, os.ErrClosed) {
		t.Errorf("pending read after done: %v", err)
	}
	if nonblocking(t, stdin) {
		t.Error("the pipe was left non-blocking")
	}
	passes(t, w, stdin, "again") // the original still reads the pipe
}

// waitsInPoller reports whether a goroutine running fn (a function name, or
// part of one) is parked in the network poller.
func waitsInPoller(fn string) bool {
	buf := make([]byte, 1<<20)
	for _, g := range strings.Split(string(buf[:goruntime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "[IO wait") && strings.Contains(g, fn) {
			return true
		}
	}
	return false
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

// A socket works as a pipe does, unless it is also a descriptor that must
// stay blocking, such as stdout of a process inetd started.
func TestPollableInputSocket(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, peer := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "peer")
	defer ours.Close()
	defer peer.Close()
	stdin, stdout := blockingCopy(t, ours), blockingCopy(t, ours)
	if _, _, ok := PollableInput(stdin, stdout); ok {
		t.Fatal("a socket that is also stdout was made non-blocking")
	}
	if nonblocking(t, stdout) {
		t.Error("stdout, the same socket, was left non-blocking")
	}
	other, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	in, done, ok := PollableInput(stdin, other)
	if !ok {
		t.Fatal("a socket was not made pollable")
	}
	passes(t, peer, in, "over a socket")
	done()
	if nonblocking(t, stdin) {
		t.Error("the socket was left non-blocking")
	}
}
