package testservers

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Run(m) }

// A command is taken as built only when the record beside it names the
// same run and the binary is there: another run, no run, or a lost binary
// means go build.
func TestCheckedInTheSameRunOnly(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cmd")
	if checkedIn(bin, "100 5") {
		t.Error("nothing built, but checked")
	}
	if err := os.WriteFile(bin, []byte("binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	if checkedIn(bin, "100 5") {
		t.Error("a binary without a record is checked")
	}
	if err := os.WriteFile(bin+checkedSuffix, []byte("100 5"), 0o600); err != nil {
		t.Fatal(err)
	}
	for run, want := range map[string]bool{"100 5": true, "100 6": false, "101 5": false, "100": false, "": false} {
		if got := checkedIn(bin, run); got != want {
			t.Errorf("recorded by run 100 5, checkedIn(%q) = %v, want %v", run, got, want)
		}
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if checkedIn(bin, "100 5") {
		t.Error("the binary is gone, but checked")
	}
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if checkedIn(bin, "100 5") {
		t.Error("a directory in the binary's place is checked")
	}
}

// The run is named by the go command that is the parent of the test
// binary, and by nothing else.
func TestGoTestRunIsTheParentGoCommand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc names the parent on Linux only")
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", os.Getppid()))
	if err != nil {
		t.Fatal(err)
	}
	run := goTestRun()
	if string(comm) != "go\n" {
		// Run by hand or by another program: no run to share.
		if run != "" {
			t.Errorf("parent %q, not the go command, but the run is %q", comm, run)
		}
		return
	}
	pid, start, ok := strings.Cut(run, " ")
	if !ok || pid != fmt.Sprint(os.Getppid()) || start == "" {
		t.Errorf("run %q, want the parent's pid %d and its start time", run, os.Getppid())
	}
	if again := goTestRun(); again != run {
		t.Errorf("the run is %q, then %q", run, again)
	}
}

// The start time is field 22, counted after the last ')': the command
// name in field 2 may hold spaces and parentheses.
func TestStartTimeAfterTheCommandName(t *testing.T) {
	rest := "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21"
	for _, comm := range []string{"(go)", "(a b) (c)", "())"} {
		got, ok := startTime([]byte("77 " + comm + " " + rest + "\n"))
		if !ok || got != "424242" {
			t.Errorf("command name %s: start time %q, %v, want 424242", comm, got, ok)
		}
	}
	for _, bad := range []string{"", "77 go S 1", "77 (go) S 1 2 3"} {
		if got, ok := startTime([]byte(bad)); ok {
			t.Errorf("%q: start time %q, want none", bad, got)
		}
	}
}
