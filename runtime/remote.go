package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remoteset"
)

// Remote servers of a chat (SPEC §3 and the remote part of §4): each chat
// with a session scope owns a remoteset.Set over the servers.json of
// its workspace, on the host's clock and under its goroutine tracking. It starts connecting when the chat is created; the chat's
// listings (Chat.Tools, tools/list through a Gateway) wait for the first
// connects, retry unreachable servers that are due, and re-read
// servers.json, so that `mcpc remote add|remove|tools` take effect without
// a restart. Remote tools come after the stdio tools; a stdio tool (or a
// built-in) wins a name both want.

// RemoteOptions enable the chats' remote servers (HostOptions.Remote). The
// zero value uses SPEC's timeouts and the host environment's secret.
type RemoteOptions = remoteset.Options

// noScopeReason is why a chat without a session scope has no remote
// servers.
const noScopeReason = "the chat has no session scope, which sealed entries are bound to"

// chatRemote is a chat's remote servers.
type chatRemote struct {
	c        *Chat
	scope    string
	m        *remoteset.Set // nil: disabled
	disabled string

	mu       sync.Mutex
	applied  uint64 // the RemoteListing.Seq whose tools are in use
	gen      uint64 // bumped whenever tools change
	tools    []*Tool
	byName   map[string]*Tool
	nsecrets int
	logged   map[string]string // what was last logged, per subject
	section  string            // the last listing's PromptSection
}

// promptSection is the system-prompt note on the chat's remote servers
// that are unavailable or skipped ("" for none).
func (r *chatRemote) promptSection() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.section
}

// newChatRemote prepares a chat's remote servers; nothing is read or
// connected before start.
func newChatRemote(c *Chat, scope string) *chatRemote {
	h := c.h
	r := &chatRemote{c: c, scope: scope, byName: map[string]*Tool{}, logged: map[string]string{}}
	if scope == "" {
		r.disabled = noScopeReason
		return r
	}
	ro := *h.opts.Remote
	if ro.Dial.Transport == nil {
		ro.Dial.Transport = h.remoteHTTP
	}
	ro.Secret = h.remoteSecret
	m, err := remoteset.New(c.workspace, scope, ro, remoteset.Hooks{
		Clock:     h.clock,
		Context:   h.ctx,
		Track:     h.track,
		Log:       func(server, msg string) { h.log("Warning", c.id, server, "%s", msg) },
		Changed:   r.relist,
		Route:     r.route,
		Connected: r.connected,
	})
	if err != nil {
		r.disabled = h.Redact(err.Error())
		return r
	}
	r.m = m
	return r
}

// start reads servers.json and starts connecting in the background.
func (r *chatRemote) start() {
	if r == nil || r.m == nil {
		return
	}
	r.m.Start()
	r.syncSecrets()
}

// relist lists the remote tools again after a call found servers.json
// changed, and brings the chat's gateway up to date: its clients hear of
// it (notifications/tools/list_changed) without listing first.
func (r *chatRemote) relist(ctx context.Context) {
	h := r.c.h
	table := h.currentTable()
	if r.refresh(ctx, table) != nil {
		return
	}
	if up := r.c.upstream(); up != nil {
		up.ToolsChanged(table)
	}
}

// close disconnects every remote server of the chat.
func (r *chatRemote) close() {
	if r != nil && r.m != nil {
		r.m.Close()
	}
}

// syncSecrets adds the header values of the entries the chat has opened to
// the chat's redactor and to the host's log redactor.
func (r *chatRemote) syncSecrets() {
	secrets := r.m.Secrets()
	r.mu.Lock()
	// The manager's secrets only grow: a smaller set is an older snapshot.
	if len(secrets) <= r.nsecrets {
		r.mu.Unlock()
		return
	}
	r.nsecrets = len(secrets)
	sort.Strings(secrets)
	forms := r.c.h.knownForms()
	for _, s := range secrets {
		forms = append(forms, secretForms(s)...)
	}
	r.c.red.Store(redact.New(forms))
	r.mu.Unlock()
	r.c.h.addRemoteSecrets(secrets)
}

