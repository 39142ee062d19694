package remote

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func writeWorkspaceFile(t *testing.T, ws, content string) string {
	t.Helper()
	p := Path(ws)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadAndWrite(t *testing.T) {
	ws := t.TempDir()
	f, err := Load(ws)
	if err != nil || f.Exists || len(f.Entries) != 0 {
		t.Fatalf("missing file: %v %+v", err, f)
	}
	data, _ := f.WithEntry(srv("a"), validSealed)
	if err := WriteFile(ws, f.Data, data, f.Exists); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(Path(ws))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file mode %v %v", fi.Mode(), err)
	}
	if di, _ := os.Stat(filepath.Dir(Path(ws))); di.Mode().Perm() != 0o700 {
		t.Errorf("new directory mode %v", di.Mode())
	}
	f, err = Load(ws)
	if err != nil || names(f) != "a" {
		t.Fatalf("%v %v", err, f)
	}
	// An existing file keeps its mode.
	os.Chmod(Path(ws), 0o640)
	data, _ = f.WithEntry(srv("b"), validSealed)
	if err := WriteFile(ws, f.Data, data, true); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(Path(ws)); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode changed to %v", fi.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(Path(ws)), ".servers.json.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A file changed by someone else between reading and writing is not
// overwritten.
func TestWriteRefusesAConcurrentChange(t *testing.T) {
	ws := t.TempDir()
	writeWorkspaceFile(t, ws, entryJSON(entryLine("a")))
	f, _ := Load(ws)
	data, _ := f.WithEntry(srv("b"), validSealed)
	other := entryJSON(entryLine("a") + ", " + entryLine("z"))
	testHookTempWritten = func(string) { os.WriteFile(Path(ws), []byte(other), 0o600) }
	defer func() { testHookTempWritten = nil }()
	if err := WriteFile(ws, f.Data, data, true); !errors.Is(err, ErrChanged) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(Path(ws)); string(b) != other {
		t.Errorf("the other writer's file was replaced: %s", b)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(Path(ws)), ".servers.json.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// Created meanwhile.
	ws2 := t.TempDir()
	f2, _ := Load(ws2)
	data, _ = f2.WithEntry(srv("b"), validSealed)
	testHookTempWritten = func(string) { writeWorkspaceFile(t, ws2, other) }
	if err := WriteFile(ws2, nil, data, false); !errors.Is(err, ErrChanged) {
		t.Fatalf("created meanwhile: %v", err)
	}
}

// The agent can write its workspace: a link in .volcanic/mcp must not make
// mcpc read or write elsewhere.
func TestSymbolicLinksAreRefused(t *testing.T) {
	outside := t.TempDir()
	target := filepath.Join(outside, "servers.json")
	os.WriteFile(target, []byte(entryJSON(entryLine("a"))), 0o600)
	for _, layout := range []string{"file", "mcp", "volcanic"} {
		ws := t.TempDir()
		switch layout {
		case "file":
			os.MkdirAll(filepath.Join(ws, ".volcanic", "mcp"), 0o755)
			os.Symlink(target, Path(ws))
		case "mcp":
			os.MkdirAll(filepath.Join(ws, ".volcanic"), 0o755)
			os.Symlink(outside, filepath.Join(ws, ".volcanic", "mcp"))
		case "volcanic":
			os.MkdirAll(filepath.Join(outside, "mcp"), 0o755)
			os.Symlink(outside, filepath.Join(ws, ".volcanic"))
		}
		if _, err := Load(ws); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: load %v", layout, err)
		}
		if err := WriteFile(ws, nil, []byte("{}"), false); err == nil {
			t.Errorf("%s: write accepted", layout)
		}
	}
	if b, _ := os.ReadFile(target); !bytes.Contains(b, []byte(`"a"`)) {
		t.Errorf("the target was changed: %s", b)
	}
	ws := t.TempDir()
	writeWorkspaceFile(t, ws, strings.Repeat(" ", MaxFileSize+1))
	if _, err := Load(ws); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: %v", err)
	}
	if _, err := Load(filepath.Join(ws, "nope")); err == nil {
		t.Error("a missing workspace is accepted")
	}
}

