package policies

// ClientLimit is what one target client accepts: how many tools, how long a
// tool name (in the form the client sends to its model), and that form.
type ClientLimit struct {
	Name     string
	MaxTools int // 0: no known limit
	MaxName  int // 0: no known limit
	// Prefix is put before the visible name in the form the client sends,
	// for profiles that set it ("" for all others).
	Prefix map[string]string
}

// ClientLimits are the target clients mcpc knows
// (docs/decisions/0037-lint-and-policy-packs.md): limits as their vendors
// document them. A name not listed here is an error in mcpc.cue.
var ClientLimits = []ClientLimit{
	{Name: "anthropic", MaxName: 64},
	{Name: "claude-code", MaxName: 64, Prefix: map[string]string{"volcanic": "mcp__volcanic__"}},
	{Name: "copilot", MaxTools: 128, MaxName: 64},
	{Name: "cursor", MaxTools: 40},
	{Name: "openai", MaxTools: 128, MaxName: 64},
}

// clientLimit finds a client by name.
func clientLimit(name string) (ClientLimit, bool) {
	for _, c := range ClientLimits {
		if c.Name == name {
			return c, true
		}
	}
	return ClientLimit{}, false
}

// mcpMaxToolName is the MCP specification's limit on a tool's name.
const mcpMaxToolName = 128
