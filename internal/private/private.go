// Package private keeps what only the user who runs mcpc may read or
// connect to: its runtime directory ($XDG_RUNTIME_DIR/mcpc, else
// <temp>/mcpc-<uid>), the token files in it, and owner-only unix sockets.
// Every directory and file it uses is checked to be the user's own and
// closed to others; one that is not is refused with an error that names it
// and says what to do, never used.
package private

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpc-dev/mcpc/internal/atomicfile"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
)

// ErrNoDir is the runtime directory not existing yet (Dir without create):
// no mcpc made it, so nothing of mcpc's is there.
var ErrNoDir = errors.New("no mcpc made it yet")

// ErrInUse is a unix socket that something answers on (ListenUnix).
var ErrInUse = errors.New("something listens on it")

// Dir returns the user's runtime directory for mcpc: $XDG_RUNTIME_DIR/mcpc
// when XDG_RUNTIME_DIR names a directory of the user's that others cannot
// enter (as the XDG Base Directory specification has it), else
// <temp>/mcpc-<uid>. With create it is made (0700) if missing. Either must
// be a directory (not a symbolic link) owned by the user with no access
// for others: a fallback under /tmp that another user made first (to read
// or replace what mcpc puts there) is refused, with what to do.
func Dir(create bool) (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("mcpc-%d", os.Getuid()))
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) && checkDir(x) == nil {
		dir = filepath.Join(x, "mcpc")
	}
	if create {
		err := os.Mkdir(dir, 0o700)
		switch {
		case err == nil:
			// The umask may have taken more than group and other access.
			if err := os.Chmod(dir, 0o700); err != nil {
				return "", fmt.Errorf("cannot make %s owner-only: %v", dir, unwrapPath(err))
			}
		case !errors.Is(err, fs.ErrExist):
			return "", fmt.Errorf("cannot create mcpc's runtime directory %s: %v", dir, unwrapPath(err))
		}
	}
	if err := checkDir(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no runtime directory %s: %w", dir, ErrNoDir)
		}
		return "", err
	}
	return dir, nil
}

// checkDir says why dir is not a private directory of the user's, nil if
// it is.
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil {
		return fmt.Errorf("cannot read mcpc's runtime directory %s: %v", dir, unwrapPath(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("mcpc's runtime directory %s is not a directory (%s): remove it, or set XDG_RUNTIME_DIR to a directory of your own with mode 0700", dir, inputfile.Kind(fi.Mode()))
	}
	if err := checkOwner(dir, fi, "remove it (as its owner or root), or set XDG_RUNTIME_DIR to a directory of your own with mode 0700"); err != nil {
		return err
	}
	if checksMode && fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("mcpc's runtime directory %s is open to other users (mode %04o): its sockets and tokens could be read or replaced; chmod 700 %s", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// checkOwner refuses a file that is not the user's; todo says what to do.
func checkOwner(path string, fi fs.FileInfo, todo string) error {
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d): another user may have made it to read or replace what mcpc keeps there; %s", path, uid, os.Getuid(), todo)
	}
	return nil
}

// Owned reports whether path (not followed if a symbolic link) belongs to
// the user.
func Owned(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	uid, ok := owner(fi)
	return !ok || uid == os.Getuid()
}

// NewToken returns a random token: 32 bytes from crypto/rand, in hex.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("cannot make a random token: %v", err)
	}
	return hex.EncodeToString(b), nil
}

// SameToken compares a presented token with the expected one in constant
// time: of their SHA-256 digests, so that not even the length shows.
func SameToken(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// maxToken bounds a token file.
const maxToken = 4 << 10

// WriteToken writes tok to path, mode 0600, atomically (atomicfile.Replace):
// a reader finds the old token or the new one. path's directory must be
// private (Dir). A file there that is not 0600 (mcpc makes none) is
// removed first, since Replace keeps the mode of what it replaces.
func WriteToken(path, tok string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode() != 0o600 {
		os.Remove(path)
	}
	if err := atomicfile.Replace(path, []byte(tok+"\n"), 0o600, nil); err != nil {
		return fmt.Errorf("cannot write the token file: %v", err)
	}
	return nil
}

// ReadToken reads the token file path: a regular file (not a symbolic
// link) of the user's, closed to others, of at most 4 KiB. A missing file
// is an fs.ErrNotExist error.
func ReadToken(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("cannot read the token file %s: %v", path, unwrapPath(err))
	}
	switch {
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("the token file %s is not a regular file (%s): remove it", path, inputfile.Kind(fi.Mode()))
	case checksMode && fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("the token file %s is open to other users (mode %04o): remove it, and use a new token", path, fi.Mode().Perm())
	case fi.Size() > maxToken:
		return "", fmt.Errorf("the token file %s is larger than %d bytes: it holds no token of mcpc's", path, maxToken)
	}
	if err := checkOwner(path, fi, "remove it"); err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the token file %s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxToken))
	if err != nil {
		return "", fmt.Errorf("cannot read the token file %s: %v", path, unwrapPath(err))
	}
	return strings.TrimSpace(string(b)), nil
}

// RemoveToken removes the token file path if it still holds tok: a later
// owner of the file (another gateway on the same address) keeps its own.
func RemoveToken(path, tok string) {
	if got, err := ReadToken(path); err == nil && got == tok {
		os.Remove(path)
	}
}

// ListenUnix listens on a unix socket at path that only the user can
// connect to (mode 0600) from the first moment: it is made in a private
// directory beside path, made owner-only there and renamed to path. A
// socket left at path by a process that is gone is replaced; one that
// something answers on is not (ErrInUse), nor a file that is no socket.
// Closing the listener removes the socket, if it is still the one it
// made.
func ListenUnix(path string) (net.Listener, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(abs); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is %s, not a socket: mcpc does not replace it", abs, inputfile.Kind(fi.Mode()))
		}
		if conn, err := net.DialTimeout("unix", abs, time.Second); err == nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", abs, ErrInUse)
		}
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(abs), ".m")
	if err != nil {
		return nil, fmt.Errorf("cannot make the socket %s: %v", abs, unwrapPath(err))
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %v", abs, err)
	}
	ln.SetUnlinkOnClose(false) // the file moves: Close removes it where it is
	var fi fs.FileInfo
	err = os.Chmod(tmp, 0o600)
	if err == nil {
		err = os.Rename(tmp, abs)
	}
	if err == nil {
		fi, err = os.Lstat(abs)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("cannot make the socket %s: %v", abs, unwrapPath(err))
	}
	return &unixListener{UnixListener: ln, path: abs, made: fi}, nil
}

// unixListener removes its socket file when closed.
type unixListener struct {
	*net.UnixListener
	path string
	made fs.FileInfo
}

func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	if fi, serr := os.Lstat(l.path); serr == nil && os.SameFile(fi, l.made) {
		os.Remove(l.path)
	}
	return err
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
