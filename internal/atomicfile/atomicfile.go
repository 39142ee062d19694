// Package atomicfile replaces a file that others read and edit: the new
// content is written to a temporary file in the same directory, synced and
// renamed over the old one, so that a reader sees the old file or the new
// one, never a part; and a lock file makes the read-modify-write of two
// mcpc processes take turns, so that neither loses the other's edit.
//
// It is a leaf: it imports only the standard library and golang.org/x/sys.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Replace writes data to path atomically. The temporary file gets the mode
// (and, where it can, the owner) of the file it replaces, or newMode when
// there is none. Just before the rename, check (if not nil) is called with
// the temporary file's path: an error from it stops the write (the
// temporary file is removed and path is untouched) and is returned as is —
// a compare-and-swap on the old content goes there.
func Replace(path string, data []byte, newMode fs.FileMode, check func(tmp string) error) error {
	dir := filepath.Dir(path)
	mode := newMode
	old, statErr := os.Stat(path)
	if statErr == nil {
		mode = old.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := write(f, data, mode, old); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if check != nil {
		if err := check(tmp); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	// Make the rename itself durable.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// write fills the temporary file f and closes it.
func write(f *os.File, data []byte, mode fs.FileMode, old fs.FileInfo) error {
	err := f.Chmod(mode)
	if err == nil && old != nil {
		keepOwner(f, old)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// LockPath is the lock file of path: beside it, hidden, never removed
// (removing a lock file lets a third process lock a new file while a
// second still holds the old one).
func LockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
}

// Lock waits until this process holds the lock of path (LockPath) and
// returns how to release it. The lock is the operating system's: it is
// released when the process ends, so a crashed editor leaves nothing to
// clean up.
func Lock(path string) (unlock func(), err error) {
	lp := LockPath(path)
	f, err := openLockFile(lp)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, unwrapPath(err))
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
