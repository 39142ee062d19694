package versionpacks

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Craftbot605efb4 is what CraftBot at commit 605efb4 (2026-03-13) does
// where its code breaks its manual and a file shows it:
//
//   - an element of mcp_servers that is not an object, or a named entry
//     whose transport is a list or an object, raises an error the
//     per-entry handler does not catch (config.py: only KeyError and
//     ValueError are): the whole load fails and no MCP server starts,
//     where the manual promises the entry is skipped. Every /mcp or
//     Settings edit loads the file first and, on a load error, starts from
//     an empty configuration (app/tui/mcp_settings.py): the next add saves
//     a file holding only the new server;
//   - websocket: send_request refuses until the transport counts as
//     connected, which it does only after initialize: initialize always
//     fails (server.py WebSocketTransport);
//   - sse: every request is posted to the url with each "/sse" replaced by
//     "/message", the endpoint event the server sends is ignored, and
//     notifications/initialized is never sent: a standard MCP SSE server
//     never answers (server.py SSETransport);
//   - no file watcher: MCP is set up once when the host starts
//     (app/agent_base.py), so an edit applies at its next restart (EditNote).
var Craftbot605efb4 = &Pack{
	Name:     "craftbot-605efb4",
	Profile:  plan.ProfileCraftbot,
	Version:  "CraftBot 605efb4 (2026-03-13)",
	Rules:    []rules.Rule{rules.Craftbot605efb4LoadFails, rules.Craftbot605efb4SSE, rules.Craftbot605efb4Websocket},
	EditNote: "CraftBot 605efb4 reads mcp_config.json only when it starts: restart CraftBot for this change to take effect (version pack craftbot-605efb4)",
	Check:    checkCraftbot605efb4,
}

// whatLoadFailureLoses is the consequence every load-fails finding states.
const whatLoadFailureLoses = "CraftBot 605efb4 then loads no MCP server from the file, not one (the error escapes its per-entry skip), and its next /mcp add or add-json, or a server added in Settings, saves a file holding only the new server: every other entry and its credentials are lost"

func checkCraftbot605efb4(res *compile.Result) []diag.Diagnostic {
	cfg := craftbot.ConfigOf(res)
	if cfg == nil {
		return nil
	}
	var ds []diag.Diagnostic
	for _, e := range cfg.Entries {
		n := e.Node
		if n.Kind != node.Object {
			ds = append(ds, rules.Craftbot605efb4LoadFails.At(n.Pos(),
				fmt.Sprintf("%s is %s, not an object: %s", e.Subject(), node.Describe(n), whatLoadFailureLoses),
				`remove it, or write it as an object: {"name": "…", "transport": "stdio", "command": "…"}`))
			continue
		}
		// An entry without a name is skipped before its transport is read.
		if t := n.Get(craftbot.FieldTransport); t != nil && n.Get(craftbot.FieldName) != nil && (t.Kind == node.Array || t.Kind == node.Object) {
			ds = append(ds, rules.Craftbot605efb4LoadFails.At(t.Pos(),
				fmt.Sprintf("%s: transport is %s, not a string: %s", e.Subject(), node.Describe(t), whatLoadFailureLoses),
				`write "transport": "stdio" (a local command), "sse" or "websocket" (a url)`))
		}
	}
	for _, e := range cfg.Entries {
		if !e.Loads() {
			continue
		}
		pos := e.NamePos
		if v := e.Node.Get(craftbot.FieldURL); v != nil {
			pos = v.Pos()
		}
		report := func(r rules.Rule, msg, sugg string) {
			if e.Enabled {
				ds = append(ds, r.At(pos, msg, sugg))
			} else {
				ds = append(ds, r.InfoAt(pos, "disabled "+msg, sugg))
			}
		}
		switch e.Transport {
		case plan.TransportWebsocket:
			report(rules.Craftbot605efb4Websocket,
				fmt.Sprintf("server %q is a websocket server, and CraftBot 605efb4 never connects one: its websocket transport refuses to send initialize before the connection counts as connected, which it does only after initialize; the agent gets none of its tools", e.Name),
				"run the server over stdio (a local command, or a stdio bridge to the url), or use a CraftBot whose websocket transport connects")
		case plan.TransportSSE:
			post := strings.ReplaceAll(e.URL, "/sse", "/message")
			where := fmt.Sprintf("posts every request to %q (each \"/sse\" of the url replaced by \"/message\", host names too)", post)
			if post == e.URL {
				where = fmt.Sprintf("posts every request to the url itself, %q (it has no \"/sse\" to replace by \"/message\")", post)
			}
			report(rules.Craftbot605efb4SSE,
				fmt.Sprintf("server %q is an sse server, and CraftBot 605efb4 %s, ignores the endpoint event that says where to post, and never sends notifications/initialized: a standard MCP SSE server does not answer, so the server never connects and the agent gets none of its tools", e.Name, where),
				"run the server over stdio (a local command, or a stdio bridge to the url), or use a CraftBot whose sse transport follows the endpoint event")
		}
	}
	diag.Sort(ds)
	return ds
}
