package runtime

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The port between the host core and what serves it. A user of the host
// (the gateway) goes in through a chat: Tools, Call, and the processes and
// connections behind it (slotOf, withClient); what those send besides
// results (progress, log messages, list changes, requests of the server to
// the client) comes out through the chat's upstream, which the user gives
// the chat (Chat.serve). The host core knows its user only as an upstream:
// no file of the core names the gateway (layers_test.go).

// upstream is the client side of a chat: where its processes' and remote
// connections' notifications and requests go. Its methods may be called
// from any goroutine of the host.
type upstream interface {
	// processOptions are the options of the MCP client of a new stdio
	// process of server (the client's capabilities and handlers that pass
	// what the process sends on), a receiving middleware, and the protocol
	// version to offer ("" for the host's own choice). link routes what the
	// process sends during calls to the calls' origins.
	processOptions(server string, link *procLink) (*mcp.ClientOptions, mcp.Middleware, string)
	// started gives a new process or remote connection (server is the
	// chat's server key) what the client set: the logging level and the
	// resource subscriptions. It returns the level it gave.
	started(ctx context.Context, server string, cs *mcp.ClientSession) mcp.LoggingLevel
	// startedLevel gives a process that now counts as running the client's
	// logging level if it changed since started gave was.
	startedLevel(ctx context.Context, cs *mcp.ClientSession, was mcp.LoggingLevel)
	// remoteConnected is told of a new connection to a remote server.
	remoteConnected(server string, cs *mcp.ClientSession)
	// listFeatures lists the prompts and resources of a server (its chat
	// server key) again, after it said they changed.
	listFeatures(ctx context.Context, server string) error
	// forwardLog passes a server's log message on.
	forwardLog(ctx context.Context, server string, link *procLink, params *mcp.LoggingMessageParams)
	// resourceUpdated passes a server's notifications/resources/updated on.
	resourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams)
	// toolsChanged is told that the chat's tools changed (table, or a newer
	// one, and the chat's remote tools).
	toolsChanged(table *toolTable)
}

// upstreamBox holds a chat's upstream (an atomic.Pointer needs a type).
type upstreamBox struct{ up upstream }

// serve makes up the chat's upstream: its processes started from now on
// pass what they send to it.
func (c *Chat) serve(up upstream) { c.up.Store(&upstreamBox{up}) }

// upstream returns the chat's upstream, nil if it is not served.
func (c *Chat) upstream() upstream {
	if b := c.up.Load(); b != nil {
		return b.up
	}
	return nil
}
