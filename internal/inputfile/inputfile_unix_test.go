//go:build unix

package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	os.Symlink(fifo, fifoLink)
	for path, kind := range map[string]string{
		"/dev/zero": "a character device", "/dev/null": "a character device",
		dir: "a directory", fifo: "a named pipe", fifoLink: "a named pipe",
	} {
		// A FIFO without a writer would block a plain open forever: the
		// test returning at all is half of what it checks.
		_, err := Read(path)
		e := limitOf(t, err)
		if e.Limit != NotRegular || e.Kind != kind {
			t.Errorf("Read(%s): %+v, want NotRegular %s", path, e, kind)
		}
		var pe *fs.PathError
		if !errors.As(err, &pe) || pe.Path != path {
			t.Errorf("Read(%s): %v does not name the file", path, err)
		}
		if !strings.Contains(err.Error(), kind+", not a regular file") || !strings.Contains(err.Error(), "16 MiB") {
			t.Errorf("Read(%s): message %q", path, err)
		}
	}
}

// A file that turns into a named pipe after it was checked is refused
// too, without waiting for a writer.
func TestReadRefusesAFileReplacedByAPipe(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.json")
	os.WriteFile(f, []byte("{}"), 0o644)
	testHookChecked = func(path string) {
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookChecked = nil }()
	_, err := Read(f)
	if e := limitOf(t, err); e.Limit != NotRegular || e.Kind != "a named pipe" {
		t.Errorf("%+v", e)
	}
}
