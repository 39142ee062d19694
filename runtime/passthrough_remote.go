package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Pass-through for a chat's remote servers (servers.json), as for its
// stdio servers (passthrough.go): their prompts, resources, templates and
// completion are served through the chat's gateway, named like their tools
// (<server>__<name>); their log messages, progress, resource updates and
// list changes reach the chat's clients. The handlers look the gateway up
// when they run: a connection may be made before the chat is served.
//
// In a chat's features a remote server is keyed remoteKey(name), apart
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
	for _, s := range gc.chat.slotList() {
		cfg := s.srv.cfg
		out = append(out, featureSource{key: cfg.Name, name: cfg.Name, prefix: cfg.ToolPrefix})
	}
	for _, name := range gc.chat.remote.names() {
		out = append(out, featureSource{key: remoteKey(name), name: name, prefix: name + "__", remote: true})
	}
	return out
}

// withServer runs fn with the client session of the chat's server key: its
// process (started if needed) or its remote connection (made again if it
// was dropped).
func (gc *gatewayChat) withServer(ctx context.Context, key, what string, fn func(*mcp.ClientSession) error) error {
	name, isRemote := strings.CutPrefix(key, remoteKeyPrefix)
	if !isRemote {
		s := gc.chat.slotOf(key)
		if s == nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no MCP server %s", key)}
		}
		return s.withClient(ctx, what, fn)
	}
	cs, err := gc.chat.remote.session(ctx, name)
	if err == nil {
		err = fn(cs)
	}
	if err != nil {
		return rpcError(gc.chat, err)
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
	key := remoteKey(server)
	ctx, cancel := context.WithTimeout(g.h.ctx, DefaultCallTimeout)
	defer cancel()
	g.afterStart(ctx, gc, key, cs) // as a new process gets them
	f := gc.feat
	f.mu.Lock()
	listed := f.listed
	f.mu.Unlock()
	if listed && (caps.Prompts != nil || caps.Resources != nil) {
		if err := g.listFeatures(ctx, gc, key); err != nil {
			g.h.log("Warning", gc.chat.id, server, "remote server %s: its prompts and resources are not offered: %s", server, gc.chat.redact(err.Error()))
		}
	}
}

// listRemoteFeatures lists the prompts and resources of the chat's remote
// servers that offer them, after the first listing of its remote servers
// (which waits for their first connects).
func (g *Gateway) listRemoteFeatures(ctx context.Context, gc *gatewayChat) {
	r := gc.chat.remote
	if r == nil || r.m == nil {
		return
	}
	if err := r.refresh(ctx, g.h.currentTable()); err != nil {
		return
	}
	for _, l := range r.live() {
		caps := l.cs.InitializeResult().Capabilities
		if caps == nil || (caps.Prompts == nil && caps.Resources == nil) {
			continue
		}
		if err := g.listFeatures(ctx, gc, remoteKey(l.name)); err != nil {
			g.h.log("Warning", gc.chat.id, l.name, "remote server %s: its prompts and resources are not offered: %s", l.name, gc.chat.redact(err.Error()))
		}
	}
}
