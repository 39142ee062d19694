package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime/remote"
)

// The remote connections' side of the port (port.go): what a chat's remote
// servers send goes to the chat's upstream, and its user reaches the live
// connections.

// names are the chat's remote servers, in servers.json order.
func (r *chatRemote) names() []string {
	if r == nil || r.m == nil {
		return nil
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	out := make([]string, 0, len(r.m.servers))
	for _, s := range r.m.servers {
		out = append(out, s.entry.Name)
	}
	return out
}

// live are the chat's remote servers connected now, in servers.json order.
func (r *chatRemote) live() []liveRemote {
	if r == nil || r.m == nil {
		return nil
	}
	r.m.mu.Lock()
	servers := append([]*remoteServer(nil), r.m.servers...)
	r.m.mu.Unlock()
	var out []liveRemote
	for _, s := range servers {
		s.mu.Lock()
		c := s.conn
		s.mu.Unlock()
		if c != nil && c.Alive() {
			out = append(out, liveRemote{name: s.entry.Name, cs: c.Session()})
		}
	}
	return out
}

// session is the session of the remote server name, reconnecting as a
// call would.
func (r *chatRemote) session(ctx context.Context, name string) (*mcp.ClientSession, error) {
	if r == nil || r.m == nil {
		return nil, fmt.Errorf("no remote server %s", name)
	}
	s := r.m.server(name)
	if s == nil {
		return nil, fmt.Errorf("remote server %s is no longer in servers.json", name)
	}
	conn, msg := s.connForCall(ctx)
	if conn == nil {
		return nil, errors.New(msg)
	}
	return conn.Session(), nil
}

// server is the server of that name, nil if none.
func (m *RemoteServers) server(name string) *remoteServer {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.servers {
		if s.entry.Name == name {
			return s
		}
	}
	return nil
}

// passThrough makes the chat's remote connections pass through its gateway.
func (r *chatRemote) passThrough() {
	c := r.c
	r.m.clientFor = func(server string, link *ProcLink) *mcp.ClientOptions {
		return r.clientOptions(server, link)
	}
	r.m.onConnect = func(server string, conn *remote.Conn) {
		if up := c.upstream(); up != nil {
			up.RemoteConnected(server, conn.Session())
		}
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
	s := r.m.server(server)
	if s == nil {
		return
	}
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.h.ctx, DefaultCallTimeout)
	defer cancel()
	tools, err := conn.ListTools(ctx)
	if err != nil {
		c.h.log("Warning", c.id, server, "remote server %s: listing its tools again failed: %s", server, c.redact(reasonOf(err)))
		return
	}
	s.mu.Lock()
	if s.conn == conn {
		s.offered, s.listed = tools, true
	}
	s.mu.Unlock()
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

// liveRemote is a remote server with a live connection.
type liveRemote struct {
	name string
	cs   *mcp.ClientSession
}
