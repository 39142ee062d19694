package toolreport

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpc-dev/mcpc/compile/craftbot/actions"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/policies/toollock"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ActionRow is one line of a craftbot report: one action (a tool of a
// server, as CraftBot registers it), a tool CraftBot does not register
// (Action and Input nil, Rule says why), or a server whose tools could not
// be listed (Tool, Action and Input nil).
type ActionRow struct {
	Server    string  `json:"server"`
	Transport string  `json:"transport"`
	Tool      *string `json:"tool"`
	// Action is the action's name, mcp_<server>_<tool>.
	Action *string `json:"action"`
	// Input is the action's input schema exactly as the host's adapter
	// builds it (actions.Input).
	ActionSet   string         `json:"actionSet"`
	Description string         `json:"description,omitempty"`
	Input       *actions.Input `json:"input,omitempty"`
	Rule        *string        `json:"rule"`
	Message     string         `json:"message,omitempty"`
}

// makeCraftbot is Make for a craftbot plan: every enabled server is started
// (stdio, with its env read from the config file through o.Config) or
// connected to (sse, websocket), and its tools become the actions CraftBot
// would register.
func makeCraftbot(ctx context.Context, o Options) (*Report, error) {
	redactor := redact.New(craftbotSecrets(o))
	r := &Report{Redact: redactor.Redact, failed: map[string]bool{}}
	var mu sync.Mutex
	progress := func(e runtime.ProgressEvent) {
		if o.Watch.Server != nil {
			mu.Lock()
			defer mu.Unlock()
			o.Watch.Server(e)
		}
	}
	targets := runtime.CraftbotTargets(o.Plan, o.Env, o.Config)
	var connected []*plan.Server
	for i := range o.Plan.Servers {
		if s := &o.Plan.Servers[i]; s.Enabled && (s.Transport == plan.TransportSSE || s.Transport == plan.TransportWebsocket) {
			connected = append(connected, s)
		}
	}
	if o.Watch.Starting != nil {
		o.Watch.Starting(len(targets) + len(connected))
	}
	remoteFound := make([]runtime.Discovery, len(connected))
	var wg sync.WaitGroup
	for i, s := range connected {
		list := listSSE(s, o.Dial)
		if s.Transport == plan.TransportWebsocket {
			list = listWebSocket(s)
		}
		wg.Go(func() { remoteFound[i] = listRemote(ctx, s, redactor.Redact, progress, list) })
	}
	found := runtime.Discover(ctx, targets, runtime.DiscoverOptions{Concurrency: o.Concurrency, Redact: redactor.Redact, Progress: progress})
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	r.Servers = len(found) + len(remoteFound)
	byName := map[string]*runtime.Discovery{}
	for _, list := range [][]runtime.Discovery{found, remoteFound} {
		for i := range list {
			byName[list[i].Server] = &list[i]
		}
	}
	r.addActions(o.Plan, byName, o.BuiltinActions)
	return r, nil
}

// craftbotSecrets are the values no output may show: the deny-listed host
// variables and every config value an enabled server is launched with.
func craftbotSecrets(o Options) []string {
	secrets := o.Env.Secrets(nil)
	for _, s := range o.Plan.Servers {
		if !s.Enabled || o.Config == nil {
			continue
		}
		for k, v := range s.Env {
			if v != nil && plan.IsConfigRef(k, *v) {
				if val, ok := o.Config(s.Name, k); ok {
					secrets = append(secrets, val)
				}
			}
		}
	}
	return secrets
}

// listed is what listing a connected server gives: every page's tools,
// firstPage of them on the first page.
type listed struct {
	tools         []*mcp.Tool
	firstPage     int
	name, version string
}

// listRemote connects to a server CraftBot connects to rather than
// launches, lists its tools and disconnects, as a Discovery: list does the
// transport's part, listRemote the progress and the failure, whose reason
// names the transport and the url without its query.
func listRemote(ctx context.Context, s *plan.Server, red func(string) string, progress func(runtime.ProgressEvent),
	list func(context.Context) (listed, error)) runtime.Discovery {
	d := runtime.Discovery{Server: s.Name}
	start := time.Now()
	progress(runtime.ProgressEvent{Server: s.Name, Phase: runtime.PhaseStarted})
	got, err := list(ctx)
	d.Elapsed = time.Since(start)
	if err != nil {
		d.Reason = red(s.Transport + " " + remote.URLWithoutQuery(s.URL) + ": " + err.Error())
		d.Err = &runtime.DiscoveryError{Kind: runtime.FailStart, Reason: d.Reason, ExitCode: -1}
		progress(runtime.ProgressEvent{Server: s.Name, Phase: runtime.PhaseFailed, Elapsed: d.Elapsed, Reason: d.Reason})
		return d
	}
	d.Tools, d.FirstPage, d.ServerName, d.ServerVersion = got.tools, got.firstPage, got.name, got.version
	progress(runtime.ProgressEvent{Server: s.Name, Phase: runtime.PhaseDone, Elapsed: d.Elapsed, Tools: len(d.Tools)})
	return d
}

// listSSE lists an sse server with the go-sdk's SSE client, as mcpc remote
// does.
func listSSE(s *plan.Server, opts remote.DialOptions) func(context.Context) (listed, error) {
	return func(ctx context.Context) (listed, error) {
		conn, err := remote.Dial(ctx, remote.Server{Name: s.Name, URL: s.URL, Transport: remote.TransportSSE}, nil, opts)
		if err != nil {
			return listed{}, err
		}
		defer conn.Close()
		lctx, cancel := context.WithTimeout(ctx, websocketListTimeout)
		defer cancel()
		tools, first, err := runtime.ListToolPages(lctx, conn.Session())
		return listed{tools, first, conn.ServerName, conn.ServerVersion}, err
	}
}

// websocketListTimeout bounds the handshake and tools/list of a websocket
// server, as a remote server's connect is bounded (SPEC §4: 15 s).
const websocketListTimeout = 15 * time.Second

// listWebSocket lists a websocket server with internal/transport's client
// (subprotocol mcp, text frames, keepalive, a message cap).
func listWebSocket(s *plan.Server) func(context.Context) (listed, error) {
	return func(ctx context.Context) (listed, error) {
		ctx, cancel := context.WithTimeout(ctx, websocketListTimeout)
		defer cancel()
		tr, err := transport.NewRemote(transport.KindWebSocket, s.URL, nil, transport.RemoteOptions{})
		if err != nil {
			return listed{}, err
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpc", Version: "tools"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			return listed{}, err
		}
		defer cs.Close()
		var got listed
		if got.tools, got.firstPage, err = runtime.ListToolPages(ctx, cs); err != nil {
			return listed{}, err
		}
		if init := cs.InitializeResult(); init != nil && init.ServerInfo != nil {
			got.name, got.version = init.ServerInfo.Name, init.ServerInfo.Version
		}
		return got, nil
	}
}

// addActions makes the rows, diagnostics and lock entries of a craftbot
// plan's enabled servers, in file order. Only the first page of a
// server's tools/list counts: the host reads no other (cb-tools-paged).
func (r *Report) addActions(pl *plan.Plan, byName map[string]*runtime.Discovery, builtins []string) {
	var lists []actions.ServerTools
	for i := range pl.Servers {
		s := &pl.Servers[i]
		if d := byName[s.Name]; d != nil && d.Err == nil {
			st := actions.ServerTools{Server: s.Name, Description: s.Description, ActionSet: s.ActionSet}
			for _, t := range d.Tools[:d.FirstPage] {
				st.Tools = append(st.Tools, actions.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
			}
			lists = append(lists, st)
		}
	}
	// Assign returns one result per listed tool, in the order of lists.
	results := actions.Assign(lists, builtins)
	next := 0
	for i := range pl.Servers {
		s := &pl.Servers[i]
		pos := diag.Pos{File: s.Origin.Path, Line: s.Origin.Line, Column: s.Origin.Column}
		if d := serverNameDiagnostic(s, pos); d != nil {
			r.Diagnostics = append(r.Diagnostics, *d)
		}
		if !s.Enabled {
			continue
		}
		d := byName[s.Name]
		if d.Err != nil {
			r.failed[s.Name] = true
			rule := rules.ServerStartFailed.ID
			r.Actions = append(r.Actions, ActionRow{Server: s.Name, Transport: s.Transport, ActionSet: s.ActionSet, Rule: &rule, Message: d.Reason})
			r.Diagnostics = append(r.Diagnostics, rules.ServerStartFailed.At(pos,
				fmt.Sprintf("server %q did not list its tools: %s", s.Name, d.Reason), failedSuggestion(s)))
			continue
		}
		if later := len(d.Tools) - d.FirstPage; later > 0 {
			r.Diagnostics = append(r.Diagnostics, rules.CbToolsPaged.At(pos,
				fmt.Sprintf("server %q lists its tools in pages: the host reads only the first page (%s) and never registers the %s of the later pages",
					s.Name, plural(d.FirstPage, "tool"), plural(later, "tool")),
				"ask the server's maintainers for an option that lists every tool at once, or split the server; mcpc tools and mcpc run show the first page only"))
		}
		var tools []toollock.ObservedTool
		for _, t := range d.Tools[:d.FirstPage] {
			res := results[next]
			next++
			a := res.Action
			a.Description = r.Redact(a.Description)
			row := ActionRow{Server: s.Name, Transport: s.Transport, Tool: ptr(t.Name), ActionSet: a.Set}
			obs := toollock.ObservedTool{Name: t.Name, Description: res.Action.Description, InputSchema: t.InputSchema}
			if !res.Unregistered {
				row.Action, row.Description, row.Input = ptr(a.Name), a.Description, &a.Input
				obs.VisibleName, obs.InputSchema = a.Name, a.Input
			}
			if res.Rule != "" {
				row.Rule, row.Message = ptr(res.Rule), r.Redact(res.Message)
				if !res.InServer { // said once for the server
					r.Diagnostics = append(r.Diagnostics, actionDiagnostic(res, pos))
				}
			}
			r.Actions = append(r.Actions, row)
			tools = append(tools, obs)
		}
		obs := toollock.ObservedFrom(s, d.ServerName, d.ServerVersion, tools)
		if s.Transport != plan.TransportStdio {
			obs.URL = remote.URLWithoutQuery(s.URL)
		}
		r.observed = append(r.observed, obs)
	}
}

// actionDiagnostic is a tool's rule at its server's entry: the host does
// not register it or its handler calls another name (errors: the server
// is enabled), or a warning.
func actionDiagnostic(res actions.Registered, pos diag.Pos) diag.Diagnostic {
	rule := rules.Of(res.Rule)
	if res.Rule == actions.RuleActionName || res.Rule == actions.RuleActionEscape {
		return rule.ErrorAt(pos, res.Message, res.Suggestion)
	}
	return rule.At(pos, res.Message, res.Suggestion)
}

// serverNameDiagnostic reports a server whose name breaks the handler of
// each of its actions: an error when it is enabled, a warning when not.
func serverNameDiagnostic(s *plan.Server, pos diag.Pos) *diag.Diagnostic {
	t := actions.HandlerTarget(s.Name, "")
	if t.Problem == "" && !t.Misroutes(s.Name, "") {
		return nil
	}
	rule, msg := rules.CbActionName, fmt.Sprintf("server %q: %s, so the Python source of each of its actions' handlers does not compile and the host registers none of its tools", s.Name, t.Problem)
	if t.Problem == "" {
		rule, msg = rules.CbActionEscape, fmt.Sprintf("server %q: the handler of each of its actions decodes the name as a Python string and calls %s", s.Name, t.Calls(s.Name, ""))
		msg = strings.Replace(msg, `tool "" of server`, "server", 1)
	}
	suggestion := fmt.Sprintf("rename server %q: its name is written into the handler of each of its actions", s.Name)
	if !s.Enabled {
		d := rule.At(pos, msg+" (the server is disabled)", suggestion)
		return &d
	}
	d := rule.ErrorAt(pos, msg, suggestion)
	return &d
}

func failedSuggestion(s *plan.Server) string {
	switch s.Transport {
	case plan.TransportSSE, plan.TransportWebsocket:
		return "check that the server runs and answers at its url; it contributes no actions"
	}
	return "run its command by hand in an empty directory to see why; it contributes no actions"
}

// plural is "1 tool", "2 tools".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
