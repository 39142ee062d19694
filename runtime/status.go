package runtime

import (
	"time"

	"github.com/mcpc-dev/mcpc/runtime/remoteset"
)

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
	// UnsetEnv names the host variables the server's env refers to that
	// the host environment does not hold: the server gets them empty.
	UnsetEnv []string `json:"unsetEnv,omitempty"`
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

// RemoteServerStatus is one remote server of a chat in its status.
type RemoteServerStatus = remoteset.ServerStatus

// RemoteSkipped is an entry of servers.json that a chat does not use.
type RemoteSkipped = remoteset.Skipped
