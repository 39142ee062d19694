// Package runtime runs a frozen plan (package plan) for an agent host:
// SPEC §2.4 and §4 for stdio MCP servers.
//
// A [Host] runs one plan. It discovers each enabled server's tools once
// ([Discover], in a temporary workspace, shared by every chat that asks at
// the same time), names them as the agent sees them (SPEC §2.5, package
// naming), and keeps one [Chat] per conversation. A chat is an id
// and a workspace; it gets its own process per server, started by its first
// call to that server, in its workspace, with the environment of SPEC §2.4.
// What serves a host's chats over MCP (package gateway) uses the host
// through its port (port.go): a chat's tools and calls, and the [Upstream]
// it gives a chat, through which the chat's processes and connections reach
// its client.
//
// # Remote servers
//
// With HostOptions.Remote set, a chat also connects to the remote MCP
// servers of its workspace's .volcanic/mcp/servers.json (SPEC §3) whose
// entries open with the host secret for the chat's session scope: its id
// ([Host.Chat]) or a scope given with [Host.ChatWithScope]. It starts
// connecting when it is created; its first listing waits for those
// connects, later ones re-read servers.json and retry the unreachable
// servers that are due (1, 2, 4 … 15 minutes, on the host's Clock); every
// remote call re-reads servers.json first, so that a removed server or tool
// fails at once (`mcpc remote remove`). Their allowlisted tools follow the stdio tools, named <server>__<tool>
// ([Tool.Remote]); a built-in or stdio tool wins a name. A transport failure
// drops the connection and the next call reconnects; a JSON-RPC error of the
// server stays one. The header values of the entries a chat opened are
// known secrets of that chat: its results, errors and status redact them,
// stdio tools included, and so does every log line of the host. Reset keeps
// the remote connections; Chat.Close and Host.Close end them. The
// connections are a remoteset.Set per chat, which reports to the chat
// through its hooks; `mcpc remote list` and `mcpc tools` use a set of their
// own. Every goroutine of a chat's set runs under the host's tracking:
// Host.Close returns once its connects, pings and closes have ended.
//
// # Rules the host enforces
//
//   - A failed discovery contributes no tools, shows as "failed: <reason>"
//     and is started again, in the background, by the first listing after
//     HostOptions.DiscoveryRetry (60 s); a successful one is never repeated.
//   - A process stops after idleTimeoutSeconds without calls (0: never),
//     when its chat is reset or closed, when it is restarted, and when the
//     host closes. Stopping closes its stdin, waits 500 ms, then kills its
//     whole process group, and reaps it.
//   - Calls to one process run one at a time unless the server is parallel.
//     A call runs at most callTimeoutSeconds; cancelling it or timing out
//     sends notifications/cancelled. A failed call is never retried.
//   - A process that dies turns its calls into "MCP server <name> exited
//     (<code>): <last stderr line>. It restarts on the next call; its state
//     was lost." and the next call starts a new one. The process itself is
//     watched (reaped the moment it exits), not only its stdout: a
//     descendant that inherited stdout does not hide the death.
//   - HostOptions.MaxProcesses caps the chats' processes; a call whose
//     server would be one too many fails at once (CallLimit).
//   - Host.Close cancels the calls in flight (their servers are told, with
//     notifications/cancelled, before stdin closes) instead of waiting for
//     them, then stops every process.
//   - Stopping a server also kills, one by one, its descendants that left
//     its process group (setsid), counted in HostStatus.EscapedProcesses
//     and logged. A Guard (StartGuard, Linux) finds those whose server
//     already died, and kills what is left of the servers' groups if mcpc
//     itself is killed.
//   - Known secrets (values of deny-listed host variables and of ${env:…}
//     resolutions, at least 4 characters, raw or JSON-escaped) become
//     [REDACTED] in results, errors, stderr tails, status and log entries.
//
// # Time
//
// Every duration that is a rule above (discovery retry, idle stop, call
// timeout, startup timeout, the gateway's chat and session idle timeouts)
// is measured on HostOptions.Clock, so tests set a clock and advance it
// instead of waiting. Fixed waits that only bound cleanup (the stop grace,
// waiting for a killed group to disappear, draining stdout and stderr,
// letting cancel notifications out at shutdown) and the body deadline (a
// deadline on the connection) are real time: they wait for the operating
// system.
//
// # Craftbot plans
//
// A craftbot plan (SPEC §5) runs on a host of the craftbot profile
// ([NewCraftbotHost]) with one chat that every client shares: one process per stdio
// server, one connection per sse or websocket server (package transport),
// each connect listing the server's tools, which are served as CraftBot's
// actions (package actions). What the two profiles do differently is one
// interface, hostProfile (profile.go): naming, launching an entry,
// learning secrets on a reload, discovering by a process or by connects.
// A call of either profile goes one way (callOn, conn.go), and so does a
// reload (Host.Apply).
//
// # Reload
//
// Host.Apply makes a new plan the running one (`mcpc run --watch`), for
// both profiles: what package plandiff says of each server decides whether
// it runs on, stops, restarts or starts; a removed server's tools go
// before Apply returns (reload.go).
//
// Server processes are package supervisor's: it starts, watches, reaps and
// kills each one's process group, and keeps its stderr tail and its call
// ledger; the host decides when.
package runtime
