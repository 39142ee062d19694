package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
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
	err := Replace(p, []byte("new"), 0o600, func(tmp string) error {
		seen, _ = os.ReadFile(tmp)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(seen) != "new" {
		t.Errorf("the check saw %q in the temporary file", seen)
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
// processes have) append 10 lines each; all 80 are there at the end.
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
