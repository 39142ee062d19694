package runtime

import (
	"reflect"
	"testing"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
)

// The runtime launches what the host would: ${env:NAME} outside env values
// stays as written (the host does not expand it there), ${workspace} is
// filled in everywhere, and env values resolve ${env:NAME}.
func TestLaunchKeepsEnvRefsOutsideEnv(t *testing.T) {
	t.Parallel()
	v := "${env:A}-${workspace}"
	s := &plan.Server{Name: "s", Command: "${env:BIN}", Args: []string{"--a=${env:A}", "${workspace}/x"}, Cwd: "/c/${env:A}",
		Env: map[string]*string{"E": &v}}
	spec := Launch(s, "/w", HostEnv{Vars: map[string]string{"A": "1", "BIN": "b"}, Deny: denylist.Default()})
	if spec.Command != "${env:BIN}" || !reflect.DeepEqual(spec.Args, []string{"--a=${env:A}", "/w/x"}) || spec.Dir != "/c/${env:A}" {
		t.Errorf("launch %q %q in %q", spec.Command, spec.Args, spec.Dir)
	}
	found := false
	for _, kv := range spec.Env {
		found = found || kv == "E=1-/w"
	}
	if !found {
		t.Errorf("env %q lacks E=1-/w", spec.Env)
	}
}
