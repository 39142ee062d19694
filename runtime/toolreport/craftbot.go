package toolreport

import (
	"context"
	"fmt"
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
// server, as CraftBot registers it), or a server whose tools could not be
// listed (Tool, Action and Input nil).
type ActionRow struct {
	Server    string  `json:"server"`
	Transport string  `json:"transport"`
	Tool      *string `json:"tool"`
	// Action is the action's name, mcp_<server>_<tool>.
	Action      *string        `json:"action"`
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

// listed is what listing a connected server gives.
type listed struct {
	tools         []*mcp.Tool
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
	d.Tools, d.ServerName, d.ServerVersion = got.tools, got.name, got.version
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
		tools, err := conn.ListTools(ctx)
		return listed{tools, conn.ServerName, conn.ServerVersion}, err
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
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return listed{}, err
			}
			got.tools = append(got.tools, t)
		}
		if init := cs.InitializeResult(); init != nil && init.ServerInfo != nil {
			got.name, got.version = init.ServerInfo.Name, init.ServerInfo.Version
		}
		return got, nil
	}
}

// addActions makes the rows, diagnostics and lock entries of a craftbot
// plan's enabled servers, in file order.
func (r *Report) addActions(pl *plan.Plan, byName map[string]*runtime.Discovery, builtins []string) {
	var lists []actions.ServerTools
	for i := range pl.Servers {
		s := &pl.Servers[i]
		if d := byName[s.Name]; d != nil && d.Err == nil {
			st := actions.ServerTools{Server: s.Name, ActionSet: s.ActionSet}
			for _, t := range d.Tools {
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
		if !s.Enabled {
			continue
		}
		pos := diag.Pos{File: s.Origin.Path, Line: s.Origin.Line, Column: s.Origin.Column}
		d := byName[s.Name]
		if d.Err != nil {
			r.failed[s.Name] = true
			rule := rules.ServerStartFailed.ID
			r.Actions = append(r.Actions, ActionRow{Server: s.Name, Transport: s.Transport, ActionSet: s.ActionSet, Rule: &rule, Message: d.Reason})
			r.Diagnostics = append(r.Diagnostics, rules.ServerStartFailed.At(pos,
				fmt.Sprintf("server %q did not list its tools: %s", s.Name, d.Reason), failedSuggestion(s)))
			continue
		}
		var tools []toollock.ObservedTool
		for _, t := range d.Tools {
			res := results[next]
			next++
			a := res.Action
			a.Description = r.Redact(a.Description)
			row := ActionRow{Server: s.Name, Transport: s.Transport, Tool: ptr(t.Name), Action: ptr(a.Name), ActionSet: a.Set,
				Description: a.Description, Input: &a.Input}
			if res.Rule != "" {
				row.Rule, row.Message = ptr(res.Rule), r.Redact(res.Message)
				r.Diagnostics = append(r.Diagnostics, rules.Of(res.Rule).At(pos, res.Message, res.Suggestion))
			}
			r.Actions = append(r.Actions, row)
			tools = append(tools, toollock.ObservedTool{Name: t.Name, VisibleName: a.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
		obs := toollock.ObservedFrom(s, d.ServerName, d.ServerVersion, tools)
		if s.Transport != plan.TransportStdio {
			obs.URL = remote.URLWithoutQuery(s.URL)
		}
		r.observed = append(r.observed, obs)
	}
}

func failedSuggestion(s *plan.Server) string {
	switch s.Transport {
	case plan.TransportSSE, plan.TransportWebsocket:
		return "check that the server runs and answers at its url; it contributes no actions"
	}
	return "run its command by hand in an empty directory to see why; it contributes no actions"
}
