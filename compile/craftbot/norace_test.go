//go:build !race

package craftbot

const raceEnabled = false
