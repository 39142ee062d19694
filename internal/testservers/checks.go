package testservers

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// AllocatedBytes is how many bytes f allocates (on every goroutine: run it
// where nothing else allocates much).
func AllocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// RaceEnabled reports whether the test binary runs under the race
// detector, which multiplies memory and time: benchmarks do not check
// their targets then.
func RaceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

// LeaksPart reports whether s holds any 12-byte piece of secret: what a
// secret cut in two before redaction leaves.
func LeaksPart(s, secret string) bool {
	for i := 0; i+12 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+12]) {
			return true
		}
	}
	return false
}
