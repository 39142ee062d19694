//go:build !unix && !windows

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
)

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

func lockFile(*os.File) error {
	return errors.New("this system has no file locks mcpc can use")
}

func unlockFile(*os.File) {}

func release(path string, f *os.File) {
	f.Close()
	os.Remove(path)
}

func holdTemp(*os.File) error { return nil }

const closeBeforeRename = true

// removeIfUnused: without file locks a temporary file in use cannot be
// told from one left behind, so none is removed.
func removeIfUnused(string) {}

func mayWrite(string) bool { return true }

func keepOwner(*os.File, fs.FileInfo) {}
