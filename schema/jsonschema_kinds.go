package schema

import (
	"sort"
	"strings"
)

// The CUE schemas check a file's entries one by one (so that each message
// names its entry), and leave an open placeholder ({...}) where the entries
// stand. Each builder below plugs the entry's schema into that placeholder,
// and adds what mcpc checks in Go and JSON Schema can still say.

// buildSettings: #Settings with #Server entries; command is required and
// not empty (a check mcpc makes in Go).
func buildSettings(x *exporter) (map[string]any, error) {
	doc, err := x.generate(Settings)
	if err != nil {
		return nil, err
	}
	server, err := x.server()
	if err != nil {
		return nil, err
	}
	command, err := at(server, "properties", "command")
	if err != nil {
		return nil, err
	}
	command["minLength"] = 1
	server["required"] = toAny([]string{"command"})
	x.defs["Server"] = server
	servers, err := at(doc, "properties", "mcpServers")
	if err != nil {
		return nil, err
	}
	servers["additionalProperties"] = ref("Server")
	servers["description"] = "The MCP servers this agent starts, by name, in file order. A name that the host's Mcp:Servers or the Playwright preset defines is theirs (mcpc warns: name-shadowed)."
	return doc, nil
}

// server is #Server with its defaults.
func (x *exporter) server() (map[string]any, error) {
	server, err := x.generate(Server)
	if err != nil {
		return nil, err
	}
	prefix, err := at(server, "properties", "toolPrefix")
	if err != nil {
		return nil, err
	}
	// checked in Go (tool-prefix-reserved): the agent's own namespace.
	prefix["not"] = map[string]any{"pattern": "^mcp__"}
	return server, setDefaults(server, serverDefaults)
}

// buildAppsettings: an appsettings file whose Mcp section is #Mcp with
// #Server entries, in the host's spelling: PascalCase keys matched in any
// case, and strings that convert to numbers and booleans.
func buildAppsettings(x *exporter) (map[string]any, error) {
	mcp, err := x.generate(Mcp)
	if err != nil {
		return nil, err
	}
	server, err := x.server()
	if err != nil {
		return nil, err
	}
	host := hostObject(server, "#/$defs/HostServer")
	x.defs["HostServer"] = host
	servers, err := at(mcp, "properties", "Servers")
	if err != nil {
		return nil, err
	}
	servers["additionalProperties"] = ref("HostServer")
	servers["description"] = "The host's MCP servers by name; they come first, sorted by name as .NET configuration sorts keys. Keys of an entry are case-insensitive. No field is required here: an environment variable or a later appsettings file may complete an entry."
	play, ok := x.defs["Playwright"].(map[string]any)
	if !ok {
		return nil, errNoDef("Playwright")
	}
	if err := setDefaults(play, playwrightDefaults); err != nil {
		return nil, err
	}
	x.defs["Playwright"] = hostObject(play, "#/$defs/Playwright")
	x.defs["Mcp"] = hostObject(mcp, "#/$defs/Mcp")
	doc := map[string]any{
		"type":       "object",
		"properties": map[string]any{"Mcp": ref("Mcp")},
	}
	addCaseInsensitiveKeys(doc, "#")
	return doc, nil
}

type errNoDef string

func (e errNoDef) Error() string { return "the encoder gave no $defs entry " + string(e) }

// hostObject returns an object schema in the host's terms: property names
// in PascalCase, any spelling of them accepted, scalar values as the .NET
// binder converts them. pointer is where the object stands in the document.
func hostObject(obj map[string]any, pointer string) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		hp := map[string]any{}
		for name, p := range props {
			hp[pascal(name)] = hostValue(p.(map[string]any))
		}
		out["properties"] = hp
	}
	if req, ok := obj["required"].([]any); ok {
		// No field is required: a later layer may set it.
		_ = req
		delete(out, "required")
	}
	addCaseInsensitiveKeys(out, pointer)
	return out
}

