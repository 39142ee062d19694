package remoteset

import (
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

const (
	remoteSecret = "host-secret-for-remoteset-tests"
	remoteCanary = "CANARY-remote-5e6f7a"
)

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testservers.WaitUntil(t, what, cond)
}

// patientDial waits for every remote server as long as the test may run:
// no handshake of these tests may fail for the machine's speed.
var patientDial = remote.DialOptions{HandshakeTimeout: testservers.Patient, ListTimeout: testservers.Patient}

// addRemote seals and saves a servers.json entry for scope, as `mcpc
// remote add` does.
func addRemote(t testing.TB, ws, scope string, s remote.Server, h remote.Headers) {
	t.Helper()
	if s.Auth == "" {
		s.Auth = remote.AuthHeaders
	}
	if s.Transport == "" {
		s.Transport = remote.TransportAuto
	}
	f, err := remote.Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	key, err := remote.NewKey(remoteSecret)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := key.Seal(scope, s, h)
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.WithEntry(s, sealed)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteFile(ws, f.Data, data, f.Exists); err != nil {
		t.Fatal(err)
	}
}
