//go:build !unix

package testservers

import "time"

// processStart stands in for CPU time where there is no getrusage.
var processStart = time.Now()

// ProcessCPU is the time since the process started where the system does
// not tell its CPU time.
func ProcessCPU() time.Duration { return time.Since(processStart) }