func pascal(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// annotations are the keys that describe a value rather than constrain it.
var annotations = []string{"description", "default", "examples", "title"}

// hostValue accepts, besides a JSON integer or boolean, the string the
// host's binder converts to one (invariant culture; true/false in any case).
func hostValue(p map[string]any) map[string]any {
	out := map[string]any{}
	assert := map[string]any{}
	for k, v := range p {
		if contains(annotations, k) {
			out[k] = v
		} else {
			assert[k] = v
		}
	}
	var branches []any
	if alts, ok := assert["anyOf"].([]any); ok && len(assert) == 1 {
		for _, a := range alts {
			branches = append(branches, hostBranches(a.(map[string]any))...)
		}
	} else {
		branches = hostBranches(assert)
	}
	if len(branches) == 1 {
		for k, v := range branches[0].(map[string]any) {
			out[k] = v
		}
		return out
	}
	out["anyOf"] = branches
	return out
}

// hostBranches returns s and, for an integer or a boolean, the string form
// the binder converts; a nullable one (a Playwright setting) also takes ""
// as unset.
func hostBranches(s map[string]any) []any {
	switch s["type"] {
	case "integer":
		digits := `^\s*\+?[0-9]+\s*$`
		if _, ok := s["exclusiveMinimum"]; ok {
			digits = `^\s*\+?0*[1-9][0-9]*\s*$`
		} else if _, ok := s["minimum"]; !ok {
			digits = `^\s*[+-]?[0-9]+\s*$`
		}
		return []any{s, map[string]any{"type": "string", "pattern": digits}}
	case "boolean":
		return []any{s, map[string]any{"type": "string", "pattern": `^\s*([tT][rR][uU][eE]|[fF][aA][lL][sS][eE])\s*$`}}
	case "null":
		return []any{s, map[string]any{"const": ""}}
	}
	return []any{s}
}

// addCaseInsensitiveKeys lets any spelling of a property name stand for it,
// as .NET configuration keys do: patternProperties that refer to the
// property's schema. Editors complete and explain the canonical names from
// properties.
func addCaseInsensitiveKeys(obj map[string]any, pointer string) {
	props, ok := obj["properties"].(map[string]any)
	if !ok {
		return
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	pp := map[string]any{}
	for _, n := range names {
		pattern, _ := caseInsensitivePattern("^(?i)" + n + "$")
		pp[pattern] = map[string]any{"$ref": pointer + "/properties/" + n}
	}
	obj["patternProperties"] = pp
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// buildServers: #Remote with #RemoteServer entries; tools holds names, not
// empty and not repeated (checked in Go, at the element).
func buildServers(x *exporter) (map[string]any, error) {
	doc, err := x.generate("#Remote")
	if err != nil {
		return nil, err
	}
	entry, err := x.generate("#RemoteServer")
	if err != nil {
		return nil, err
	}
	tools, err := at(entry, "properties", "tools")
	if err != nil {
		return nil, err
	}
	if alts, ok := tools["anyOf"].([]any); ok && len(alts) == 2 {
		list := alts[0].(map[string]any)
		list["items"] = map[string]any{"type": "string", "minLength": 1}
		list["uniqueItems"] = true
	}
	sealed, err := at(entry, "properties", "sealed")
	if err != nil {
		return nil, err
	}
	// Standard padded base64 of at least nonce (12) and tag (16) bytes:
	// what package remote checks before it tries to open it.
	sealed["pattern"] = "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
	sealed["minLength"] = 40
	x.defs["RemoteServer"] = entry
	servers, err := at(doc, "properties", "servers")
	if err != nil {
		return nil, err
	}
	servers["items"] = ref("RemoteServer")
	return doc, nil
}

// buildMcpConfig: #CraftbotConfig with #CraftbotServer entries; name
// required, and command (stdio, also when transport is absent) or url (sse,
// websocket), as the host's loader checks in Go.
func buildMcpConfig(x *exporter) (map[string]any, error) {
	doc, err := x.generate(CraftbotConfig)
	if err != nil {
		return nil, err
	}
	if err := setDefaults(doc, craftbotDefaults[CraftbotConfig]); err != nil {
		return nil, err
	}
	entry, err := x.generate(CraftbotServer)
	if err != nil {
		return nil, err
	}
	if err := setDefaults(entry, craftbotDefaults[CraftbotServer]); err != nil {
		return nil, err
	}
	entry["required"] = toAny([]string{"name"})
	needs := func(transports []string, field string, absent bool) map[string]any {
		cond := map[string]any{"properties": map[string]any{"transport": map[string]any{"enum": toAny(transports)}}}
		if !absent {
			cond["required"] = toAny([]string{"transport"})
		}
		return map[string]any{"if": cond, "then": map[string]any{"required": toAny([]string{field})}}
	}
	entry["allOf"] = []any{needs([]string{"stdio"}, "command", true), needs([]string{"sse", "websocket"}, "url", false)}
	x.defs["CraftbotServer"] = entry
	servers, err := at(doc, "properties", "mcp_servers")
	if err != nil {
		return nil, err
	}
	servers["items"] = ref("CraftbotServer")
	return doc, nil
}

func buildDeployment(x *exporter) (map[string]any, error) { return x.generate(Deployment) }

// buildPlan: a volcanic or a craftbot plan, told apart by profile.
func buildPlan(x *exporter) (map[string]any, error) {
	for _, def := range []string{PlanFile, CraftbotPlan} {
		body, err := x.generate(def)
		if err != nil {
			return nil, err
		}
		if err := x.addDef(strings.TrimPrefix(def, "#"), body); err != nil {
			return nil, err
		}
	}
	return map[string]any{"anyOf": []any{ref("Plan"), ref("CraftbotPlan")}}, nil
}
