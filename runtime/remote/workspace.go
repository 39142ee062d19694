package remote

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpc-dev/mcpc/internal/atomicfile"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
)

// Path returns where servers.json of workspace is (SPEC §3), joined to
// workspace as given, so that positions show the path the user wrote.
func Path(workspace string) string {
	return filepath.Join(workspace, filepath.FromSlash(RelPath))
}

// checkNoLinks refuses a workspace whose .volcanic, .volcanic/mcp or
// servers.json is a symbolic link: the agent can write its workspace, and a
// link would make mcpc read or write outside it. (That servers.json is a
// regular file is inputfile's check, made again after opening it.)
func checkNoLinks(workspace string) error {
	info, err := os.Stat(workspace)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", workspace, unwrapPath(err))
	}
	if !info.IsDir() {
		return fmt.Errorf("workspace %s is not a directory", workspace)
	}
	p := workspace
	for _, part := range []string{".volcanic", "mcp", "servers.json"} {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, unwrapPath(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link; mcpc reads and writes servers.json only inside the workspace, so it refuses links there", p)
		}
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Load reads and parses servers.json of workspace. A missing file is an
// empty File (Exists false, no servers). The error is for a file that cannot
// be read at all: a link, not a regular file, bigger than MaxFileSize, or an
// I/O error.
func Load(workspace string) (*File, error) {
	path := Path(workspace)
	data, exists, err := ReadFile(workspace)
	if err != nil {
		return nil, err
	}
	if !exists {
		return &File{Path: path}, nil
	}
	return Parse(path, data), nil
}

// ReadFile returns the content of servers.json of workspace, without a
// byte order mark, and whether it exists (a missing file is no error). The
// error is Load's: a link, not a regular file, too big, or an I/O error.
func ReadFile(workspace string) (data []byte, exists bool, err error) {
	if err := checkNoLinks(workspace); err != nil {
		return nil, false, err
	}
	path := Path(workspace)
	// inputfile checks again after opening: servers.json may have been
	// replaced by a pipe since checkNoLinks looked at it.
	data, err = inputfile.ReadMax(path, MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	// A byte order mark is not text (an edit writes the file without it).
	return inputfile.TrimBOM(data), true, nil
}

// ErrChanged means servers.json changed between reading and writing it
// (another command edited it at the same time); nothing was written.
var ErrChanged = errors.New("servers.json changed while it was being edited; nothing was written: run the command again")

// testHookTempWritten, when set, runs after the temporary file is written
// and synced, before it replaces servers.json (tests interrupt writes here).
var testHookTempWritten func(tmp string)

// WriteFile replaces servers.json of workspace with data, atomically: the
// data goes to a temporary file in the same directory, is synced, and is
// renamed over servers.json, so an interrupted write leaves either the old
// file or the new one, never a part. old is the content the edit was made
// from (nil: the file did not exist); if the file no longer holds exactly
// that, ErrChanged is returned and nothing is written. A new file is created
// with mode 0600; an existing file keeps its mode.
func WriteFile(workspace string, old, data []byte, existed bool) error {
	path := Path(workspace)
	dir := filepath.Dir(path)
	if err := checkNoLinks(workspace); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, unwrapPath(err))
	}
	if err := checkNoLinks(workspace); err != nil {
		return err
	}
	return atomicfile.Replace(path, data, 0o600, func(tmp string) error {
		if testHookTempWritten != nil {
			testHookTempWritten(tmp)
		}
		now, stillExists, err := ReadFile(workspace)
		if err != nil {
			return err
		}
		if stillExists != existed || !bytes.Equal(now, old) {
			return ErrChanged
		}
		return nil
	})
}

// Edit makes one edit of servers.json of workspace under the file's lock,
// the one every mcpc editor takes (atomicfile.Lock, as mcpc config does):
// it loads the file, calls edit with it and writes what edit returns
// (WriteFile), so that edits at the same time take turns and all land. An
// error of edit, or of Load, is returned as is and nothing is written. An
// edit is called twice when the workspace has no .volcanic/mcp yet: once
// without the lock, so that one that fails creates no directory, and once
// under it. It must not wait on anything slow (a probe of the server goes
// before Edit): every other edit of the file waits for it.
func Edit(workspace string, edit func(f *File) ([]byte, error)) error {
	path := Path(workspace)
	if err := checkNoLinks(workspace); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		f, err := Load(workspace)
		if err != nil {
			return err
		}
		if _, err := edit(f); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", dir, unwrapPath(err))
		}
		if err := checkNoLinks(workspace); err != nil {
			return err
		}
	}
	unlock, err := atomicfile.Lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := Load(workspace)
	if err != nil {
		return err
	}
	data, err := edit(f)
	if err != nil {
		return err
	}
	return WriteFile(workspace, f.Data, data, f.Exists)
}
