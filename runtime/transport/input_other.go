//go:build !unix

package transport

import "os"

// PollableInput reports that f cannot be given to Go's network poller on
// this system; see input_unix.go.
func PollableInput(f *os.File, shared ...*os.File) (in *os.File, done func(), ok bool) {
	return nil, nil, false
}
