//go:build !linux

package supervisor

import (
	"errors"
	"io"
)

// StartGuard fails where the kernel has no child subreapers: only mcpc's
// own stopping (and, where there is one, the parent-death signal) ends the
// servers there.
func StartGuard(string, []string, func(string)) (*Guard, error) {
	return nil, errors.New("the process guard needs Linux")
}

// Close does nothing: no guard runs here.
func (g *Guard) Close() GuardReport { return GuardReport{} }

// RunGuard does nothing here.
func RunGuard(io.Reader) int { return 0 }
