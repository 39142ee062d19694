package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The access token mcpc ui makes when no --token-env gives one: 32 random
// bytes in hex, printed once as the page's address with ?token=, and
// written to <dir>/ui-<port>.token (0600), where dir is
// $XDG_RUNTIME_DIR/mcpc, else mcpc in the user's cache directory: a
// directory only its owner may enter. The file is removed when mcpc ui
// ends.

// newUIToken is a fresh access token.
func newUIToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// uiTokenDir returns the directory of the token files, made (0700) if
// there is none. One that another user owns or others may enter is
// refused, and so is one in a directory that others may write to (they
// could put another in its place): the token would be theirs to read.
func uiTokenDir() (string, error) {
	var parent string
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		parent = x
	} else {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no directory for it: no $XDG_RUNTIME_DIR, and %v", err)
		}
		if err := os.MkdirAll(cache, 0o700); err != nil {
			return "", fmt.Errorf("cannot create %s: %v", cache, unwrapPath(err))
		}
		parent = cache
	}
	pfi, err := os.Stat(parent)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", parent, unwrapPath(err))
	}
	if why := othersMayReplace(pfi); why != "" {
		return "", fmt.Errorf("%s %s", parent, why)
	}
	dir := filepath.Join(parent, "mcpc")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cannot create %s: %v", dir, unwrapPath(err))
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", dir, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	if why := notPrivate(fi); why != "" {
		return "", fmt.Errorf("%s %s", dir, why)
	}
	return dir, nil
}

// writeUIToken writes tok to the token file of the page on port, 0600,
// atomically (a stale file of an earlier mcpc ui is replaced). It returns
// the file's path and a function that removes it if it still holds tok.
func writeUIToken(port int, tok string) (string, func(), error) {
	dir, err := uiTokenDir()
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("ui-%d.token", port))
	f, err := os.CreateTemp(dir, ".ui-*.token")
	if err != nil {
		return "", nil, fmt.Errorf("cannot write in %s: %v", dir, unwrapPath(err))
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename there is nothing left to remove
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(tok + "\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return "", nil, fmt.Errorf("cannot write %s: %v", path, unwrapPath(err))
	}
	return path, func() {
		if b, err := os.ReadFile(path); err == nil && string(b) == tok+"\n" {
			_ = os.Remove(path)
		}
	}, nil
}
