//go:build unix

package remote

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// servers.json that is a named pipe is refused without waiting for a
// writer, naming the limit.
func TestLoadRefusesANamedPipe(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Dir(Path(ws)), 0o700)
	if err := syscall.Mkfifo(Path(ws), 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	if _, err := Load(ws); err == nil || !strings.Contains(err.Error(), "a named pipe, not a regular file") {
		t.Errorf("load: %v", err)
	}
}
