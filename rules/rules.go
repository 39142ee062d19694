// Package rules is the registry of every rule mcpc reports: its id, default
// severity, one-line description and a documented example. Every rule is
// listed here explicitly, in one place; nothing registers itself.
//
// It imports only diag.
package rules

import (
	"sort"

	"github.com/mcpc-dev/mcpc/diag"
)

// Rule describes one check.
type Rule struct {
	ID          string
	Severity    diag.Severity
	Description string
	// Example is a short input that triggers the rule, as shown in docs/rules.md.
	Example string
}

// Lookup returns the rule with the given id.
func Lookup(id string) (Rule, bool) {
	for _, r := range All() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// All returns every rule, sorted by id.
func All() []Rule {
	out := append([]Rule(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
