package plan

import (
	"reflect"
	"testing"
)

func TestTemplates(t *testing.T) {
	refs := Templates("${workspace}/x ${env:A_1} ${home} ${env:} ${x")
	kinds := []TemplateKind{}
	for _, r := range refs {
		kinds = append(kinds, r.Kind)
	}
	if want := []TemplateKind{TemplateWorkspace, TemplateEnv, TemplateUnknown, TemplateEnv, TemplateUnterminated}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	got := Resolve("${workspace}/é${env:T}-${nope}", "/w", func(n string) string { return "<" + n + ">" })
	if got != "/w/é<T>-${nope}" {
		t.Errorf("resolved %q", got)
	}
}

// Outside env values the host passes ${env:NAME} on literally, and so does
// the runtime: a nil env leaves it as written (it once blanked it).
func TestResolveKeepsEnvRefsWithoutEnv(t *testing.T) {
	if got := Resolve("--ua=${env:UA} ${workspace}/x ${other}", "/w", nil); got != "--ua=${env:UA} /w/x ${other}" {
		t.Errorf("resolved %q", got)
	}
}
