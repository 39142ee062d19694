//go:build unix

package testservers

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// sharedBuildDir returns the directory that the test binaries of this
// tree (its root's path names it) build their commands into, locked for the
// caller until unlock: `go test ./...` runs two test binaries at once, and
// both may build the same command. It is the user's own (mode 0700, owned
// by the user, not a symbolic link), or an error: a test must not run a
// binary that someone else could have put there.
func sharedBuildDir() (dir string, unlock func(), err error) {
	sum := sha256.Sum256([]byte(Root()))
	dir = filepath.Join(os.TempDir(), fmt.Sprintf("mcpc-test-bin-%d-%x", os.Getuid(), sum[:6]))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", nil, err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm() != 0o700 {
		return "", nil, fmt.Errorf("%s is not a private directory of this user", dir)
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return "", nil, err
	}
	// Closing the file releases the lock.
	return dir, func() { f.Close() }, nil
}

// goTestRun names the `go test` run that started this test binary: the pid
// of its parent and the parent's start time (field 22 of /proc/PID/stat,
// so that a pid used again later names another run), or "" when the parent
// is not the go command (a test binary run by hand, or by -exec's program).
// Every test binary of one `go test ./...` is a child of the same go
// command, and sees the same name.
func goTestRun() string {
	ppid := os.Getppid()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	if err != nil || string(comm) != "go\n" {
		return ""
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", ppid))
	if err != nil {
		return ""
	}
	start, ok := startTime(stat)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d %s", ppid, start)
}
