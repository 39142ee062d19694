package schema

import (
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// A CUE file becomes a value tree positioned in the file: keys at their
// labels, values where CUE evaluates them; references are resolved.
func TestParseCUE(t *testing.T) {
	src := "// a deployment\nprofile: \"volcanic\"\n_dir: \"conf\"\nsources: {\n\tappsettings: [\"\\(_dir)/appsettings.json\"]\n\tcleanEnv: true\n}\nrules: \"package-unpinned\": \"off\"\n"
	n, ds := ParseCUE("mcpc.cue", []byte(src))
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	m := n.Member("sources")
	if m == nil || m.KeyPos().Line != 4 || m.KeyPos().Column != 1 {
		t.Fatalf("sources key at %+v", m)
	}
	_, app := n.Lookup([]string{"sources", "appsettings", "0"})
	if app == nil || app.Text != "conf/appsettings.json" || app.Pos().Line != 5 {
		t.Fatalf("appsettings[0] = %+v", app)
	}
	if n.Member("_dir") != nil {
		t.Fatal("a hidden field is not data")
	}
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if ds := v.Check(Deployment, n, "mcpc.cue", nil); len(ds) > 0 {
		t.Fatalf("valid deployment: %v", ds)
	}
	bad, ds := ParseCUE("mcpc.cue", []byte("profile: \"volcanik\"\nsorces: {}\nrules: x: \"warn\"\n"))
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	ds = v.Check(Deployment, bad, "mcpc.cue", nil)
	var got []string
	for _, d := range ds {
		got = append(got, d.Pos().String()+" "+d.Rule+" "+d.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"mcpc.cue:1:10", "mcpc.cue:2:1 unknown-field", "mcpc.cue:3:11"} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	// Not data, not CUE: positioned errors.
	for _, src := range []string{"profile: string\n", "a: 1\na: 2\n", "a: {\n"} {
		if _, ds := ParseCUE("mcpc.cue", []byte(src)); len(ds) == 0 || ds[0].Rule != rules.CUESyntax.ID || ds[0].Line < 1 {
			t.Errorf("%q: %v", src, ds)
		}
	}
}
