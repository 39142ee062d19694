//go:build !unix

package inputfile

import "os"

// openNonblocking opens path for reading; outside Unix a file checked to be
// regular cannot turn into a pipe that blocks the open.
func openNonblocking(path string) (*os.File, error) { return os.Open(path) }
