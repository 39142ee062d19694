//go:build !linux

package remote

import (
	"errors"
	"os"
)

// isTerminal reports whether f is a character device; on these systems mcpc
// cannot turn echo off, so ReadKey refuses to read a key typed there.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func echoOff(*os.File) (func(), error) {
	return nil, errors.New("not supported on this system")
}
