package runtime

import "time"

// Status types: what /mcp, /mcp <server> and GET /status show (SPEC §4).
// Every text in them is redacted; none holds an environment value.

// HostStatus is the whole host: each server's discovery and each chat.
type HostStatus struct {
	Servers []DiscoveryStatus `json:"servers"`
	Chats   []ChatStatus      `json:"chats"`
	// Processes counts the chats' server processes running or starting.
	Processes int `json:"processes"`
	// EscapedProcesses counts the processes servers started that had left
	// their server's process group (setsid) when it stopped; each was killed
	// on its own, and logged.
	EscapedProcesses int `json:"escapedProcesses"`
}

// DiscoveryStatus is one server's shared discovery.
type DiscoveryStatus struct {
	Name string `json:"name"`
	// State: "not discovered", "discovering", "discovering (retry)", "ok",
	// "failed: <reason>" or "disabled".
	State string `json:"state"`
	// Tools is the number of agent-visible tools it contributes.
	Tools int `json:"tools"`
	// Discoveries counts the discoveries started (1 + retries).
	Discoveries   int       `json:"discoveries"`
	LastError     string    `json:"lastError,omitempty"`
	RetryAt       time.Time `json:"retryAt,omitzero"` // when a failed discovery may run again
	ServerName    string    `json:"serverName,omitempty"`
	ServerVersion string    `json:"serverVersion,omitempty"`
}

// ChatStatus is one chat.
type ChatStatus struct {
	ID        string         `json:"id"`
	Workspace string         `json:"workspace"`
	Servers   []ServerStatus `json:"servers"`
	// Remote is the chat's remote servers; nil when the host runs none
	// (HostOptions.Remote unset).
	Remote *RemoteStatus `json:"remote,omitempty"`
}

// ServerStatus is one server in one chat: the line /mcp shows.
type ServerStatus struct {
	Name string `json:"name"`
	// State: "not started", "starting", "running", "exited",
	// "failed: <reason>" or "disabled".
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	LastError string `json:"lastError,omitempty"`
	Pid       int    `json:"pid,omitempty"` // while running
}

// ServerDetail is one server in one chat in detail: /mcp <server>.
type ServerDetail struct {
	ServerStatus
	// CommandLine is the command and its arguments as started in this chat;
	// never an environment value.
	CommandLine   string          `json:"commandLine"`
	Cwd           string          `json:"cwd"`
	EnvNames      []string        `json:"envNames"`
	ServerName    string          `json:"serverName,omitempty"`
	ServerVersion string          `json:"serverVersion,omitempty"`
	ToolNames     []string        `json:"toolNames"`
	StderrTail    []string        `json:"stderrTail"`
	Starts        int             `json:"starts"` // processes started for this chat
	Discovery     DiscoveryStatus `json:"discovery"`
}

// RemoteStatus is a chat's remote servers in status output. Every text is
// redacted; headers show by name only.
type RemoteStatus struct {
	// Scope is the chat's session scope, which every sealed entry is bound
	// to ("" when the chat has none).
	Scope string `json:"scope,omitempty"`
	// Disabled says why the chat uses no remote servers ("" when it does).
	Disabled string `json:"disabled,omitempty"`
	// File is the chat's servers.json.
	File    string               `json:"file,omitempty"`
	Servers []RemoteServerStatus `json:"servers"`
	Skipped []RemoteSkipped      `json:"skipped,omitempty"`
	// FileProblem is set when servers.json as a whole cannot be used.
	FileProblem string `json:"fileProblem,omitempty"`
}

// RemoteServerStatus is one remote server of a chat: in its status, in a
// RemoteListing and from RemoteServers.Status. It holds header names,
// never values.
type RemoteServerStatus struct {
	Name string `json:"name"`
	// URL is the server's URL without query (a query may hold a key).
	URL string `json:"url"`
	// Transport as configured (auto, http, sse); Connected the one in use
	// ("http" or "sse") while connected.
	Transport string `json:"transport"`
	Connected string `json:"connected,omitempty"`
	// State is the status column: "connecting", "connected · N tools" (N
	// the ServerTools) or "unavailable: <reason>".
	State string `json:"state"`
	// Phase and Reason are State for programs (State shows both): where
	// the connection stands, and why the server is unavailable ("401
	// (Unauthorized)", "no answer within 15s", …).
	Phase  RemoteState `json:"-"`
	Reason string      `json:"-"`
	// Tools counts the agent-visible tools it contributes; ToolNames are
	// their names (in a chat: the ones it serves).
	Tools     int      `json:"tools"`
	ToolNames []string `json:"toolNames"`
	// ServerTools are the server's own names of the tools in use: offered
	// and allowed, in its listing order.
	ServerTools []string `json:"-"`
	// HeaderNames are the names of the headers sent; never their values.
	HeaderNames []string `json:"headerNames"`
	// Allowlist is the entry's tools; null allows every tool. Missing are
	// allowlisted tools the server does not offer.
	Allowlist     []string  `json:"allowlist"`
	Missing       []string  `json:"missing,omitempty"`
	ServerName    string    `json:"serverName,omitempty"`
	ServerVersion string    `json:"serverVersion,omitempty"`
	RetryAt       time.Time `json:"retryAt,omitzero"` // when an unavailable server is tried again

	// retryDelay is the wait from the failure to RetryAt, which the log
	// names: the time left until RetryAt depends on when the log is
	// written.
	retryDelay time.Duration
}

// RemoteSkipped is an entry of servers.json that is not used: invalid, or
// it does not open (written without the host secret, copied from another
// chat, or sealed with another secret).
type RemoteSkipped struct {
	Name     string `json:"name,omitempty"` // as written ("" when it has none)
	Position string `json:"position"`       // file:line:column
	Reason   string `json:"reason"`
}
