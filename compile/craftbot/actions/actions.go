// Package actions is how CraftBot turns the tools its servers list into
// actions: the names, descriptions and input schemas of the action
// registry, as CraftBot's adapter (agent_core/core/impl/mcp/adapter.py,
// read at 605efb4, 2026-03-13) builds them, and the rules that report what
// breaks there. It is the part of the craftbot profile a runtime needs, so
// it imports nothing of the compiler: only the rule registry.
package actions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Rules of the action registry, by id; each is declared in package rules.
var (
	// RuleActionCollision: two tools make the same action name.
	RuleActionCollision = rules.CbActionCollision.ID
	// RuleActionBuiltin: a tool's action name is a built-in action's.
	RuleActionBuiltin = rules.CbActionBuiltin.ID
	// RuleActionName: the handler's source does not compile with the name.
	RuleActionName = rules.CbActionName.ID
	// RuleActionEscape: the handler calls another name than the listed one.
	RuleActionEscape = rules.CbActionEscape.ID
	// RuleActionSchema: the adapter fails on the tool's input schema.
	RuleActionSchema = rules.CbActionSchema.ID
	// RuleActionInternalArg: a property the host strips from every call.
	RuleActionInternalArg = rules.CbActionInternalArg.ID
)

// ServerTools is what one server listed, with the action set its tools
// join and the server's description (the fallback of a tool's).
type ServerTools struct {
	Server      string
	Description string
	ActionSet   string
	Tools       []Tool
}

// Tool is one tool as the server listed it. InputSchema is the schema as
// an MCP client decodes it (a map[string]any, or nil).
type Tool struct {
	Name        string
	Description string
	InputSchema any
}

// Action is one action of the registry. Server and Tool are what its
// handler calls: the listed names, unless a backslash in one of them
// makes the handler's string literal another name (HandlerTarget).
type Action struct {
	Name        string
	Set         string
	Description string
	Input       Input
	Server      string
	Tool        string
}

// Input is an action's input schema exactly as the adapter builds it: a
// map from property name to its Field. JSON has no order for it; mcpc
// prints it in name order.
type Input map[string]Field

// Field is one property of an action's input schema, holding exactly the
// keys the adapter sets: "type" (always: the property's own, as written,
// or "string" when it has none), "description" (when the property has one,
// as written; a nested object's, or "Nested object"), "example" (the
// property's default, when it has one), "required" (true, only when the
// schema's required names it), "enum" (as written, when present) and
// "items" (an array's, verbatim).
type Field map[string]any

// Registered is the fate of one tool: its action, whether the host
// registers it at all, and the rule (with its message and suggestion)
// when something is wrong with it.
type Registered struct {
	Server string
	Tool   string
	Action Action
	// Unregistered: the host's adapter fails on the tool (Rule says why),
	// so no action exists; Action.Input is then empty.
	Unregistered bool
	// InServer: Rule (cb-action-name, cb-action-escape) is caused by the
	// server's name, so every tool of the server has it.
	InServer bool
	Rule     string
	// Message and Suggestion explain Rule.
	Message    string
	Suggestion string
}

// ActionName is the action a tool of server becomes: mcp_<server>_<tool>.
func ActionName(server, tool string) string { return "mcp_" + server + "_" + tool }

// ActionDescription is an action's description: [MCP:<server>] followed by
// the tool's own description; for a tool without one, "<tool> from <the
// server's description>", or "MCP tool: <tool>" when the server has none
// either.
func ActionDescription(server, serverDescription, tool, description string) string {
	switch {
	case description != "":
		return "[MCP:" + server + "] " + description
	case serverDescription != "":
		return "[MCP:" + server + "] " + tool + " from " + serverDescription
	}
	return "[MCP:" + server + "] MCP tool: " + tool
}

// TranslateTool is the action a tool of server becomes, in actionSet; the
// problem is why the adapter fails on the tool's input schema ("" when it
// does not).
func TranslateTool(server, serverDescription, actionSet string, t Tool) (Action, string) {
	in, problem := TranslateSchema(t.InputSchema)
	a := Action{Name: ActionName(server, t.Name), Set: actionSet, Input: in,
		Description: ActionDescription(server, serverDescription, t.Name, t.Description), Server: server, Tool: t.Name}
	return a, problem
}

// TranslateSchema builds the input schema as the adapter does, or says why
// the adapter fails on it (the tool is then not registered). A falsy
// schema (absent, null, {}, [], "", 0, false) or one whose "type" is not
// "object" gives the empty input (an action without inputs, still
// registered); properties absent are none; required names absent from
// properties are ignored.
func TranslateSchema(schema any) (Input, string) {
	in := Input{}
	if falsy(schema) {
		return in, ""
	}
	root, ok := schema.(map[string]any)
	if !ok {
		return in, "the input schema is " + jsonKind(schema) + ", not an object"
	}
	if t, _ := root["type"].(string); t != "object" {
		return in, ""
	}
	props := map[string]any{}
	if p, present := root["properties"]; present {
		if props, ok = p.(map[string]any); !ok {
			return in, "its properties are " + jsonKind(p) + ", not an object"
		}
	}
	required := map[string]bool{}
	if r, present := root["required"]; present {
		var problem string
		if required, problem = requiredNames(r); problem != "" {
			return in, problem
		}
	}
	for _, name := range sortedKeys(props) {
		p, ok := props[name].(map[string]any)
		if !ok {
			return Input{}, fmt.Sprintf("its property %q is %s, not an object", name, jsonKind(props[name]))
		}
		in[name] = translateField(p, required[name])
	}
	return in, ""
}

