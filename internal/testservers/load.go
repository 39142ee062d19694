package testservers

import (
	"os/exec"
	goruntime "runtime"
	"testing"
)

// LoadCPU keeps every core of the machine busy until the end of the test:
// one busy-looping shell per core, stopped (killed by pid) at its cleanup.
// Processes, not goroutines: they take their share of the cores from the
// whole machine, as other work on a busy machine does, without starving
// the test's own goroutines inside the Go scheduler. A test under load
// checks an order, never a time.
func LoadCPU(t testing.TB) {
	t.Helper()
	for range goruntime.NumCPU() {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting a busy loop: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}
