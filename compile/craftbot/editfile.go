package craftbot

import (
	"bytes"
	"errors"
	"path/filepath"

	"github.com/mcpc-dev/mcpc/internal/atomicfile"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/redact"
)

// EditFile is Apply on the file at path, the one way mcpc edits
// mcp_config.json (mcpc config, mcpc ui): under the file's lock it reads the
// file, applies ed and, unless the edit is refused or changes nothing,
// writes the result atomically (temporary file, rename; mode, owner and a
// symbolic link kept), so that two edits at the same time both land. It
// returns the bytes it read and the Change. Errors: a *ReadError (the file
// cannot be read; EditFile never creates it), an *EditError, ErrChanged,
// or the lock's or the write's error (a read-only file is refused).
func EditFile(path string, ed Edit, opts Options) (before []byte, ch *Change, err error) {
	// Edit the file a link points to, and keep the link. The lock is in
	// the directory of path, the config's own (nothing is left beside the
	// target: only the temporary file of the rename, for the time of it).
	real := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		real = p
	}
	unlock, err := atomicfile.Lock(path)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, nil, &ReadError{Path: path, Err: err}
	}
	ch, err = Apply(path, data, ed, opts)
	if err != nil || ch.Refused != "" || ch.Unchanged {
		return data, ch, err
	}
	err = atomicfile.Replace(real, ch.Data, 0o600, func(string) error {
		now, err := inputfile.Read(real)
		if err != nil || !bytes.Equal(now, data) {
			return ErrChanged
		}
		return nil
	})
	return data, ch, err
}

// ReadError is a file EditFile could not read.
type ReadError struct {
	Path string
	Err  error
}

func (e *ReadError) Error() string { return "cannot read " + e.Path + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// ErrChanged: the file changed between reading and writing it, although
// mcpc holds the lock: someone else (the host's /mcp, an editor) wrote it.
var ErrChanged = errors.New("changed while it was being edited")

// Redactor knows the values of env (and of unknown fields) in each of
// datas, and extra (a value being set): what an editor of the file shows is
// passed through it, in case a message quotes one.
func Redactor(extra string, datas ...[]byte) *redact.Redactor {
	secrets := []string{extra}
	for _, d := range datas {
		for _, s := range SecretSpans(d) {
			secrets = append(secrets, string(d[s.Start:s.End]))
		}
	}
	return redact.New(secrets)
}