// requiredNames is the set the adapter makes of required: a list's
// elements, a string's characters, an object's keys. Anything else, or a
// list holding a list or an object, fails the adapter.
func requiredNames(r any) (map[string]bool, string) {
	out := map[string]bool{}
	switch v := r.(type) {
	case []any:
		for _, e := range v {
			switch s := e.(type) {
			case string:
				out[s] = true
			case []any, map[string]any:
				return nil, "its required list holds " + jsonKind(e) + ", which cannot be a name"
			}
		}
	case string:
		for _, c := range v {
			out[string(c)] = true
		}
	case map[string]any:
		for k := range v {
			out[k] = true
		}
	default:
		return nil, "its required is " + jsonKind(r) + ", not a list"
	}
	return out, ""
}

func translateField(p map[string]any, required bool) Field {
	f := Field{"type": "string"}
	if t, ok := p["type"]; ok {
		f["type"] = t
	}
	if d, ok := p["description"]; ok {
		f["description"] = d
	}
	if d, ok := p["default"]; ok {
		f["example"] = d
	}
	if required {
		f["required"] = true
	}
	if e, ok := p["enum"]; ok {
		f["enum"] = e
	}
	t, _ := p["type"].(string)
	if _, ok := p["properties"]; ok && t == "object" {
		f["description"] = "Nested object"
		if d, ok := p["description"]; ok {
			f["description"] = d
		}
	}
	if items, ok := p["items"]; ok && t == "array" {
		f["items"] = items
	}
	return f
}

// falsy is Python's truthiness of a decoded JSON value.
func falsy(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// jsonKind names a decoded JSON value's kind for a message.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	}
	return "an object"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// InternalArgs are the properties of an input whose names start with _:
// the host's handler removes such arguments before it calls the tool, so
// the tool never receives them. Sorted.
func InternalArgs(in Input) []string {
	var out []string
	for name := range in {
		if strings.HasPrefix(name, "_") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Assign builds the action registry of the servers' tools, servers in the
// order given (file order) and tools in listing order, and returns one
// Registered per tool in that order, with at most one rule each, the
// strongest first: the host does not register it (cb-action-name,
// cb-action-schema), its handler calls another name (cb-action-escape),
// its name is a built-in's or taken (cb-action-builtin,
// cb-action-collision: the later tool in file order carries it), a
// property it never receives (cb-action-internal-arg). builtins are the
// host's own action names.
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
			a, schemaProblem := TranslateTool(s.Server, s.Description, s.ActionSet, t)
			r := Registered{Server: s.Server, Tool: t.Name, Action: a}
			subject := fmt.Sprintf("tool %q of server %q", t.Name, s.Server)
			target := HandlerTarget(s.Server, t.Name)
			a.Server, a.Tool = target.Server, target.Tool
			r.Action = a
			o, taken := first[a.Name]
			switch {
			case target.Problem != "":
				r.Unregistered, r.Rule = true, RuleActionName
				r.Message = fmt.Sprintf("%s: %s, so the Python source of its action's handler does not compile and the host never registers the action %q", subject, target.Problem, a.Name)
				if strings.Contains(target.Problem, `"`) {
					r.Message += ` (unless what follows the quote happens to be Python, which the handler then runs as code)`
				}
				r.Suggestion = nameSuggestion(s.Server, target)
			case schemaProblem != "":
				r.Unregistered, r.Rule = true, RuleActionSchema
				r.Message = fmt.Sprintf("%s: the host's adapter fails on its input schema (%s), so the host never registers the action %q", subject, schemaProblem, a.Name)
				r.Suggestion = fmt.Sprintf("ask the maintainers of server %q to fix the tool's input schema, or disable the server", s.Server)
			case target.Misroutes(s.Server, t.Name):
				r.Rule = RuleActionEscape
				r.Message = fmt.Sprintf("%s becomes the action %q, whose handler decodes the name as a Python string: it calls %s", subject, a.Name, target.Calls(s.Server, t.Name))
				r.Suggestion = nameSuggestion(s.Server, target)
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
			}
			r.InServer = (r.Rule == RuleActionName || r.Rule == RuleActionEscape) && (target.InServer || target.Server != s.Server)
			if r.Unregistered {
				r.Action.Input = Input{}
			} else if !taken && !builtin[a.Name] {
				first[a.Name] = owner{s.Server, t.Name}
			}
			if args := InternalArgs(r.Action.Input); r.Rule == "" && len(args) > 0 {
				r.Rule = RuleActionInternalArg
				r.Message, r.Suggestion = internalArgMessage(subject, a, args, s.Server)
			}
			out = append(out, r)
		}
	}
	return out
}

func internalArgMessage(subject string, a Action, args []string, server string) (string, string) {
	var req []string
	for _, n := range args {
		if a.Input[n]["required"] == true {
			req = append(req, n)
		}
	}
	msg := fmt.Sprintf("%s has the input %s, but the host's handler removes every argument whose name starts with _ before it calls the tool: the tool never receives %s",
		subject, quoteList(args), plural(len(args), "it", "them"))
	if len(req) > 0 {
		msg += fmt.Sprintf("; %s required, so every call of %q lacks %s", quoteList(req)+plural(len(req), " is", " are"), a.Name, plural(len(req), "it", "them"))
	}
	return msg, fmt.Sprintf("ask the maintainers of server %q to rename the input, or disable the server", server)
}

func nameSuggestion(server string, t Target) string {
	if t.InServer {
		return fmt.Sprintf("rename server %q: its name is written into the handler of each of its actions", server)
	}
	return fmt.Sprintf("ask the maintainers of server %q to rename the tool, or disable the server", server)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
