//go:build windows

package atomicfile

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

func lockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

func unlockFile(f *os.File) {
	var ol windows.Overlapped
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// release unlocks and closes the lock file, then removes it: Windows does
// not remove a file that another process has open (Go opens files without
// FILE_SHARE_DELETE), so the file stays while someone waits on it.
func release(path string, f *os.File) {
	unlockFile(f)
	f.Close()
	os.Remove(path)
}

// holdTemp: an open temporary file cannot be removed on Windows anyway.
func holdTemp(*os.File) error { return nil }

// closeBeforeRename: Windows does not rename a file that is open.
const closeBeforeRename = true

// removeIfUnused removes the temporary file path; Windows refuses while
// its writer has it open.
func removeIfUnused(path string) { os.Remove(path) }

// mayWrite: the read-only attribute (mode 0444) is what Windows has; the
// rest is the file's ACL, which the rename meets.
func mayWrite(string) bool { return true }

func keepOwner(*os.File, fs.FileInfo) {}
