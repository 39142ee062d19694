// Package gateway serves a host (package runtime) over MCP: the MCP server
// side of `mcpc run` for both profiles, built only on the host core's port
// (runtime/port.go).
//
// A [Gateway] serves a host's chats over stdio or Streamable HTTP, one chat
// per /chats/{id}/mcp; it reaches a chat's client side only through the
// upstream it gives the chat (runtime.Upstream). A [Craftbot] serves a
// craftbot plan's one shared chat as CraftBot's actions. An [Engine] runs a
// plan of either profile behind one API (`mcpc run`); [AdminClient] reads
// a running gateway's admin endpoints (`mcpc status`, `mcpc ui`).
//
// # The gateway over HTTP
//
// A chat, its workspace and its remote connections are created only by an
// initialize request the SDK accepts; any other request to an unknown chat
// creates nothing. GatewayOptions cap the chats and the sessions (503 with
// a JSON-RPC error naming the limit, logged once per reach), close chats
// and sessions that had no request for a while (a chat's processes stop as
// on a reset; its workspace stays), require an optional bearer token on
// the MCP endpoints, and cut off request bodies that arrive too slowly.
//
// # Pass-through
//
// Besides tools, a gateway passes through progress, logging, sampling,
// elicitation and roots (answered with the chat's workspace when the client
// has none), the prompts, resources and templates of the servers that
// declare them (listed from the chat's processes; prompt names follow the
// tool-name rules, URIs stay the server's), completion, subscriptions and
// list_changed; its initialize result's instructions carry what the host
// puts into the agent's system prompt (passthrough.go, docs/decisions/0027-gateway-pass-through.md).
package gateway
