//go:build !unix

package testservers

import "errors"

// sharedBuildDir has no shared directory to give on this system: each
// test binary builds into a directory of its own.
func sharedBuildDir() (dir string, unlock func(), err error) {
	return "", nil, errors.New("no shared build directory on this system")
}

// goTestRun names no run here: every test binary checks its commands with
// go build.
func goTestRun() string { return "" }
