package testmain

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Run(m) }

// printGORACE makes a run of this binary print its GORACE and nothing else.
const printGORACE = "MCPC_TESTMAIN_PRINT_GORACE"

func TestRunTurnsTheExitSleepOff(t *testing.T) {
	if os.Getenv(printGORACE) != "" {
		os.Stdout.WriteString("GORACE=" + os.Getenv("GORACE") + "\n")
		return
	}
	if !raceEnabled {
		if strings.Contains(os.Getenv("GORACE"), "atexit_sleep_ms") {
			t.Errorf("without -race the environment is left alone: GORACE=%q", os.Getenv("GORACE"))
		}
		t.Skip("the exit sleep is the race detector's")
	}
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms=0") {
		t.Errorf("this test binary runs with GORACE=%q", g)
	}
	// A GORACE of the caller's keeps its options; one that sets the sleep
	// is kept as it is.
	for given, want := range map[string]string{
		"halt_on_error=1":                    "GORACE=halt_on_error=1 atexit_sleep_ms=0\n",
		"atexit_sleep_ms=50 halt_on_error=1": "GORACE=atexit_sleep_ms=50 halt_on_error=1\n",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRunTurnsTheExitSleepOff$")
		cmd.Env = append(os.Environ(), "GORACE="+given, printGORACE+"=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GORACE=%s: %v", given, err)
		}
		if got, _, _ := strings.Cut(string(out), "\n"); got+"\n" != want {
			t.Errorf("GORACE=%s: the binary ran with %q, want %q", given, got, want)
		}
	}
}

// `go test ./... -update` runs every package's binary with -update, also
// those of packages without golden files (like this one).
func TestRunAcceptsUpdate(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-update")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a test binary run with -update: %v\n%s", err, out)
	}
}

// skipForSummary makes TestSkipSummarised skip as a missing prerequisite.
const skipForSummary = "MCPC_TESTMAIN_SKIP"

// A test Skip skips is named once, with its reason, in the line the binary
// prints at its end (a passing go test shows a skip only with -v).
func TestSkipSummarised(t *testing.T) {
	if os.Getenv(skipForSummary) != "" {
		Skip(t, "no widget: apt-get install widget")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSkipSummarised$")
	cmd.Env = append(os.Environ(), skipForSummary+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "mcpc: 1 test skipped for lack of a prerequisite (MCPC_REQUIRE_NPM, MCPC_REQUIRE_BROWSER, MCPC_REQUIRE_TOOLS=1 make them fail): TestSkipSummarised: no widget: apt-get install widget\n"
	if !strings.HasSuffix(string(out), "PASS\n"+want) {
		t.Errorf("the binary printed:\n%s\nwant it to end with:\n%s", out, want)
	}
}
