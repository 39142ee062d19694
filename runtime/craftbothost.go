package runtime

import (
	"context"
	"path/filepath"
	"time"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// The host of a craftbot plan (SPEC §5): a Host of the craftbot profile
// (profile.go) with one chat that every client shares. Its server side is
// Craftbot (craftbot.go).

// CraftbotOptions configure a Craftbot runtime. The zero value is ready to
// use but for Config, which a plan whose servers have env values needs.
type CraftbotOptions struct {
	// Env is the host environment: stdio servers inherit it, without its
	// deny-listed variables. Env.Deny nil means the built-in deny-list.
	Env HostEnv
	// Config reads the values of the plan's ${config:KEY} references (the
	// env of mcp_config.json); nil: none.
	Config ConfigLookup
	// Workspace is the working directory of every stdio server process
	// (created when the first one starts); "" means mcpc's own.
	Workspace string
	// Secrets are more known secret values to redact (say, a token).
	Secrets []string
	// Clock measures the call, startup and connect timeouts and the
	// retry; nil means RealClock.
	Clock Clock
	// DiscoveryRetry is the wait before a listing connects again a server
	// whose connect failed, as HostOptions.DiscoveryRetry; 0 means
	// DefaultDiscoveryRetry.
	DiscoveryRetry time.Duration
	// Log, if set, receives what the runtime logs (redacted): connects,
	// failures, deaths and each stderr line of a stdio server.
	Log func(LogEntry)
	// Remote are the options of the sse and websocket connections.
	Remote transport.RemoteOptions
	// BuiltinActions are the host's own action names: a tool whose action
	// takes one of them is not served.
	BuiltinActions []string
	// Version is the version the gateway reports in initialize.
	Version string
	// CallTimeout bounds a call; 0 means CraftbotCallTimeout, the 60 s
	// the host's handler waits (a craftbot plan has no callTimeoutSeconds:
	// CraftBot sets none per server).
	CallTimeout time.Duration
}

// NewCraftbotHost builds the host of a craftbot plan, its profile and its
// shared chat, which runs in opts.Workspace. Nothing connects yet.
func NewCraftbotHost(p *plan.Plan, opts CraftbotOptions) (*Host, *CraftbotProfile, *Chat, error) {
	prof := &CraftbotProfile{builtins: opts.BuiltinActions, timeout: opts.CallTimeout, remote: opts.Remote}
	h, err := newHost(p, HostOptions{Env: opts.Env, Secrets: opts.Secrets, Clock: opts.Clock, Log: opts.Log, DiscoveryRetry: opts.DiscoveryRetry}, prof)
	if err != nil {
		return nil, nil, nil, err
	}
	prof.setPlan(h, p, opts.Config)
	ws := opts.Workspace
	if ws == "" {
		ws = "." // mcpc's own
	}
	if ws, err = filepath.Abs(ws); err != nil {
		return nil, nil, nil, err
	}
	chat := newChat(h, "", ws, "")
	h.shared = chat
	h.chats[""] = chat
	return h, prof, chat, nil
}

// waitDiscoveries waits until the last discovery of every server (for a
// craftbot plan: its first connect, or a retry) has ended, its tools in
// the table (or ctx ends). A discovery that recorded its tools may still be
// building the table: its done says when it has.
func (h *Host) waitDiscoveries(ctx context.Context) error {
	for _, s := range h.servers() {
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done != nil {
			select {
			case <-done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// CraftbotStatus is the runtime's state: GET /status and the status
// socket show it. Every text is redacted; no env value is in it.
type CraftbotStatus struct {
	Profile     string `json:"profile"`
	AutoConnect bool   `json:"autoConnect"`
	// Servers in plan order.
	Servers []CraftbotServerStatus `json:"servers"`
	// Actions counts the actions served.
	Actions int `json:"actions"`
	// EscapedProcesses counts the processes of servers found outside
	// their server's process group when it stopped (killed on their own).
	EscapedProcesses int `json:"escapedProcesses"`
}

// CraftbotServerStatus is one server.
type CraftbotServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// URL is an sse or websocket server's url without its query.
	URL string `json:"url,omitempty"`
	// State: "not started", "starting", "running", "exited",
	// "failed: <reason>" or "disabled".
	State     string `json:"state"`
	ActionSet string `json:"actionSet"`
	// Tools counts the server's actions served.
	Tools      int      `json:"tools"`
	LastError  string   `json:"lastError,omitempty"`
	Pid        int      `json:"pid,omitempty"`
	Starts     int      `json:"starts"`
	StderrTail []string `json:"stderrTail,omitempty"`
}

// CraftbotStatusOf is the state of every server of h, a craftbot plan's
// host: the shared chat's status of each (Chat.Server), in the shape of a
// craftbot gateway's GET /status.
func CraftbotStatusOf(h *Host, prof *CraftbotProfile, chat *Chat) CraftbotStatus {
	st := CraftbotStatus{Profile: plan.ProfileCraftbot, AutoConnect: prof.autoConnect.Load(), Servers: []CraftbotServerStatus{},
		Actions: len(h.currentTable().list), EscapedProcesses: int(h.escapes.Load())}
	for _, hs := range h.servers() {
		cfg := hs.cfg
		d, _ := chat.Server(cfg.Name)
		s := CraftbotServerStatus{Name: cfg.Name, Transport: cfg.Transport, ActionSet: cfg.ActionSet, State: d.State,
			Tools: d.Tools, LastError: d.LastError, Pid: d.Pid, Starts: d.Starts}
		if s.ActionSet == "" {
			s.ActionSet = "mcp_" + cfg.Name
		}
		if cfg.URL != "" {
			s.URL = h.Redact(remote.URLWithoutQuery(cfg.URL))
		}
		if len(d.StderrTail) > 0 {
			s.StderrTail = d.StderrTail
		}
		st.Servers = append(st.Servers, s)
	}
	return st
}
