//go:build race

package craftbot

// raceEnabled: the race detector slows CUE down about fifteen times, so the
// largest inputs shrink under it (their figures come from the benchmark).
const raceEnabled = true
