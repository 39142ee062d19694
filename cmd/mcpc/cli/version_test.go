package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

func TestVersionFromBuildInfo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/mcpc-dev/mcpc", Version: "v0.0.0-20261130120000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-11-30T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	var b bytes.Buffer
	if err := printVersion(&b, info); err != nil {
		t.Fatal(err)
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	want := "mcpc " + Version + "\n" +
		"module:   github.com/mcpc-dev/mcpc v0.0.0-20261130120000-0123456789ab+dirty\n" +
		"revision: 0123456789abcdef 2026-11-30T12:00:00Z (with uncommitted changes)\n" +
		"go:       go1.26.1 " + platform + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	printVersion(&b, nil)
	if !strings.Contains(b.String(), "module:   unknown (the binary holds no build information)\n") || !strings.Contains(b.String(), "go:       "+runtime.Version()) {
		t.Errorf("without build info:\n%s", b.String())
	}
	// In a test binary (as with go run) there is no revision: said, not guessed.
	code, out, _ := run(t, "version")
	if code != ExitOK || !strings.Contains(out, "module:   github.com/mcpc-dev/mcpc") || !strings.Contains(out, "revision: unknown (go run and go test record none") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, _, stderr := run(t, "version", "extra"); code != ExitUsage || !strings.Contains(stderr, "version takes no arguments") {
		t.Errorf("version extra: exit %d, %s", code, stderr)
	}
}

// What the README promises of an installed mcpc: built in a git clone, it
// reports the clone's revision, and its bash completion completes. The
// source tree is copied into a fresh repository (a git worktree's .git is a
// file, which go build does not take for a repository) and built there once.
func TestBuildInAClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	src, dir := testservers.Root(), t.TempDir()
	if err := copySourceTree(src, dir); err != nil {
		t.Fatal(err)
	}
	sh := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	sh("git", "init", "-q")
	sh("git", "add", "-A")
	sh("git", "commit", "-q", "-m", "clone")
	head := strings.TrimSpace(sh("git", "rev-parse", "HEAD"))
	bin := filepath.Join(dir, "mcpc")
	// -buildvcs=auto is Go's default, which a machine's go env (GOFLAGS)
	// may have turned off; a user's build has it. -trimpath, as the tests'
	// own build of mcpc (testservers.Mcpc): the packages' compiled code then
	// does not depend on the directory, and this build links what that
	// one compiled instead of compiling the whole tree again.
	sh("go", "build", "-buildvcs=auto", "-trimpath", "-o", bin, "./cmd/mcpc")
	out := sh(bin, "version")
	if !strings.Contains(out, "\nrevision: "+head+" ") || strings.Contains(out, "uncommitted") {
		t.Errorf("the build of commit %s says:\n%s", head, out)
	}
	if !strings.Contains(out, "module:   github.com/mcpc-dev/mcpc v0.0.0-") || !strings.Contains(out, head[:12]) {
		t.Errorf("no pseudo-version of the commit:\n%s", out)
	}
	// Bash completion, from the script to the binary and back, with plain
	// bash (no bash-completion package).
	if _, err := exec.LookPath("bash"); err != nil {
		t.Log("bash is not installed: completion not tried")
		return
	}
	script := `source <(mcpc completion bash)
for w in "mcpc re" "mcpc remote a" "mcpc validate --appset"; do
  COMP_WORDS=($w); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _mcpc_bash_autocomplete; echo "$w => ${COMPREPLY[*]}"
done`
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	got, err := cmd.CombinedOutput()
	want := "mcpc re => remote\nmcpc remote a => add\nmcpc validate --appset => --appsettings\n"
	if err != nil || string(got) != want {
		t.Errorf("bash completion: %v\n%s\nwant\n%s", err, got, want)
	}
}

// copySourceTree copies into dir the files of the repository at src that a
// commit of it would hold: those git tracks or would add (not ignored), as
// `git ls-files` lists them; the npm trees and build outputs are ignored.
func copySourceTree(src, dir string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = src
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files in %s: %v", src, err)
	}
	for _, rel := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(src, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
