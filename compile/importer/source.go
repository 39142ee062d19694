package importer

import (
	"fmt"

	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// converter holds one conversion's state.
type converter struct {
	opts   Options
	file   string
	deny   *denylist.List
	res    *Result
	inputs map[string]input // VS Code's inputs, by id
	// inputVars are the host variables that stand for VS Code inputs.
	inputVars map[string]string
	// current is the source name of the server being converted.
	current string
	// secretVars are the host variables that literal credentials moved
	// to (volcanic), with their values: two servers with different values
	// under one key get two variables.
	secretVars map[string]string
	// remoteNames are the names given to remote servers in mcpc remote add.
	remoteNames map[string]bool
}

// source is one server as the client defines it.
type source struct {
	name    string
	namePos diag.Pos
	n       *node.Node
}

// input is one of VS Code's "inputs": a value VS Code asks the user for.
type input struct {
	description string
	password    bool
}

// report reports a finding of an import code (Codes): its id and severity
// are the code's, declared once in codes.go.
func (c *converter) report(pos diag.Pos, code rules.Rule, msg, sugg string) {
	c.res.Diagnostics = append(c.res.Diagnostics, code.At(pos, msg, sugg))
}

// serversKey is the top-level key that holds the client's servers.
func (c *converter) serversKey() string {
	if c.opts.From == VSCode {
		return "servers"
	}
	return "mcpServers"
}

// readSource finds the client's servers in file order. A name defined twice
// counts once, at its last definition, as JSON.parse reads it.
func (c *converter) readSource(root *node.Node) []*source {
	if root.Kind != node.Object {
		c.report(root.Pos(), Shape, fmt.Sprintf("a %s MCP configuration is a JSON object, not %s", clientName(c.opts.From), node.Describe(root)),
			fmt.Sprintf(`write {"%s": {"name": {"command": …}}}`, c.serversKey()))
		return nil
	}
	holder := root
	if c.opts.From == VSCode && root.Get("servers") == nil && root.Get("mcp") != nil {
		// VS Code's user settings.json keeps the same shape under "mcp".
		holder = root.Get("mcp")
	}
	if c.opts.From == VSCode {
		c.readInputs(holder.Get("inputs"))
	}
	key := c.serversKey()
	m := holder.Member(key)
	if m == nil {
		c.missingServers(root, key)
		return nil
	}
	if m.Value.Kind != node.Object {
		c.report(m.Value.Pos(), Shape, fmt.Sprintf("%q must be an object of servers by name, not %s", key, node.Describe(m.Value)),
			fmt.Sprintf(`write "%s": {"name": {"command": …}}`, key))
		return nil
	}
	if len(m.Value.Members) == 0 {
		c.report(m.KeyPos(), NoServers, fmt.Sprintf("%q defines no server; the output has none", key), "")
	}
	var out []*source
	at := map[string]int{}        // where in out a name's object is
	last := map[string]diag.Pos{} // a name's definition before this one, object or not
	for _, sm := range m.Value.Members {
		if prev, ok := last[sm.Key]; ok {
			c.report(sm.KeyPos(), Duplicate, fmt.Sprintf("server %q is defined again here; %s reads the last definition, so the one at line %d is not imported",
				sm.Key, clientName(c.opts.From), prev.Line), "remove one of the two definitions")
			if i, ok := at[sm.Key]; ok {
				out[i] = nil
				delete(at, sm.Key)
			}
		}
		last[sm.Key] = sm.KeyPos()
		if sm.Value.Kind != node.Object {
			c.report(sm.Value.Pos(), Shape, fmt.Sprintf("server %q must be an object, not %s", sm.Key, node.Describe(sm.Value)),
				`write {"command": "npx", "args": […]}`)
			c.res.Failed++
			continue
		}
		at[sm.Key] = len(out)
		out = append(out, &source{name: sm.Key, namePos: sm.KeyPos(), n: sm.Value})
	}
	kept := out[:0]
	for _, s := range out {
		if s != nil {
			kept = append(kept, s)
		}
	}
	return kept
}

// missingServers reports a file without the client's servers key, naming
// the client whose key it has instead.
func (c *converter) missingServers(root *node.Node, key string) {
	other, hint := "servers", "--from vscode"
	if key == "servers" {
		other, hint = "mcpServers", "--from claude-desktop, cursor or claude-code"
	}
	if m := root.Member(other); m != nil {
		c.report(m.KeyPos(), Shape, fmt.Sprintf("%s keeps its servers under %q; this file has %q instead", clientName(c.opts.From), key, other),
			"this looks like another client's file: try "+hint)
		return
	}
	c.report(root.Pos(), NoServers, fmt.Sprintf("no %q in this file: it defines no server, and the output has none", key),
		fmt.Sprintf("is this the %s MCP configuration? It holds {\"%s\": {…}}", clientName(c.opts.From), key))
}

// readInputs reads VS Code's inputs: [{type, id, description, password}].
func (c *converter) readInputs(n *node.Node) {
	c.inputs = map[string]input{}
	if n == nil {
		return
	}
	if n.Kind != node.Array {
		c.report(n.Pos(), InputIgnored, fmt.Sprintf(`"inputs" must be a list, not %s; it is ignored`, node.Describe(n)), "")
		return
	}
	for _, e := range n.Elems {
		id := e.Get("id")
		if e.Kind != node.Object || id == nil || id.Kind != node.String {
			c.report(e.Pos(), InputIgnored, `an entry of "inputs" without a string "id" is ignored`, `write {"type": "promptString", "id": "api-key", "description": "…", "password": true}`)
			continue
		}
		in := input{}
		if d := e.Get("description"); d != nil && d.Kind == node.String {
			in.description = d.Text
		}
		if p := e.Get("password"); p != nil && p.Kind == node.Bool {
			in.password = p.Bool
		}
		c.inputs[id.Text] = in
	}
}
