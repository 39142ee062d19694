//go:build unix

package atomicfile

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openLockFile opens (creating) the lock file, not through a symbolic link.
func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
}

func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// release removes the lock file, then unlocks it: a process waiting on it
// finds, once it holds it, that it is gone (Lock's check), and no process
// can lock a file at the path while this one still holds it.
func release(path string, f *os.File) {
	os.Remove(path)
	unlockFile(f)
	f.Close()
}

// holdTemp locks the temporary file f for as long as it is open, so that
// RemoveStaleTemps in another process leaves it alone.
func holdTemp(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

// closeBeforeRename: a file open (and locked) may be renamed on Unix.
const closeBeforeRename = false

// removeIfUnused removes the temporary file path unless its writer still
// holds it (holdTemp): a writer that died released its lock.
func removeIfUnused(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // being written
	}
	// Its writer may have renamed it (it is the edited file now) between
	// the directory listing and the open: remove only what still has the
	// temporary name.
	if isAt(f, path) {
		os.Remove(path)
	}
}

// mayWrite reports whether this process may write path, as the kernel
// judges it (root may write any file a mode allows anyone to).
func mayWrite(path string) bool {
	return unix.Access(path, unix.W_OK) == nil
}

// keepOwner gives the temporary file the owner and group of the file it
// replaces, where this process may (an operator editing as root must not
// leave the host's file owned by root); otherwise the file's owner changes
// to this process's user, as with any editor.
func keepOwner(f *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		f.Chown(int(st.Uid), int(st.Gid))
	}
}
