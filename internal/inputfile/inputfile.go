// Package inputfile reads the files mcpc takes as input (configuration,
// env files, deny-lists, plans, locks, servers.json) with bounds: a file
// must be a regular file (after symbolic links) no bigger than a size cap.
// Without them /dev/zero is read until memory runs out and a named pipe
// blocks the command forever.
package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxSize bounds every input file: no configuration, env file, plan or
// lock comes near it, and reading it whole stays cheap.
const MaxSize = 16 << 20

// Limit names the bound a file broke.
type Limit int

const (
	// NotRegular: a directory, device, named pipe or socket.
	NotRegular Limit = iota + 1
	// TooLarge: more bytes than the size cap.
	TooLarge
)

// Error is a file refused by a limit. Read returns it inside an
// *fs.PathError, which names the file.
type Error struct {
	Limit Limit
	// Kind says what the file is, for NotRegular ("a named pipe").
	Kind string
	// Max is the size cap that applied, in bytes.
	Max int64
}

func (e *Error) Error() string {
	if e.Limit == NotRegular {
		return fmt.Sprintf("it is %s, not a regular file; mcpc reads inputs only from regular files of at most %s", e.Kind, Size(e.Max))
	}
	return fmt.Sprintf("it is larger than %s, the limit for this input; it is not read", Size(e.Max))
}

// Size writes a byte count as people read it: 16 MiB, 1 MiB, 512 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read reads the input file path, refusing anything but a regular file of
// at most MaxSize bytes. A refusal is an *fs.PathError wrapping an *Error.
func Read(path string) ([]byte, error) { return ReadMax(path, MaxSize) }

// ReadMax is Read with a smaller cap, for inputs that have their own.
//
// The file is checked before it is opened (a named pipe must not be opened
// for reading in blocking mode: that waits for a writer), opened without
// blocking, checked again (it may have been replaced in between), and read
// through a limit, since a file can grow while it is read.
func ReadMax(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(fi, max); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if testHookChecked != nil {
		testHookChecked(path)
	}
	f, err := openNonblocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(fi, max); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	data, err := readAll(io.LimitReader(f, max+1), fi.Size())
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: &Error{Limit: TooLarge, Max: max}}
	}
	return data, nil
}

// readAll is io.ReadAll into a buffer sized for the file's size: ReadAll
// grows by doubling, and the file's text is held as long as diagnostics
// may quote it (up to twice its size, for a large file).
func readAll(r io.Reader, size int64) ([]byte, error) {
	// bytes.MinRead of room at the end: the read that finds the end of the
	// file needs it, and a file that grew since its size was taken still
	// reads whole.
	buf := bytes.NewBuffer(make([]byte, 0, max(size, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// testHookChecked, when set, runs between the first check and the open
// (tests replace the file there).
var testHookChecked func(path string)

func check(fi fs.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return &Error{Limit: NotRegular, Kind: Kind(fi.Mode()), Max: max}
	}
	if fi.Size() > max {
		return &Error{Limit: TooLarge, Max: max}
	}
	return nil
}

// Kind names the kind of file a mode is, for messages: "a directory",
// "a named pipe", ….
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a plain file"
}

// IsLimit reports whether err is a refusal by a limit (not an I/O error or
// a missing file).
func IsLimit(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// bom is the UTF-8 byte order mark that Windows editors and the .NET host
// write at the start of text files.
var bom = []byte{0xEF, 0xBB, 0xBF}

// TrimBOM drops one leading UTF-8 byte order mark. It marks the encoding
// and is not part of the text, as for the .NET host, which accepts it in
// JSON and env files alike: positions count from the character after it.
func TrimBOM(data []byte) []byte { return bytes.TrimPrefix(data, bom) }

// ReadText is Read for a text input (JSON, CUE, an env file): its content
// without a leading byte order mark.
func ReadText(path string) ([]byte, error) {
	data, err := Read(path)
	return TrimBOM(data), err
}
