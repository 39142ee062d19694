package remote

import (
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
)

// The keys that open sealed headers are the deny-list's always-denied
// names: no custom list can let a server inherit them.
func TestSealingKeysAreAlwaysDenied(t *testing.T) {
	always := map[string]bool{}
	for _, n := range denylist.AlwaysDenied() {
		always[n] = true
	}
	for _, n := range []string{SecretVar, FallbackSecretVar} {
		if !always[n] {
			t.Errorf("%s is not among denylist.AlwaysDenied() %v", n, denylist.AlwaysDenied())
		}
	}
}
