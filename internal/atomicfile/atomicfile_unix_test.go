//go:build unix

package atomicfile

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A writer killed with SIGKILL after it wrote its temporary file (a child
// process running this test binary, stopped in Replace's check) leaves the
// file whole and a temporary file that only its owner can read; the next
// Replace removes it.
func TestReplaceAfterAKilledWriter(t *testing.T) {
	if p := os.Getenv("MCPC_ATOMICFILE_WRITER"); p != "" {
		Replace(p, []byte("secret new content"), 0o600, func(string) error {
			os.Stdout.WriteString("written\n")
			time.Sleep(time.Hour) // until killed
			return nil
		})
		os.Exit(3)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplaceAfterAKilledWriter$")
	cmd.Env = append(os.Environ(), "MCPC_ATOMICFILE_WRITER="+p)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	if line != "written\n" {
		t.Fatalf("the writer said %q", line)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("after the kill: %q", got)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".config.json.tmp-*"))
	if len(left) != 1 {
		t.Fatalf("temporary files after the kill: %v", left)
	}
	if fi, err := os.Stat(left[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the killed writer's temporary file: %v, %v", err, fi)
	}
	if err := Replace(p, []byte("next"), 0o600, nil); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "config.json" {
		t.Errorf("after the next write the directory holds %v", names)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("the file's mode became %04o", fi.Mode().Perm())
	}
}
