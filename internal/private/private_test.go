package private

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fallback points Dir at a fresh temporary directory as <temp>, with no
// XDG_RUNTIME_DIR, and returns the directory Dir falls back to there.
func fallback(t *testing.T) string {
	t.Setenv("XDG_RUNTIME_DIR", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return filepath.Join(tmp, fmt.Sprintf("mcpc-%d", os.Getuid()))
}

// Dir makes $XDG_RUNTIME_DIR/mcpc (0700), or <temp>/mcpc-<uid> without a
// usable XDG_RUNTIME_DIR.
func TestDirCreates(t *testing.T) {
	x := t.TempDir()
	os.Chmod(x, 0o700) // as XDG_RUNTIME_DIR is
	t.Setenv("XDG_RUNTIME_DIR", x)
	if _, err := Dir(false); !errors.Is(err, ErrNoDir) {
		t.Errorf("Dir(false) before any: %v, want ErrNoDir", err)
	}
	dir, err := Dir(true)
	if err != nil || dir != filepath.Join(x, "mcpc") {
		t.Fatalf("Dir(true) = %q, %v", dir, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v, want 0700", dir, err, fi)
	}

	// An XDG_RUNTIME_DIR open to others is not the user's runtime
	// directory: the fallback is used.
	want := fallback(t)
	open := t.TempDir()
	os.Chmod(open, 0o777)
	t.Setenv("XDG_RUNTIME_DIR", open)
	if dir, err := Dir(true); err != nil || dir != want {
		t.Errorf("with XDG_RUNTIME_DIR mode 0777: Dir = %q, %v, want %s", dir, err, want)
	}
}

// A fallback directory that another user made first, or that is open to
// others, or that is a symbolic link, is refused with what to do; never
// used.
func TestDirRefusesForeignOrOpen(t *testing.T) {
	want := fallback(t)
	if err := os.Mkdir(want, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(want, 0o777)
	if _, err := Dir(true); err == nil || !strings.Contains(err.Error(), want+" is open to other users (mode 0777)") || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("mode 0777: %v", err)
	}
	os.Chmod(want, 0o730)
	if _, err := Dir(false); err == nil || !strings.Contains(err.Error(), "open to other users (mode 0730)") {
		t.Errorf("mode 0730: %v", err)
	}
	os.Remove(want)
	target := t.TempDir()
	if err := os.Symlink(target, want); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(true); err == nil || !strings.Contains(err.Error(), "is not a directory (a symbolic link)") {
		t.Errorf("a symbolic link: %v", err)
	}
	os.Remove(want)

	if os.Getuid() != 0 {
		t.Skip("making a directory of another user needs root")
	}
	if err := os.Mkdir(want, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(want, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Dir(true); err == nil || !strings.Contains(err.Error(), want+" belongs to uid 65534, not to you") || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
		t.Errorf("another user's: %v", err)
	}
}

// A token file is 0600 and read back; one open to others, another user's,
// or a symbolic link is refused.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t")
	tok, err := NewToken()
	if err != nil || len(tok) != 64 {
		t.Fatalf("NewToken: %q %v", tok, err)
	}
	if other, _ := NewToken(); other == tok {
		t.Fatal("two tokens are the same")
	}
	if err := WriteToken(path, tok); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%v %v, want 0600", err, fi)
	}
	if got, err := ReadToken(path); err != nil || got != tok {
		t.Errorf("ReadToken = %q, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	os.Chmod(path, 0o640)
	if _, err := ReadToken(path); err == nil || !strings.Contains(err.Error(), "open to other users (mode 0640)") {
		t.Errorf("0640: %v", err)
	}
	// Rewriting makes it 0600 again.
	if err := WriteToken(path, tok); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten: %v", fi.Mode())
	}
	link := filepath.Join(dir, "link")
	os.Symlink(path, link)
	if _, err := ReadToken(link); err == nil || !strings.Contains(err.Error(), "not a regular file (a symbolic link)") {
		t.Errorf("symbolic link: %v", err)
	}
	if _, err := ReadToken(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	RemoveToken(path, "another")
	if _, err := os.Stat(path); err != nil {
		t.Errorf("removed while holding another token: %v", err)
	}
	RemoveToken(path, tok)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("not removed: %v", err)
	}
	if os.Getuid() == 0 {
		WriteToken(path, tok)
		os.Chown(path, 65534, 65534)
		if _, err := ReadToken(path); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("another user's: %v", err)
		}
	}
}

// ListenUnix makes a 0600 socket, replaces a stale one, refuses one in
// use and a file that is no socket, and removes its socket on Close.
func TestListenUnix(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gw.sock")
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("%v %v, want a socket 0600", err, fi)
	}
	if ln.Addr().String() != path {
		t.Errorf("Addr %s", ln.Addr())
	}
	accepted := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
	if _, err := ListenUnix(path); !errors.Is(err, ErrInUse) {
		t.Errorf("in use: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	ln.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the socket outlived Close: %v", err)
	}

	// A stale socket (its listener gone, the file kept) is replaced.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	ln, err = ListenUnix(path)
	if err != nil {
		t.Fatalf("stale: %v", err)
	}
	ln.Close()

	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("keep"), 0o600)
	if _, err := ListenUnix(file); err == nil || !strings.Contains(err.Error(), "is a regular file, not a socket") {
		t.Errorf("a regular file: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the file was replaced: %q", b)
	}
}

func TestSameToken(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	for got, want := range map[string]bool{tok: true, "": false, tok + "x": false, tok[:31]: false, "1" + tok[1:]: false} {
		if SameToken(got, tok) != want {
			t.Errorf("SameToken(%q) = %v, want %v", got, !want, want)
		}
	}
}
