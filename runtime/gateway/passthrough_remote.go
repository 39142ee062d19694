package gateway

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/runtime"
)

// Pass-through for a chat's remote servers (servers.json), as for its
// stdio servers (passthrough.go): their prompts, resources, templates and
// completion are served through the chat's gateway, named like their tools
// (<server>__<name>); their log messages, progress, resource updates and
// list changes reach the chat's clients. The handlers look the gateway up
// when they run: a connection may be made before the chat is served.
//
// In a chat's features a remote server is keyed RemoteKey(name), apart
// from the plan server that may have the same name.
// featureSource is a server whose prompts and resources a chat serves.
type featureSource struct {
	key, name, prefix string
	remote            bool
}

// sources are the chat's servers that may offer prompts and resources: the
// stdio servers in plan order, then the remote servers in servers.json
// order.
func (gc *gatewayChat) sources() []featureSource {
	var out []featureSource
	for _, cfg := range gc.chat.ServerEntries() {
		out = append(out, featureSource{key: cfg.Name, name: cfg.Name, prefix: cfg.ToolPrefix})
	}
	for _, name := range gc.chat.RemoteNames() {
		out = append(out, featureSource{key: runtime.RemoteKey(name), name: name, prefix: name + "__", remote: true})
	}
	return out
}

// withServer runs fn with the client session of the chat's server key: its
// process (started if needed) or its remote connection (made again if it
// was dropped).
func (gc *gatewayChat) withServer(ctx context.Context, key, what string, fn func(*mcp.ClientSession) error) error {
	name, isRemote := strings.CutPrefix(key, runtime.RemoteKeyPrefix)
	if !isRemote {
		return gc.chat.WithServerClient(ctx, key, what, fn)
	}
	cs, err := gc.chat.RemoteSession(ctx, name)
	if err == nil {
		err = fn(cs)
	}
	if err != nil {
		return runtime.RPCError(gc.chat, err)
	}
	return nil
}

// remoteConnected gives a new connection to a remote server what the
// chat's client set (the logging level, the subscriptions to its
// resources) and, once the chat's prompts and resources were listed, lists
// the server's.
func (g *Gateway) remoteConnected(gc *gatewayChat, server string, cs *mcp.ClientSession) {
	caps := cs.InitializeResult().Capabilities
	if caps == nil {
		return
	}
	key := runtime.RemoteKey(server)
	ctx, cancel := context.WithTimeout(g.h.Context(), runtime.DefaultCallTimeout)
	defer cancel()
	g.afterStart(ctx, gc, key, cs) // as a new process gets them
	f := gc.feat
	f.mu.Lock()
	listed := f.listed
	f.mu.Unlock()
	if listed && (caps.Prompts != nil || caps.Resources != nil) {
		if err := g.listFeatures(ctx, gc, key); err != nil {
			g.h.Log("Warning", gc.chat.ID(), server, "remote server %s: its prompts and resources are not offered: %s", server, gc.chat.Redact(err.Error()))
		}
	}
}

// listRemoteFeatures lists the prompts and resources of the chat's remote
// servers that offer them, after the first listing of its remote servers
// (which waits for their first connects).
func (g *Gateway) listRemoteFeatures(ctx context.Context, gc *gatewayChat) {
	if !gc.chat.HasRemoteServers() {
		return
	}
	if err := gc.chat.RefreshRemote(ctx, g.h.CurrentTable()); err != nil {
		return
	}
	for _, l := range gc.chat.RemoteSessions() {
		caps := l.Session.InitializeResult().Capabilities
		if caps == nil || (caps.Prompts == nil && caps.Resources == nil) {
			continue
		}
		if err := g.listFeatures(ctx, gc, runtime.RemoteKey(l.Name)); err != nil {
			g.h.Log("Warning", gc.chat.ID(), l.Name, "remote server %s: its prompts and resources are not offered: %s", l.Name, gc.chat.Redact(err.Error()))
		}
	}
}
