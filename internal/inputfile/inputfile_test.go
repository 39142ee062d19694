package inputfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func limitOf(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a limit", err)
	}
	return e
}

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.json")
	os.WriteFile(f, []byte(`{"a": 1}`), 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(f, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{f, link} {
		data, err := Read(p)
		if err != nil || string(data) != `{"a": 1}` {
			t.Errorf("Read(%s) = %q, %v", p, data, err)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestReadRefusesAFileOverTheCap(t *testing.T) {
	f := filepath.Join(t.TempDir(), "big")
	os.WriteFile(f, bytes.Repeat([]byte("x"), 1025), 0o644)
	_, err := ReadMax(f, 1024)
	if e := limitOf(t, err); e.Limit != TooLarge || e.Max != 1024 {
		t.Errorf("%+v", e)
	}
	if !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "larger than 1 KiB") {
		t.Errorf("message %q", err)
	}
	if data, err := ReadMax(f, 1025); err != nil || len(data) != 1025 {
		t.Errorf("a file at the cap: %d bytes, %v", len(data), err)
	}
	// The default cap.
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxSize+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big); limitOf(t, err).Limit != TooLarge || !strings.Contains(err.Error(), "16 MiB") {
		t.Errorf("a file over 16 MiB: %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 1 << 20: "1 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTrimBOM(t *testing.T) {
	for in, want := range map[string]string{"\uFEFF{}": "{}", "{}": "{}", "\uFEFF\uFEFF{}": "\uFEFF{}", "": "", "\xEF\xBB": "\xEF\xBB"} {
		if got := string(TrimBOM([]byte(in))); got != want {
			t.Errorf("TrimBOM(%q) = %q, want %q", in, got, want)
		}
	}
}

// A file is read into one buffer of about its size: io.ReadAll grows its
// buffer step by step, allocating about twice the file's size, which at the
// size of a large generated configuration is tens of MB of garbage before
// the compilation has begun.
func TestReadAllocatesAboutTheFileSize(t *testing.T) {
	const size = 3_000_001
	f := filepath.Join(t.TempDir(), "big.json")
	want := bytes.Repeat([]byte("x"), size)
	if err := os.WriteFile(f, want, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err := Read(f)
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("Read: %d bytes, %v", len(data), err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > size*5/4 {
		t.Errorf("Read of %d bytes allocated %d bytes", size, allocated)
	}
}
