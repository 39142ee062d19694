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

func keepOwner(*os.File, fs.FileInfo) {}