// snapshot returns the remote tools in use and their generation.
func (r *chatRemote) snapshot() ([]*Tool, uint64) {
	if r == nil {
		return nil, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tools, r.gen
}

// find returns the remote tool with the visible name, if the last listing
// has it.
func (r *chatRemote) find(name string) *Tool {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byName[name]
}

// refresh lists the remote tools (see remoteset.Set.List), naming them
// against the built-ins and the stdio tools of table, and makes the result
// the chat's remote tools.
func (r *chatRemote) refresh(ctx context.Context, table *ToolTable) error {
	if r == nil || r.m == nil {
		return nil
	}
	h := r.c.h
	builtins := h.Builtins()
	taken := func(name string) bool {
		return table.byName[name] != nil || slices.Contains(builtins, name)
	}
	l, err := r.m.List(ctx, taken)
	if l == nil {
		if h.isClosed() {
			return ErrHostClosed
		}
		return ErrChatClosed
	}
	r.syncSecrets()
	if err != nil {
		return err
	}
	r.apply(l)
	r.logListing(l)
	return nil
}

// apply makes the tools of the listing the chat's remote tools, unless a
// later listing (remoteset.Listing.Seq) was applied already, as Call does. A tool whose definition did not change
// keeps its *Tool, so that a gateway does not register it again (which
// would notify the clients).
func (r *chatRemote) apply(l *remoteset.Listing) {
	c := r.c
	r.mu.Lock()
	defer r.mu.Unlock()
	if l.Seq < r.applied {
		return
	}
	r.applied = l.Seq
	r.section = l.PromptSection()
	old := r.byName
	list := make([]*Tool, 0, len(l.Tools))
	byName := make(map[string]*Tool, len(l.Tools))
	for _, lt := range l.Tools {
		if reason := unservable(lt.Def); reason != "" {
			key := "unservable:" + lt.Server + "\x00" + lt.ServerTool
			if r.logged[key] == "" {
				r.logged[key] = reason
				c.h.log("Warning", c.id, lt.Server, "tool %q of remote server %q is not served: %s", lt.ServerTool, lt.Server, reason)
			}
			continue
		}
		def, ok := redactTool(c.redactor(), lt.Def, lt.Def.Name)
		if !ok {
			key := "unredactable:" + lt.Server + "\x00" + lt.ServerTool
			if r.logged[key] == "" {
				r.logged[key] = "x"
				c.h.log("Warning", c.id, lt.Server, "tool %q of remote server %q is not served: its definition could not be checked for secrets", lt.ServerTool, lt.Server)
			}
			continue
		}
		t := &Tool{Name: lt.Name, Server: lt.Server, ServerTool: lt.ServerTool, Def: def, Remote: true}
		if prev := old[t.Name]; prev != nil && sameTool(prev, t) {
			t = prev
		}
		list = append(list, t)
		byName[t.Name] = t
	}
	changed := len(list) != len(r.tools)
	for i := 0; !changed && i < len(list); i++ {
		changed = list[i] != r.tools[i]
	}
	if !changed {
		return
	}
	r.tools, r.byName = list, byName
	r.gen++
}

// sameTool reports whether two remote tools are the same for an agent.
func sameTool(a, b *Tool) bool {
	if a.Name != b.Name || a.Server != b.Server || a.ServerTool != b.ServerTool {
		return false
	}
	x, err1 := json.Marshal(a.Def)
	y, err2 := json.Marshal(b.Def)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// logListing logs what changed since the last listing: servers that
// connected or became unavailable, skipped entries, a file that cannot be
// used, naming warnings.
func (r *chatRemote) logListing(l *remoteset.Listing) {
	c := r.c
	h := c.h
	type entry struct{ level, server, msg string }
	var out []entry
	r.mu.Lock()
	note := func(key, value string, e entry) {
		if r.logged[key] == value {
			return
		}
		r.logged[key] = value
		out = append(out, e)
	}
	for _, s := range l.Servers {
		switch s.Phase {
		case remoteset.Connected:
			note("server:"+s.Name, s.State, entry{"Information", s.Name,
				fmt.Sprintf("remote server %s (%s) %s over %s", s.Name, s.URL, s.State, transportName(s.Connected))})
		case remoteset.Unavailable:
			retry := ""
			if !s.RetryAt.IsZero() {
				retry = fmt.Sprintf("; the first listing after %s tries it again", formatSeconds(s.RetryDelay().Round(time.Second)))
			}
			// Keyed by the retry time too: every failed retry is logged,
			// with its own, longer, delay.
			note("server:"+s.Name, s.State+"\x00"+s.RetryAt.String(), entry{"Warning", s.Name,
				fmt.Sprintf("remote server %s (%s) is unavailable: %s%s", s.Name, s.URL, s.Reason, retry)})
		}
	}
	for _, s := range l.Skipped {
		name := s.Name
		if name == "" {
			name = "(no name)"
		}
		note("skipped:"+s.Position, name+"\x00"+s.Reason, entry{"Warning", s.Name,
			fmt.Sprintf("remote server entry %s at %s is skipped: %s", name, s.Position, s.Reason)})
	}
	if l.FileProblem != "" {
		note("file", l.FileProblem, entry{"Warning", "",
			fmt.Sprintf("%s is not used: %s", remote.Path(c.workspace), l.FileProblem)})
	}
	for _, w := range l.Warnings {
		msg := w.Message
		if w.Suggestion != "" {
			msg += "; " + w.Suggestion
		}
		note("warning:"+w.Rule+"\x00"+w.Message, "1", entry{"Warning", "", msg + " [" + w.Rule + "]"})
	}
	r.mu.Unlock()
	for _, e := range out {
		h.log(e.level, c.id, e.server, "%s", c.redact(e.msg))
	}
}

func transportName(t string) string {
	switch t {
	case remote.TransportSSE:
		return "SSE"
	case remote.TransportHTTP:
		return "Streamable HTTP"
	}
	return t
}

// call calls a remote tool of the chat (see remoteset.Set.Call; the
// errors are *CallError, Remote set), and redacts the result with the
// chat's secrets.
func (r *chatRemote) call(ctx context.Context, tool *Tool, args any) (*mcp.CallToolResult, error) {
	res, err := r.m.Call(ctx, tool.Name, args)
	if err == nil {
		return redactResult(r.c.redactor(), res), nil
	}
	if r.c.h.isClosed() {
		return nil, ErrHostClosed
	}
	var ce *remoteset.CallError
	if errors.As(err, &ce) {
		return nil, &CallError{Kind: CallErrorKind(ce.Kind), Server: ce.Server, Tool: ce.Tool, Code: ce.Code, Message: ce.Message, Remote: true}
	}
	return nil, err
}

// status is the chat's remote part of its status: the servers as the set
// sees them, with the tools the chat serves, every text redacted with the
// chat's secrets.
func (r *chatRemote) status() *RemoteStatus {
	if r == nil {
		return nil
	}
	c := r.c
	st := &RemoteStatus{Scope: r.scope, Disabled: r.disabled, Servers: []RemoteServerStatus{}}
	if r.m == nil {
		return st
	}
	st.File = remote.Path(c.workspace)
	servers, skipped, problem := r.m.Status()
	tools, _ := r.snapshot()
	names := map[string][]string{}
	for _, t := range tools {
		names[t.Server] = append(names[t.Server], t.Name)
	}
	for _, s := range servers {
		s.ToolNames = names[s.Name]
		if s.ToolNames == nil {
			s.ToolNames = []string{}
		}
		s.Tools = len(s.ToolNames)
		s.URL, s.State, s.Reason = c.redact(s.URL), c.redact(s.State), c.redact(s.Reason)
		s.ServerName, s.ServerVersion = c.redact(s.ServerName), c.redact(s.ServerVersion)
		st.Servers = append(st.Servers, s)
	}
	for _, s := range skipped {
		st.Skipped = append(st.Skipped, RemoteSkipped{Name: s.Name, Position: c.redact(s.Position), Reason: c.redact(s.Reason)})
	}
	st.FileProblem = c.redact(problem)
	return st
}

// newRemoteTransport is the HTTP transport every remote connection of a
// host uses, unless RemoteOptions.Dial.Transport is set.
func newRemoteTransport() *http.Transport {
	return http.DefaultTransport.(*http.Transport).Clone()
}

// addRemoteSecrets adds header values that some chat opened to what the
// host's log lines are redacted with. Results and errors of a chat are
// redacted with its own secrets only.
func (h *Host) addRemoteSecrets(secrets []string) {
	h.rmu.Lock()
	defer h.rmu.Unlock()
	added := false
	for _, s := range secrets {
		if !h.remoteSecrets[s] {
			h.remoteSecrets[s] = true
			added = true
		}
	}
	if !added {
		return
	}
	var forms []string
	for s := range h.remoteSecrets {
		forms = append(forms, secretForms(s)...)
	}
	sort.Strings(forms)
	h.remoteMaxForm.Store(int64(longestForm(forms)))
	h.remoteRed.Store(redact.New(forms))
}

// secretSpan returns the length of the longest text that redactLog
// replaces.
func (h *Host) secretSpan() int {
	return max(int(h.maxForm.Load()), int(h.remoteMaxForm.Load()))
}

// redactLog redacts a line the host logs or an operator sees: the host's
// secrets and the remote header values of every chat.
func (h *Host) redactLog(s string) string {
	return h.remoteRed.Load().Redact(h.redactor().Redact(s))
}
