// Package sealtest writes a workspace's servers.json for tests as `mcpc
// remote add` does: an entry sealed with a host secret for a chat's scope.
//
// Only tests import it.
package sealtest

import (
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// PatientDial waits for every remote server as long as a test may run: no
// handshake of a test may fail for the machine's speed.
var PatientDial = remote.DialOptions{HandshakeTimeout: testservers.Patient, ListTimeout: testservers.Patient}

// Add seals s with its headers h under secret for scope and saves it in
// ws's servers.json, replacing an entry of the same name. Auth and
// Transport default as `mcpc remote add` sets them.
func Add(t testing.TB, ws, secret, scope string, s remote.Server, h remote.Headers) {
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
	key, err := remote.NewKey(secret)
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
