package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Replace keeps the file's mode, leaves no temporary file, and a check that
// fails leaves the file as it was.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o640)
	var seen []byte
	var tmpMode os.FileMode
	err := Replace(p, []byte("new"), 0o600, func(tmp string) error {
		seen, _ = os.ReadFile(tmp)
		if fi, err := os.Stat(tmp); err == nil {
			tmpMode = fi.Mode().Perm()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(seen) != "new" {
		t.Errorf("the check saw %q in the temporary file", seen)
	}
	// The temporary file holds the new content, secrets and all: private
	// until it becomes the file (a writer killed before leaves it 0600).
	if tmpMode != 0o600 {
		t.Errorf("the temporary file has mode %04o while written, want 0600", tmpMode)
	}
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "new" || fi.Mode().Perm() != 0o640 {
		t.Errorf("content %q mode %v", got, fi.Mode().Perm())
	}
	stop := errors.New("changed")
	if err := Replace(p, []byte("newer"), 0o600, func(string) error { return stop }); err != stop {
		t.Errorf("err %v, want the check's error", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Errorf("a refused write changed the file: %q", got)
	}
	// A new file gets newMode.
	q := filepath.Join(dir, "fresh.json")
	if err := Replace(q, []byte("x"), 0o600, nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(q); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", fi.Mode().Perm())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// Editors that read, change and write the file under Lock lose no edit:
// 8 goroutines (each with its own lock file descriptor, as separate
// processes have) append 10 lines each; all 80 are there at the end, and
// the lock file, removed by each holder, is gone.
func TestLockSerializesReadModifyWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(p, nil, 0o600)
	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				unlock, err := Lock(p)
				if err != nil {
					errs <- err
					return
				}
				old, err := os.ReadFile(p)
				if err == nil {
					err = Replace(p, append(old, fmt.Sprintf("%d-%d\n", g, i)...), 0o600, nil)
				}
				unlock()
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if n := bytes.Count(got, []byte("\n")); n != 80 {
		t.Errorf("%d of 80 lines are there:\n%s", n, got)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A file nobody may write is refused (by its mode bits: root may write
// anything) and left as it is; so is one this user may not write.
func TestReplaceRefusesAReadOnlyFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte("old"), 0o444); err != nil {
		t.Fatal(err)
	}
	err := Replace(p, []byte("new"), 0o600, nil)
	if err == nil || err.Error() != p+" is read-only (mode 0444): make it writable to edit it: permission denied" || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("err %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("a read-only file was replaced: %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode %04o", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A lock leaves nothing behind: the lock file exists while it is held and
// is gone after unlock; one a killed holder left is taken and removed.
func TestLockLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	unlock, err := Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(LockPath(p)); err != nil {
		t.Errorf("no lock file while the lock is held: %v", err)
	}
	unlock()
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left behind after unlock: %v", left)
	}
	// What a holder killed with SIGKILL leaves: the file, unlocked.
	if err := os.WriteFile(LockPath(p), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	unlock, err = Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Lstat(LockPath(p)); err == nil {
		t.Error("a lock file left by a killed holder stays")
	}
}

// A Replace of the file while another Replace of it is between writing its
// temporary file and renaming it (here: inside its check) leaves that
// temporary file alone: only files no writer holds are stale. Both land,
// in turn, and nothing is left.
func TestReplaceKeepsATemporaryFileInUse(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var inner error
	err := Replace(p, []byte("outer"), 0o600, func(tmp string) error {
		inner = Replace(p, []byte("inner"), 0o600, nil)
		if _, err := os.Stat(tmp); err != nil {
			return fmt.Errorf("the outer temporary file was removed: %w", err)
		}
		return nil
	})
	if err != nil || inner != nil {
		t.Fatalf("outer %v, inner %v", err, inner)
	}
	if got, _ := os.ReadFile(p); string(got) != "outer" {
		t.Errorf("content %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// The lock file is not followed through a symbolic link.
func TestLockRefusesALink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, LockPath(p)); err != nil {
		t.Skip(err)
	}
	if unlock, err := Lock(p); err == nil {
		unlock()
		t.Fatal("a lock file that is a link was used")
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the link's target was created")
	}
}
