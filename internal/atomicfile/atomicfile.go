// Package atomicfile is mcpc's one atomic write (plans, tool locks,
// imports, tokens, edited configurations): the new content is written to a
// temporary file in the same directory, synced and renamed over the old
// one, so that a reader sees the old file or the new one, never a part; and
// a lock makes the read-modify-write of two mcpc processes take turns, so
// that neither loses the other's edit.
//
// It is a leaf: it imports only the standard library and golang.org/x/sys.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Replace writes data to path atomically. The file written is path itself
// (not a link's target: the caller resolves links). It keeps the mode
// (and, where it can, the owner) of the file it replaces, or gets newMode
// when there is none; a file nobody may write (mode 0444), or that this
// user may not write, is refused and left as it is. Just before the
// rename, check (if not nil) is called with the temporary file's path: an
// error from it stops the write (the temporary file is removed and path is
// untouched) and is returned as is — a compare-and-swap on the old content
// goes there.
//
// The temporary file, .NAME.tmp-*, holds the new content (secrets and
// all): it is 0600 until just before the rename, and the temporary files
// of path that a process killed while writing left behind are removed
// first.
func Replace(path string, data []byte, newMode fs.FileMode, check func(tmp string) error) error {
	dir := filepath.Dir(path)
	mode := newMode
	old, statErr := os.Stat(path)
	if statErr == nil {
		if err := writable(path, old); err != nil {
			return err
		}
		mode = old.Mode().Perm()
	}
	RemoveStaleTemps(path)
	f, err := os.CreateTemp(dir, tempPrefix(path)+"*") // mode 0600
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	tmp := f.Name()
	defer func() {
		f.Close()
		os.Remove(tmp) // after a successful rename there is nothing left to remove
	}()
	if err := holdTemp(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if check != nil {
		if err := check(tmp); err != nil {
			return err
		}
	}
	if old != nil {
		keepOwner(f, old) // before the mode: a change of owner clears set-id bits
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
	}
	if closeBeforeRename {
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", path, unwrapPath(err))
		}
	}
	// On Unix the temporary file stays open, and locked, until it has
	// become path: RemoveStaleTemps in another process skips it.
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

// writable refuses to replace the file path (old is its stat): replacing
// needs only the directory's permission, so a file that says it is not to
// be written would otherwise be written all the same (by root always).
func writable(path string, old fs.FileInfo) error {
	perm := old.Mode().Perm()
	if perm&0o222 == 0 {
		return fmt.Errorf("%s is read-only (mode %04o): make it writable to edit it: %w", path, perm, fs.ErrPermission)
	}
	if !mayWrite(path) {
		return fmt.Errorf("%s is not writable by this user (mode %04o): edit it as its owner, or make it writable for you: %w", path, perm, fs.ErrPermission)
	}
	return nil
}

// tempPrefix is the name, in path's directory, that every temporary file
// of path starts with.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// RemoveStaleTemps removes the temporary files of path (in its directory)
// that no process is writing: those a process killed while it wrote path
// left behind. A temporary file in use is locked by its writer until it
// has been renamed (on Windows, a file still open cannot be removed).
func RemoveStaleTemps(path string) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(path)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			removeIfUnused(filepath.Join(dir, e.Name()))
		}
	}
}

// LockPath is the lock file of path: beside it (in the directory of the
// name given, also when path is a link), hidden. It exists only while
// an editor holds or waits for the lock.
func LockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
}

// Lock waits until this process holds the lock of path (LockPath) and
// returns how to release it. The lock is the operating system's, on the
// lock file: a process that dies releases it, and the lock file it leaves
// is removed by the next editor's unlock. Every writer of a file that
// mcpc edits (mcpc config and ui, mcpc remote) takes it.
//
// The holder removes the lock file before it unlocks it; a process that
// was waiting on that file then holds the lock of a file that no longer
// is LockPath, so it checks, after locking, that the path still names the
// file it locked, and starts again if not.
func Lock(path string) (unlock func(), err error) {
	lp := LockPath(path)
	for {
		f, err := openLockFile(lp)
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", path, unwrapPath(err))
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if isAt(f, lp) {
			return func() { release(lp, f) }, nil
		}
		f.Close() // the holder removed it while this process waited
	}
}

// isAt reports whether f is the file at path (not followed through a link).
func isAt(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(held, now)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
