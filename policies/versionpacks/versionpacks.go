// Package versionpacks holds the check packs named for one version of a
// host: where that version's code breaks what its own manual promises,
// mcpc keeps the promise in its model, runtime and editors, and the pack
// reports what the version does instead, on the files that show it
// (docs/decisions/0053-host-version-packs.md). A pack is on by default in
// mcpc lint for a deployment of its profile; mcpc.cue switches it off by
// name (policies: versionPacks: NAME: "off"), for an operator whose host
// is not that version. What no file shows (a version that never rereads
// its file) is said by the editors after each edit while the pack is on
// (EditNote).
//
// Its checks read the compiler's model of the sources (the raw elements of
// mcp_config.json), which a plan does not carry; its rules are declared in
// package rules like every Go rule.
//
// It serves mcpc's own commands, not embedders: its API may change
// (docs/decisions/0002-package-layout-and-import-direction.md).
package versionpacks

import (
	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Pack is one host version's check pack.
type Pack struct {
	// Name is the pack's name in mcpc.cue: <host>-<commit>.
	Name string
	// Profile is the profile whose deployments it checks.
	Profile string
	// Version says which code it was read from (a commit and its date).
	Version string
	// Rules are the rules it reports, each declared in package rules.
	Rules []rules.Rule
	// EditNote is what an editor of the profile's file (mcpc config, mcpc
	// ui) adds to its reply after an edit while the pack is on; "" when
	// the version applies edits as its manual says.
	EditNote string
	// Check reports what the version does with the sources res read.
	Check func(res *compile.Result) []diag.Diagnostic
}

// All are the shipped packs, sorted by name.
func All() []*Pack { return []*Pack{Craftbot605efb4} }

// Names are the names of All.
func Names() []string {
	var out []string
	for _, p := range All() {
		out = append(out, p.Name)
	}
	return out
}

// Lookup is the pack of that name, or nil.
func Lookup(name string) *Pack {
	for _, p := range All() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// For are the packs of a profile, sorted by name.
func For(profile string) []*Pack {
	var out []*Pack
	for _, p := range All() {
		if p.Profile == profile {
			out = append(out, p)
		}
	}
	return out
}
