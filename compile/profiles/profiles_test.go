package profiles_test

import (
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	_ "github.com/mcpc-dev/mcpc/compile/profiles"
)

// Linking the profiles registers each by its name, the default first.
func TestEveryProfileIsRegistered(t *testing.T) {
	if got := strings.Join(compile.ProfileNames(), " "); got != "volcanic craftbot" {
		t.Errorf("profiles %q", got)
	}
	if p, err := compile.Lookup(""); err != nil || p.Name() != compile.ProfileVolcanic {
		t.Errorf("the default profile: %v %v", p, err)
	}
}
