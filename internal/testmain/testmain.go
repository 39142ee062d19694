// Package testmain is what every test binary of mcpc does before its tests
// run: the TestMain of a package that needs nothing else is Run, and
// testservers.Main starts with Prepare.
package testmain

import (
	"flag"
	"os"
	"strings"
	"syscall"
	"testing"
)

// Run runs the tests of m, prints the Summary of what was skipped and
// exits with their code.
func Run(m *testing.M) {
	Prepare()
	code := m.Run()
	Summary(os.Stdout)
	os.Exit(code)
}

// Prepare is what a test binary does before it parses its flags: it
// accepts -update, so that `go test ./... -update` runs in every package,
// also in those without golden files (package golden defines the flag in
// those with), and it drops the race detector's sleep at exit.
func Prepare() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files (this package has none)")
	}
	NoRaceExitSleep()
}

// NoRaceExitSleep runs this test binary again, in the same process, without
// the race detector's sleep at exit: by default (GORACE atexit_sleep_ms=1000)
// a binary built with -race sleeps a second before it exits, to catch races
// of goroutines that still run. `go test -race ./...` runs every test
// binary that way, so the sleep adds up across the suite (docs/performance.md,
// "The test suite"); and the runtime's and the CLI's tests, where goroutines run on their own, fail
// when one outlives its test (testservers.NoLeaks). A GORACE that names
// atexit_sleep_ms is the caller's choice and is kept; without -race, or
// where exec fails, the binary goes on as it is.
func NoRaceExitSleep() {
	gorace := os.Getenv("GORACE")
	if !raceEnabled || strings.Contains(gorace, "atexit_sleep_ms") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := []string{"GORACE=" + strings.TrimSpace(gorace+" atexit_sleep_ms=0")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	syscall.Exec(exe, os.Args, env) // returns only when it failed
}
