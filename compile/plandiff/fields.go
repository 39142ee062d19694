package plandiff

import "github.com/mcpc-dev/mcpc/compile/plan"

// field is one field of plan.Server as the diff sees it: its JSON name, the
// effect a change of it has on a running runtime, and how to read it.
type field struct {
	name   string
	effect Effect
	// locates: the field says only where the server is written. It is
	// never a change: a server that differs in nothing else is alike
	// (Diff.Moved counts it), whatever moved it in its file.
	locates bool
	// why says how the runtime uses the field (docs/decisions/0035-diff.md).
	why string
	get func(*plan.Server) any
	// show turns a value into what the output may show (secrets
	// redacted); nil shows the value as it is.
	show func(any) any
}

// fields is the table of what a change of each server field makes a
// runtime do, in the order of their JSON names. It is the one place this is
// decided: Compare reads it, the text and JSON outputs name its effects,
// and a test checks it covers every field of plan.Server, so a new plan
// field cannot be compared by no one. env is compared key by key
// (envChanges), and, where the sides' launches are known, by the values a
// server process starts with (launchChanges), with the effect given here;
// enabled and name are not
// fields of a change but what makes a server enabled, disabled, added or
// removed.
var fields = []field{
	{name: "actionSet", effect: Reregister, why: "craftbot: the action set the server's tools are registered in",
		get: func(s *plan.Server) any { return s.ActionSet }},
	{name: "args", effect: Restart, why: "the process is started with them (runtime.Launch)",
		get: func(s *plan.Server) any { return nonNilArgs(s.Args) }},
	{name: "callTimeoutSeconds", effect: Update, why: "read at every call (the next call uses the new value)",
		get: func(s *plan.Server) any { return s.CallTimeoutSeconds }},
	{name: "cannotStart", effect: Restart, why: "craftbot: a server that cannot start is not started (runtime.CraftbotLaunch); once it can, it is",
		get: func(s *plan.Server) any { return s.CannotStart }},
	{name: "command", effect: Restart, why: "the process is started with it (runtime.Launch)",
		get: func(s *plan.Server) any { return s.Command }},
	{name: "cwd", effect: Restart, why: "the process is started in it (runtime.Launch)",
		get: func(s *plan.Server) any { return s.Cwd }},
	{name: "description", effect: Reregister, why: "craftbot: the summary of the server's action set, which the router selects sets by",
		get: func(s *plan.Server) any { return s.Description }},
	{name: "env", effect: Restart, why: "the process's environment is made from it, its references resolved, at start (plan.LaunchEnv, runtime.CraftbotLaunch)"},
	{name: "idleTimeoutSeconds", effect: Update, why: "read when the idle stop is armed, after each call",
		get: func(s *plan.Server) any { return s.IdleTimeoutSeconds }},
	{name: "origin", effect: None, locates: true, why: "where the server is written; nothing runs differently",
		get: func(s *plan.Server) any { return s.Origin }},
	{name: "parallel", effect: Restart, why: "fixed for a process when it starts (one call at a time is a per-process gate)",
		get: func(s *plan.Server) any { return s.Parallel }},
	{name: "promptSection", effect: Reregister, why: "the agent's prompt text while the server's tools are active, sent with the tools",
		get: func(s *plan.Server) any { return s.PromptSection }},
	{name: "startupTimeoutSeconds", effect: Update, why: "read only while a process starts; a running one is past it",
		get: func(s *plan.Server) any { return s.StartupTimeoutSeconds }},
	{name: "stderrLevel", effect: Restart, why: "fixed for a process when it starts (its stderr reader logs at that level)",
		get: func(s *plan.Server) any { return s.StderrLevel }},
	{name: "toolPrefix", effect: Reregister, why: "the agent-visible names of the server's tools",
		get: func(s *plan.Server) any { return s.ToolPrefix }},
	{name: "transport", effect: Restart, why: "how the server is reached: a new process or connection",
		get: func(s *plan.Server) any { return s.Transport }},
	{name: "url", effect: Restart, why: "where a remote server is reached: a new connection",
		get: func(s *plan.Server) any { return s.URL }, show: func(v any) any { return showURL(v.(string)) }},
}

// identity are the fields of plan.Server that are not changes of a server:
// its name identifies it, enabled makes it enabled or disabled.
var identity = []string{"enabled", "name"}

// autoConnectEffect: autoConnect (craftbot) says whether enabled servers
// connect at startup or on first use. A running runtime keeps its
// connections and applies the new rule to servers it connects from then on.
const autoConnectEffect = Update

func nonNilArgs(a []string) []string {
	if a == nil {
		return []string{}
	}
	return a
}

// effectOf is the effect of the field name in the table.
func effectOf(name string) Effect {
	for _, f := range fields {
		if f.name == name {
			return f.effect
		}
	}
	panic("plandiff: no field " + name + " in the table")
}
