// Package importer converts another MCP client's server configuration
// (Claude Desktop, VS Code, Cursor, Claude Code) into a configuration of a
// host profile mcpc serves (volcanic's settings.json or appsettings Mcp
// section, craftbot's mcp_config.json). Its one job is that semantic
// conversion: templates rewritten into the target's syntax, fields mapped,
// names sanitized, remote servers turned into what the target offers, and
// every change reported as a positioned diagnostic on the source file. A
// literal secret of the source is never quoted in a diagnostic.
//
// It serves mcpc's own commands, not embedders: its API may change
// (docs/decisions/0002-package-layout-and-import-direction.md).
package importer

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// The source clients.
const (
	ClaudeDesktop = "claude-desktop"
	VSCode        = "vscode"
	Cursor        = "cursor"
	ClaudeCode    = "claude-code"
)

// Clients lists the source clients, in the order shown to users.
var Clients = []string{ClaudeDesktop, VSCode, Cursor, ClaudeCode}

// The target profiles.
const (
	Volcanic = "volcanic"
	Craftbot = "craftbot"
)

// Targets lists the target profiles.
var Targets = []string{Volcanic, Craftbot}

// The forms of a volcanic output.
const (
	// FormSettings is the agent's settings.json: {"mcpServers": {…}}, camelCase.
	FormSettings = "settings"
	// FormAppSettings is a host appsettings file: {"Mcp": {"Servers": {…}}}, PascalCase.
	FormAppSettings = "appsettings"
)

// Forms lists the volcanic output forms.
var Forms = []string{FormSettings, FormAppSettings}

// Options say what to convert from and to.
type Options struct {
	From string // one of Clients
	To   string // one of Targets
	// Form is the volcanic output form (FormSettings when empty). Craftbot
	// has one form.
	Form string
}

// Result is one conversion.
type Result struct {
	// Output is the converted configuration: every server that converts,
	// beside the errors of those that do not (Failed counts them; a
	// migration writes what it can, and the errors say what is left). It is
	// nil when no server converts and there is an error: a file without
	// servers would replace one that has some.
	Output []byte
	// Diagnostics report every change, on the source file.
	Diagnostics []diag.Diagnostic
	// Converted is the number of servers in Output; Remote the number of
	// remote servers left for `mcpc remote add` (volcanic); Failed the
	// number of servers left out for an error.
	Converted, Remote, Failed int
	// Secrets are the literal credentials found in the source (env values
	// under credential names, header values, URLs with a query or user
	// info). Printers redact them; SecretLines are the positions where one
	// starts, so that excerpts hide the rest of those lines.
	Secrets     []string
	SecretLines []diag.Pos
}

// HasErrors reports whether a diagnostic is an error.
func (r *Result) HasErrors() bool {
	e, _, _ := diag.Count(r.Diagnostics)
	return e > 0
}

// OptionsError is an invalid Options value (a usage error).
type OptionsError struct{ msg string }

func (e *OptionsError) Error() string { return e.msg }

// check validates the options and fills in defaults.
func (o *Options) check() error {
	if !oneOf(o.From, Clients) {
		return &OptionsError{fmt.Sprintf("--from %q: expected one of %s", o.From, strings.Join(Clients, ", "))}
	}
	if !oneOf(o.To, Targets) {
		return &OptionsError{fmt.Sprintf("--to %q: expected one of %s", o.To, strings.Join(Targets, ", "))}
	}
	if o.Form == "" {
		o.Form = FormSettings
	}
	if !oneOf(o.Form, Forms) {
		return &OptionsError{fmt.Sprintf("--form %q: expected one of %s", o.Form, strings.Join(Forms, ", "))}
	}
	if o.To == Craftbot && o.Form != FormSettings {
		return &OptionsError{"--form applies to --to volcanic only: craftbot has one file, mcp_config.json"}
	}
	return nil
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// Import converts data, the content of file written by the client
// opts.From, into a configuration of opts.To. Only invalid options are an
// error; everything wrong with the input is a diagnostic.
func Import(file string, data []byte, opts Options) (*Result, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	c := &converter{opts: opts, file: file, deny: denylist.Default(), res: &Result{}, secretVars: map[string]string{}, inputVars: map[string]string{}}
	root, d := node.ParseJSON(file, data, c.allowsComments())
	if d != nil {
		c.res.Diagnostics = append(c.res.Diagnostics, *d)
		return c.res, nil
	}
	servers := c.readSource(root)
	var out []*entry
	for _, s := range servers {
		c.current = s.name
		errsBefore, _, _ := diag.Count(c.res.Diagnostics)
		if e := c.convert(s); e != nil {
			out = append(out, e)
		} else if errs, _, _ := diag.Count(c.res.Diagnostics); errs > errsBefore {
			c.res.Failed++
		}
	}
	c.assignNames(out)
	if len(out) > 0 || !c.res.HasErrors() {
		c.res.Output = c.write(out)
	}
	diag.Sort(c.res.Diagnostics)
	return c.res, nil
}

// allowsComments says whether the client reads its file as JSON with
// comments: VS Code documents mcp.json as JSONC; the others read strict
// JSON.
func (c *converter) allowsComments() bool { return c.opts.From == VSCode }

// clientName is the client as its users call it.
func clientName(client string) string {
	switch client {
	case ClaudeDesktop:
		return "Claude Desktop"
	case VSCode:
		return "VS Code"
	case Cursor:
		return "Cursor"
	case ClaudeCode:
		return "Claude Code"
	}
	return client
}
