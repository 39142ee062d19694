//go:build !linux

package term

import (
	"errors"
	"os"
)

// IsTerminal reports whether f is a character device; on these systems mcpc
// cannot turn echo off, so ReadWithoutEcho refuses to read from it.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func echoOff(*os.File) (func(), error) {
	return nil, errors.New("not supported on this system")
}
