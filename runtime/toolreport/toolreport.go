// Package toolreport makes the report of `mcpc tools` (SPEC §4, §8): it
// starts each enabled server of a plan once (runtime.Discover), connects a
// chat's remote servers when asked (remote.Manager, as a chat does), names
// every tool as the agent sees it (naming), and returns one row per tool,
// the diagnostics and the tool lock. It prints nothing: the CLI prints the
// report, and tests call Make in-process.
//
// For a craftbot plan it starts the stdio servers and connects to the sse
// ones, and reports the action registry CraftBot would build (package
// craftbot's Assign) instead of tool names.
//
// It imports craftbot, diag, internal/transport, naming, plan, redact,
// remote, rules, runtime and toollock.
package toolreport

import (
	"context"
	"fmt"

	"github.com/mcpc-dev/mcpc/compile/naming"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/policies/toollock"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// Row is one line of the report: one tool, or a server that failed.
type Row struct {
	Server      string  `json:"server"`
	Tool        *string `json:"tool"` // the server's own name; null for a server that failed
	Name        *string `json:"name"` // the visible name; null when not registered
	Rule        *string `json:"rule"` // the rule explaining a drop or a change
	Message     string  `json:"message,omitempty"`
	Description string  `json:"description,omitempty"`
}

// Options say what to report on.
type Options struct {
	Plan *plan.Plan
	// Env is the host environment the servers are launched with.
	Env runtime.HostEnv
	// Builtins are the host's built-in tool names; nil means
	// naming.DefaultBuiltins, an empty slice none.
	Builtins []string
	// Concurrency bounds the servers started at once (runtime.Discover).
	Concurrency int
	// Remote, when set, adds the remote servers of a chat workspace.
	Remote *Remote
	// Watch follows the report while it is made; any of its funcs may be nil.
	Watch Watch

	// Config (a craftbot plan) reads the env values the plan refers to
	// (${config:KEY}) from the config file.
	Config runtime.ConfigLookup
	// BuiltinActions (a craftbot plan) are the host's own action names.
	BuiltinActions []string
	// Dial (a craftbot plan) tunes the connections to sse servers.
	Dial remote.DialOptions
}

// Remote names the chat whose remote servers are connected: its workspace
// (servers.json) and the session scope its entries are sealed for.
type Remote struct {
	Workspace string
	Scope     string
	Dial      remote.DialOptions
}

// Watch receives what happens while a report is made, for a progress
// display. Every text it gets is redacted.
type Watch struct {
	// Starting is called once, before the stdio servers start.
	Starting func(servers int)
	// Server is called as each stdio server starts and ends (serialized).
	Server func(runtime.ProgressEvent)
	// NoRemoteFile is called when the workspace has no servers.json.
	NoRemoteFile func(path string)
	// Connecting is called before the remote servers of path are connected.
	Connecting func(path string, servers int)
	// RemoteServer is called with each remote server's status once listed.
	RemoteServer func(name, status string)
}

// Report is what Make found.
type Report struct {
	Rows []Row
	// Actions are the rows of a craftbot plan, instead of Rows.
	Actions     []ActionRow
	Diagnostics []diag.Diagnostic
	// Servers is the number of stdio servers started; RemoteServers the
	// number of remote entries in use (connected or not).
	Servers       int
	RemoteServers int
	// Sources are the lines of servers.json for excerpts, redacted; nil
	// without remote servers.
	Sources diag.Sources
	// Redact takes out the known secrets of the launches: every output of
	// the report goes through it.
	Redact func(string) string

	observed []toollock.Observed
	failed   map[string]bool
}

// InputError is an input Make could not read (servers.json); its message is
// redacted.
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

// Make starts every enabled server of o.Plan, lists its tools and names
// them, then (with o.Remote) connects the chat's remote servers and names
// their allowed tools after them. A craftbot plan's servers are started or
// connected to and their tools become actions (Report.Actions). A server that fails is a row and a
// diagnostic (server-start-failed); the others carry on. When ctx ends,
// every server is stopped and Make returns ctx's error.
func Make(ctx context.Context, o Options) (*Report, error) {
	if o.Plan.Profile == plan.ProfileCraftbot {
		return makeCraftbot(ctx, o)
	}
	hostEnv := o.Env
	var secrets []string
	for i := range o.Plan.Servers {
		secrets = append(secrets, hostEnv.Secrets(&o.Plan.Servers[i])...)
	}
	redactor := redact.New(secrets)
	r := &Report{Redact: redactor.Redact, failed: map[string]bool{}}

	targets := runtime.Targets(o.Plan, hostEnv)
	opts := runtime.DiscoverOptions{Concurrency: o.Concurrency, Redact: redactor.Redact, Progress: o.Watch.Server}
	if o.Watch.Starting != nil {
		o.Watch.Starting(len(targets))
	}
	found := runtime.Discover(ctx, targets, opts)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	r.Servers = len(found)
	builtins := o.Builtins
	if builtins == nil {
		builtins = naming.DefaultBuiltins
	}
	taken := r.addServers(o.Plan, found, builtins)

	if o.Remote != nil {
		if err := r.addRemote(ctx, o, taken, redactor); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return r, nil
}

// addServers names the tools of the stdio servers, in plan order, and
// returns the names taken (built-ins and registered tools), which the
// remote tools are named against.
func (r *Report) addServers(pl *plan.Plan, found []runtime.Discovery, builtins []string) map[string]bool {
	byName := map[string]*runtime.Discovery{}
	for i := range found {
		byName[found[i].Server] = &found[i]
	}
	var lists []naming.ServerTools
	for i := range pl.Servers {
		s := &pl.Servers[i]
		if d := byName[s.Name]; d != nil && d.Err == nil {
			st := naming.ServerTools{Server: s.Name, Prefix: s.ToolPrefix}
			for _, t := range d.Tools {
				st.Tools = append(st.Tools, t.Name)
			}
			lists = append(lists, st)
		}
	}
	// Assign returns one result per listed tool, in the order of lists.
	results := naming.Assign(lists, naming.Options{Builtins: builtins})
	next := 0
	for i := range pl.Servers {
		s := &pl.Servers[i]
		d := byName[s.Name]
		if d == nil {
			continue // disabled
		}
		pos := diag.Pos{File: s.Origin.Path, Line: s.Origin.Line, Column: s.Origin.Column}
		if d.Err != nil {
			r.failed[s.Name] = true
			rule := rules.ServerStartFailed.ID
			r.Rows = append(r.Rows, Row{Server: s.Name, Rule: &rule, Message: d.Reason})
			r.Diagnostics = append(r.Diagnostics, rules.ServerStartFailed.At(pos,
				fmt.Sprintf("server %q did not list its tools: %s", s.Name, d.Reason),
				"run its command by hand in an empty directory to see why; it contributes no tools"))
			continue
		}
		var tools []toollock.ObservedTool
		for _, t := range d.Tools {
			res := results[next]
			next++
			row := Row{Server: s.Name, Tool: ptr(t.Name), Description: r.Redact(t.Description)}
			if res.Name != "" {
				row.Name = ptr(res.Name)
			}
			if res.Rule != "" {
				row.Rule, row.Message = ptr(res.Rule), r.Redact(res.Message)
				r.Diagnostics = append(r.Diagnostics, rules.Of(res.Rule).At(pos, res.Message, res.Suggestion))
			}
			r.Rows = append(r.Rows, row)
			tools = append(tools, toollock.ObservedTool{Name: t.Name, VisibleName: res.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
		r.observed = append(r.observed, toollock.ObservedFrom(s, d.ServerName, d.ServerVersion, tools))
	}
	taken := map[string]bool{}
	for _, b := range builtins {
		taken[b] = true
	}
	for _, res := range results {
		if res.Name != "" {
			taken[res.Name] = true
		}
	}
	return taken
}

// Visible counts the tools the agent sees (a craftbot plan: the distinct
// action names).
func (r *Report) Visible() int {
	if r.Actions != nil {
		names := map[string]bool{}
		for _, a := range r.Actions {
			if a.Action != nil {
				names[*a.Action] = true
			}
		}
		return len(names)
	}
	n := 0
	for _, row := range r.Rows {
		if row.Name != nil {
			n++
		}
	}
	return n
}

// Lock is the tool lock of the stdio servers. With check (a lock read
// before Make), it returns the differences from check (tool-changed);
// without, the lock to write at path, or, when a server failed, nothing
// and the diagnostic that says why.
func (r *Report) Lock(path string, check *toollock.File) ([]byte, []diag.Diagnostic, error) {
	lock, err := toollock.Build(r.observed)
	if err != nil {
		return nil, nil, err
	}
	if check != nil {
		return nil, check.Check(lock, r.failed), nil
	}
	if len(r.failed) > 0 {
		return nil, []diag.Diagnostic{rules.ServerStartFailed.At(diag.Pos{File: path},
			fmt.Sprintf("the lock was not written: %d server(s) did not list their tools", len(r.failed)),
			"fix the servers above, then write the lock again")}, nil
	}
	out, err := toollock.Encode(lock)
	return out, nil, err
}

func ptr(s string) *string { return &s }
