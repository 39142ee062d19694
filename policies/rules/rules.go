// Package rules is the registry of every rule mcpc declares in Go: its id,
// default severity, one-line description and a documented example. Each rule
// is one exported value (rules.NameShadowed), and its methods are the only
// way to report it: At fills in the id and the default severity, so that no
// check retypes them. Every rule is declared here explicitly, in one file
// (registry.go); nothing outside this package registers a rule. Severities
// and ignores that a deployment configures are applied afterwards, in one
// pass by rule id (lint.Deployment.Apply); no check knows about them.
//
// It serves mcpc's own commands, not embedders: its API may change
// (docs/decisions/0002-package-layout-and-import-direction.md).
package rules

import (
	"sort"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// Rule describes one check.
type Rule struct {
	ID          string
	Severity    diag.Severity
	Description string
	// Example is a short input that triggers the rule, as shown in docs/rules.md.
	Example string
	// Home is the file, from the module's root, that holds the rule's
	// check: a Go file that reports it, or the CUE schema whose
	// @check(rule=…) attribute does. A rule reported from several places
	// names the one whose check decides it (a parser's rule, its parser).
	Home string
}

// registry holds every rule declared in registry.go, in declaration order.
var registry []Rule

// declare adds r to the registry and returns it, so that each rule is one
// declaration: var NameShadowed = declare(Rule{…}).
func declare(r Rule) Rule {
	registry = append(registry, r)
	return r
}

// At reports r at pos with r's default severity.
func (r Rule) At(pos diag.Pos, msg, suggestion string) diag.Diagnostic {
	return r.at(pos, r.Severity, msg, suggestion)
}

// InfoAt reports r at pos as info rather than its default severity: for a
// case the rule's description names as harmless by design (a disabled
// CraftBot server starts and connects nothing).
func (r Rule) InfoAt(pos diag.Pos, msg, suggestion string) diag.Diagnostic {
	return r.at(pos, diag.Info, msg, suggestion)
}

// ErrorAt reports r at pos as an error rather than its default severity:
// for an input mcpc refuses to act on (an edit of mcp_config.json whose entry
// the host would skip is not written), where a warning would let it pass.
func (r Rule) ErrorAt(pos diag.Pos, msg, suggestion string) diag.Diagnostic {
	return r.at(pos, diag.Error, msg, suggestion)
}

// Claim makes d a finding of r, with r's default severity: for a diagnostic
// another layer found (a schema constraint, a JSON syntax error) that this
// input reports as its own rule (a plan or lock that does not fit is
// plan-invalid or lock-invalid, whatever the constraint).
func (r Rule) Claim(d diag.Diagnostic) diag.Diagnostic {
	d.Rule, d.Severity = r.ID, r.Severity
	return d
}

func (r Rule) at(pos diag.Pos, sev diag.Severity, msg, suggestion string) diag.Diagnostic {
	return diag.Diagnostic{File: pos.File, Line: pos.Line, Column: pos.Column, Severity: sev, Rule: r.ID, Message: msg, Suggestion: suggestion}
}

// Lookup returns the rule with the given id.
func Lookup(id string) (Rule, bool) {
	for _, r := range registry {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// Of returns the declared rule with the given id, for a finding that
// carries its rule as an id (a tool-naming result, a schema's @check
// attribute). Every such id is declared (the guard tests see to it); an id
// that is not is still reported under its own name, as an error, so that
// nothing is lost.
func Of(id string) Rule {
	if r, ok := Lookup(id); ok {
		return r
	}
	return Rule{ID: id, Severity: diag.Error}
}

// All returns every rule, sorted by id.
func All() []Rule {
	out := append([]Rule(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
