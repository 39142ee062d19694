package volcanic

import (
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// Each entry check is declared in the file named after its rule
// (missing_command.go for missing-command), listed once, and that file is
// the rule's home in the registry: mcpc rules and docs/rules.md name where
// a rule is checked.
func TestEntryChecksLiveInTheirRulesFiles(t *testing.T) {
	// A rule a parser reports too names its parser as its home.
	parserHome := map[string]string{"type-mismatch": "compile/volcanic/bind.go"}
	seen := map[string]bool{}
	for _, ch := range entryChecks {
		if seen[ch.ID] {
			t.Errorf("%s is checked twice", ch.ID)
		}
		seen[ch.ID] = true
		file, _ := runtime.FuncForPC(reflect.ValueOf(ch.run).Pointer()).FileLine(reflect.ValueOf(ch.run).Pointer())
		file = filepath.ToSlash(file)
		if want := strings.ReplaceAll(ch.ID, "-", "_") + ".go"; filepath.Base(file) != want {
			t.Errorf("%s is checked in %s, want %s", ch.ID, filepath.Base(file), want)
		}
		home := ch.Home
		if h, ok := parserHome[ch.ID]; ok {
			if home != h {
				t.Errorf("%s: home %s, want its parser %s", ch.ID, home, h)
			}
			continue
		}
		if !strings.HasSuffix(file, "/"+home) {
			t.Errorf("%s: its home is %s, but its check is %s", ch.ID, home, file)
		}
	}
}
