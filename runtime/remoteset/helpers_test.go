package remoteset

import (
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remote/sealtest"
)

const (
	remoteSecret = "host-secret-for-remoteset-tests"
	remoteCanary = "CANARY-remote-5e6f7a"
)

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testservers.WaitUntil(t, what, cond)
}

// patientDial and addRemote are package sealtest's, with this package's
// host secret.
var patientDial = sealtest.PatientDial

func addRemote(t testing.TB, ws, scope string, s remote.Server, h remote.Headers) {
	t.Helper()
	sealtest.Add(t, ws, remoteSecret, scope, s, h)
}
