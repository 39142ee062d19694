// Package actions is how CraftBot turns the tools its servers list into
// actions (SPEC §5, "How tools become actions"): the names, descriptions
// and input schemas of the action registry, and the rules that warn about
// it. It is the part of the craftbot profile a runtime needs, so it
// imports nothing of the compiler: only the rule registry.
package actions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Actions: how CraftBot turns the tools a server lists into actions (seed,
// "How tools become actions"). Everything here is a pure function of the
// tool lists: the action registry mcpc tools --profile craftbot prints.

// Rules of the action registry (warnings: the server still loads), by id;
// each is declared in package rules.
var (
	// RuleActionCollision: two tools make the same action name.
	RuleActionCollision = rules.CbActionCollision.ID
	// RuleActionBuiltin: a tool's action name is a built-in action's.
	RuleActionBuiltin = rules.CbActionBuiltin.ID
	// RuleActionName: an action name a function-calling API refuses.
	RuleActionName = rules.CbActionName.ID
)

// MaxActionName is the longest action name function-calling APIs accept
// (the same bound as cb-name-invalid's 58 characters for a server name).
const MaxActionName = 64

// ServerTools is what one server listed, with the action set its tools join.
type ServerTools struct {
	Server    string
	ActionSet string
	Tools     []Tool
}

// Tool is one tool as the server listed it. InputSchema is the schema as
// an MCP client decodes it (a map[string]any, or nil).
type Tool struct {
	Name        string
	Description string
	InputSchema any
}

// Action is one action of the registry.
type Action struct {
	Name        string
	Set         string
	Description string
	Input       Input
}

// Input is an action's input schema: one field per property of the tool's
// schema, in name order (an MCP client receives the properties as a JSON
// object, whose order it does not keep). Dropped names the keywords of the
// schema's top level that the translation does not carry.
type Input struct {
	Fields  []Field  `json:"fields"`
	Dropped []string `json:"dropped,omitempty"`
}

// Field is one property of an action's input schema. Type is the
// property's type as written (a string, or a list of strings), nil when it
// has none; Example is the property's default, as JSON (absent: nil).
// Dropped names the keywords of the property the translation does not
// carry (items, properties, oneOf, $ref, minimum, …), sorted.
type Field struct {
	Name        string          `json:"name"`
	Type        any             `json:"type,omitempty"`
	Description string          `json:"description,omitempty"`
	Required    bool            `json:"required"`
	Enum        []any           `json:"enum,omitempty"`
	Example     json.RawMessage `json:"example,omitempty"`
	Dropped     []string        `json:"dropped,omitempty"`
}

// Registered is the fate of one tool: its action, and the rule (with its
// message and suggestion) when something is wrong with the action's name.
type Registered struct {
	Server string
	Tool   string
	Action Action
	Rule   string
	// Message and Suggestion explain Rule.
	Message    string
	Suggestion string
}

// ActionName is the action a tool of server becomes: mcp_<server>_<tool>.
func ActionName(server, tool string) string { return "mcp_" + server + "_" + tool }

// ActionDescription is an action's description: [MCP:<server>] followed by
// the tool's own description.
func ActionDescription(server, description string) string {
	return "[MCP:" + server + "] " + description
}

// TranslateTool is the action a tool of server becomes, in actionSet.
func TranslateTool(server, actionSet string, t Tool) Action {
	return Action{Name: ActionName(server, t.Name), Set: actionSet,
		Description: ActionDescription(server, t.Description), Input: TranslateSchema(t.InputSchema)}
}

// carriedTop are the keywords of a tool's schema that the translation
// reads ($schema only says which draft it is).
var carriedTop = map[string]bool{"type": true, "properties": true, "required": true, "$schema": true}

// carriedField are the keywords of a property that the translation reads.
var carriedField = map[string]bool{"type": true, "description": true, "enum": true, "default": true}

// TranslateSchema translates a tool's input schema as the seed describes:
// each property of the top-level "properties" keeps its type and
// description, the names in "required" are marked required, "enum" is
// carried, and "default" becomes the example. Nothing else is: a nested
// object keeps type "object" without its properties, an array type
// "array" without its items, and oneOf/anyOf/allOf and $ref are not
// followed (a property written only as a $ref has no type). What is not
// carried is listed in Dropped, so that an operator sees what the agent
// will not.
func TranslateSchema(schema any) Input {
	in := Input{Fields: []Field{}}
	root, ok := schema.(map[string]any)
	if !ok {
		if schema != nil {
			in.Dropped = []string{"(the schema is not an object)"}
		}
		return in
	}
	in.Dropped = droppedKeys(root, carriedTop)
	required := map[string]bool{}
	if list, ok := root["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	props, _ := root["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		in.Fields = append(in.Fields, translateField(name, props[name], required[name]))
	}
	return in
}

func translateField(name string, schema any, required bool) Field {
	f := Field{Name: name, Required: required}
	p, ok := schema.(map[string]any)
	if !ok {
		return f // true, false: a property without keywords
	}
	switch t := p["type"].(type) {
	case string:
		f.Type = t
	case []any:
		f.Type = t
	}
	f.Description, _ = p["description"].(string)
	if e, ok := p["enum"].([]any); ok {
		f.Enum = e
	}
	if d, ok := p["default"]; ok {
		if raw, err := json.Marshal(d); err == nil {
			f.Example = raw
		}
	}
	f.Dropped = droppedKeys(p, carriedField)
	return f
}

// droppedKeys are the keys of m not in carried, sorted.
func droppedKeys(m map[string]any, carried map[string]bool) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		if !carried[k] {
			out = append(out, k)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ActionNameProblem says why a function-calling API refuses the action
// name (the agent's model is offered the action by this name), "" when it
// does not: 1 to 64 characters of A-Z a-z 0-9 _ -.
func ActionNameProblem(name string) string {
	var bad []string
	seen := map[rune]bool{}
	for _, r := range name {
		if r < utf8.RuneSelf && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			continue
		}
		if !seen[r] {
			seen[r] = true
			bad = append(bad, fmt.Sprintf("%q", r))
		}
	}
	n := utf8.RuneCountInString(name)
	switch {
	case len(bad) > 0 && n > MaxActionName:
		return fmt.Sprintf("it has %d characters (at most %d) and holds %s, outside A-Z a-z 0-9 _ -", n, MaxActionName, strings.Join(bad, " "))
	case len(bad) > 0:
		return "it holds " + strings.Join(bad, " ") + ", outside A-Z a-z 0-9 _ -"
	case n > MaxActionName:
		return fmt.Sprintf("it has %d characters, at most %d are accepted", n, MaxActionName)
	}
	return ""
}

// Assign builds the action registry of the servers' tools, servers in the
// order given (file order) and tools in listing order, and returns one
// Registered per tool in that order. builtins are the host's own action
// names. The registry holds one action per name, so a name made twice, or
// a built-in's, loses one of the two in the host (which one depends on the
// order the servers connect): the later tool (in file order) carries the
// rule. An action name the API refuses is reported too; a tool without a
// name makes mcp_<server>_ and is reported as such.
func Assign(servers []ServerTools, builtins []string) []Registered {
	builtin := map[string]bool{}
	for _, b := range builtins {
		builtin[b] = true
	}
	type owner struct{ server, tool string }
	first := map[string]owner{}
	var out []Registered
	for _, s := range servers {
		for _, t := range s.Tools {
			a := TranslateTool(s.Server, s.ActionSet, t)
			r := Registered{Server: s.Server, Tool: t.Name, Action: a}
			subject := fmt.Sprintf("tool %q of server %q", t.Name, s.Server)
			switch o, taken := first[a.Name]; {
			case builtin[a.Name]:
				r.Rule = RuleActionBuiltin
				r.Message = fmt.Sprintf("%s becomes the action %q, the name of a built-in action: the registry holds one action per name, so one of them is lost", subject, a.Name)
				r.Suggestion = fmt.Sprintf("rename server %q (its name is the prefix of its actions)", s.Server)
			case taken:
				r.Rule = RuleActionCollision
				r.Message = fmt.Sprintf("%s becomes the action %q, as tool %q of server %q does: the registry holds one action per name, so one of them is lost (which one depends on the order the servers connect)",
					subject, a.Name, o.tool, o.server)
				r.Suggestion = "rename one of the servers so that their prefixes mcp_<server>_ do not run into each other"
				if o.server == s.Server {
					r.Suggestion = fmt.Sprintf("server %q lists the name twice; ask its maintainers, or disable it", s.Server)
				}
			default:
				first[a.Name] = owner{s.Server, t.Name}
			}
			if r.Rule == "" {
				if p := ActionNameProblem(a.Name); p != "" || t.Name == "" {
					if t.Name == "" {
						p = "the tool has no name"
					}
					r.Rule = RuleActionName
					r.Message = fmt.Sprintf("%s becomes the action %q, which a function-calling API refuses: %s; a task that selects the action set %q fails", subject, a.Name, p, a.Set)
					r.Suggestion = fmt.Sprintf("disable server %q, or shorten its name if the length is the problem", s.Server)
				}
			}
			out = append(out, r)
		}
	}
	return out
}
