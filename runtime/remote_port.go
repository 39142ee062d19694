package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/runtime/remoteset"
)

// The remote connections' side of the port (port.go): what a chat's remote
// servers send goes to the chat's upstream, and its user reaches the live
// connections.

// names are the chat's remote servers, in servers.json order.
func (r *chatRemote) names() []string {
	if r == nil || r.m == nil {
		return nil
	}
	return r.m.Names()
}

// live are the chat's remote servers connected now, in servers.json order.
func (r *chatRemote) live() []remoteset.Live {
	if r == nil || r.m == nil {
		return nil
	}
	return r.m.Live()
}

// session is the session of the remote server name, reconnecting as a
// call would.
func (r *chatRemote) session(ctx context.Context, name string) (*mcp.ClientSession, error) {
	if r == nil || r.m == nil {
		return nil, fmt.Errorf("no remote server %s", name)
	}
	return r.m.Session(ctx, name)
}

// route makes the chat's remote connections pass through its gateway: a
// server's MCP client hands what it sends to the chat's clients, and its
// calls carry their origin (one ProcLink per opened server).
func (r *chatRemote) route(server string) remoteset.Route {
	link := &ProcLink{}
	return remoteset.Route{
		Client: func() *mcp.ClientOptions { return link.orderedOptions(r.clientOptions(server, link)) },
		Order:  linkOrder{link},
		Params: func(ctx context.Context, tool string, args any) (*mcp.CallToolParams, func()) {
			return callParams(ctx, link, tool, args)
		},
	}
}

// connected tells the chat's upstream of a new connection to a remote
// server.
func (r *chatRemote) connected(server string, conn *remote.Conn) {
	if up := r.c.upstream(); up != nil {
		up.RemoteConnected(server, conn.Session())
	}
}

// clientOptions are the options of the MCP client of a connection to the
// remote server: handlers that pass what it sends on to the chat's
// clients, once the chat is served.
func (r *chatRemote) clientOptions(server string, link *ProcLink) *mcp.ClientOptions {
	c := r.c
	key := RemoteKey(server)
	relistFeatures := func() {
		up := c.upstream()
		if up == nil {
			return
		}
		c.h.track(func() {
			ctx, cancel := context.WithTimeout(c.h.ctx, DefaultCallTimeout)
			defer cancel()
			if err := up.ListFeatures(ctx, key); err != nil {
				c.h.log("Warning", c.id, server, "remote server %s: listing its prompts and resources again failed: %s", server, c.redact(err.Error()))
			}
		})
	}
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			ForwardProgress(ctx, c.redact, link, req.Params)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			if up := c.upstream(); up != nil {
				up.ForwardLog(ctx, server, link, req.Params)
			}
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if up := c.upstream(); up != nil {
				up.ResourceUpdated(ctx, req.Params)
			}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.h.track(func() { r.relistTools(server) })
		},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { relistFeatures() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { relistFeatures() },
	}
}

// relistTools lists the remote server's tools again after it said they
// changed, and gives the chat's clients the new list.
func (r *chatRemote) relistTools(server string) {
	c := r.c
	ctx, cancel := context.WithTimeout(c.h.ctx, DefaultCallTimeout)
	defer cancel()
	listed, err := r.m.RelistTools(ctx, server)
	if err != nil {
		c.h.log("Warning", c.id, server, "remote server %s: listing its tools again failed: %s", server, c.redact(remoteset.Reason(err)))
		return
	}
	if !listed {
		return
	}
	table := c.h.currentTable()
	if err := r.refresh(ctx, table); err != nil {
		return
	}
	if up := c.upstream(); up != nil {
		up.ToolsChanged(table)
	}
}

// A remote server is keyed RemoteKey(name) where a chat's user keeps it
// apart from a plan server of the same name.
const RemoteKeyPrefix = "remote:"

func RemoteKey(name string) string { return RemoteKeyPrefix + name }

// ServerDisplayName is the server name of a feature key.
func ServerDisplayName(key string) string { return strings.TrimPrefix(key, RemoteKeyPrefix) }