// TestInterruptedWrite kills a writer (a child process running this test
// binary) after it wrote half of the new content: servers.json still holds
// the old content, whole.
func TestInterruptedWrite(t *testing.T) {
	if ws := os.Getenv("MCPC_REMOTE_WRITER"); ws != "" {
		f, err := Load(ws)
		if err != nil {
			os.Exit(2)
		}
		data, _ := f.WithEntry(srv("new"), validSealed)
		testHookTempWritten = func(tmp string) {
			// Half of the data, as if the process died while writing.
			os.WriteFile(tmp, data[:len(data)/2], 0o600)
			os.Stdout.WriteString("written\n")
			time.Sleep(time.Minute)
		}
		WriteFile(ws, f.Data, data, f.Exists)
		os.Exit(3)
	}
	ws := t.TempDir()
	orig := entryJSON(entryLine("a"))
	writeWorkspaceFile(t, ws, orig)
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptedWrite$")
	cmd.Env = append(os.Environ(), "MCPC_REMOTE_WRITER="+ws)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "written") {
		cmd.Process.Kill()
		t.Fatalf("child said %q", buf[:n])
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	b, err := os.ReadFile(Path(ws))
	if err != nil || string(b) != orig {
		t.Fatalf("after the kill: %v %q", err, b)
	}
	if f := Parse("s.json", b); f.Problem != "" || names(f) != "a" {
		t.Errorf("%v", f.Problem)
	}
	// The killed writer left its temporary file, readable by its owner
	// only; the next edit works, is whole, and removes it.
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(Path(ws)), ".servers.json.tmp-*"))
	if len(left) != 1 {
		t.Fatalf("temporary files after the kill: %v", left)
	}
	if fi, err := os.Stat(left[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the killed writer's temporary file: %v %v", err, fi)
	}
	f, _ := Load(ws)
	data, _ := f.WithEntry(srv("b"), validSealed)
	if err := WriteFile(ws, f.Data, data, true); err != nil {
		t.Fatal(err)
	}
	if f, _ := Load(ws); names(f) != "a,b" {
		t.Errorf("%s", f.Data)
	}
	if entries, _ := os.ReadDir(filepath.Dir(Path(ws))); len(entries) != 1 {
		t.Errorf("beside servers.json after the next edit: %v", entries)
	}
}

// A servers.json saved with a byte order mark loads, and an edit of it is
// written (without the mark) instead of failing as changed.
func TestLoadAndWriteWithByteOrderMark(t *testing.T) {
	ws := t.TempDir()
	writeWorkspaceFile(t, ws, "\uFEFF"+`{"version": 1, "servers": []}`)
	f, err := Load(ws)
	if err != nil || f.Problem != "" {
		t.Fatalf("%v %q", err, f.Problem)
	}
	data, _ := f.WithEntry(srv("a"), validSealed)
	if err := WriteFile(ws, f.Data, data, true); err != nil {
		t.Fatal(err)
	}
	if f, err = Load(ws); err != nil || names(f) != "a" {
		t.Fatalf("%v %v", err, f)
	}
}

// Edits of servers.json at the same time take turns under the lock mcpc
// config takes: 40 goroutines (each with its own lock file descriptor, as
// processes have) each add a server to a new workspace; every one
// succeeds and every server is there, and nothing is left beside the file.
func TestConcurrentEditsAllLand(t *testing.T) {
	ws := t.TempDir()
	const n = 40
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Edit(ws, func(f *File) ([]byte, error) {
				return f.WithEntry(srv(fmt.Sprintf("s%d", i)), validSealed)
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	f, err := Load(ws)
	if err != nil || f.Problem != "" {
		t.Fatalf("%v %v", err, f.Problem)
	}
	for i := 0; i < n; i++ {
		if len(f.Find(fmt.Sprintf("s%d", i))) != 1 {
			t.Errorf("server s%d is lost", i)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(Path(ws)))
	if len(entries) != 1 {
		t.Errorf("beside servers.json: %v", entries)
	}
}

// An edit that fails writes nothing and, in a workspace without
// .volcanic/mcp, creates no directory.
func TestEditThatFailsCreatesNothing(t *testing.T) {
	ws := t.TempDir()
	refused := errors.New("refused")
	if err := Edit(ws, func(*File) ([]byte, error) { return nil, refused }); err != refused {
		t.Fatalf("err %v, want the edit's", err)
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 0 {
		t.Errorf("the workspace holds %v", entries)
	}
	writeWorkspaceFile(t, ws, entryJSON(entryLine("a")))
	before, _ := os.ReadFile(Path(ws))
	if err := Edit(ws, func(*File) ([]byte, error) { return nil, refused }); err != refused {
		t.Fatalf("err %v, want the edit's", err)
	}
	if now, _ := os.ReadFile(Path(ws)); !bytes.Equal(now, before) {
		t.Error("a failed edit changed the file")
	}
}
