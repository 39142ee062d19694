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

// keepOwner gives the temporary file the owner and group of the file it
// replaces, where this process may (an operator editing as root must not
// leave the host's file owned by root); otherwise the file's owner changes
// to this process's user, as with any editor.
func keepOwner(f *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		f.Chown(int(st.Uid), int(st.Gid))
	}
}
