//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// openNonblocking opens path for reading without waiting for a writer,
// should it have become a named pipe after it was checked.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
