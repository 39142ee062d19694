package runtime

import (
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SessionlessVersion is the first MCP protocol version without sessions
// (server/discover instead of initialize, SEP-2575). The gateway is made of
// sessions: a chat over HTTP comes to be with an initialize request.
const SessionlessVersion = "2026-07-28"

// SessionVersions are the go-sdk's MCP protocol versions up to the last
// one with sessions, newest first.
func SessionVersions() []string {
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= SessionlessVersion })
}

// Downstream, the go-sdk's client (v1.8) opens every connection with a
// server/discover request (protocol 2026-07-28) and falls back to
// initialize when the server answers it with an error, as every server
// older than that protocol does (-32601). A discoverMemo remembers that
// answer for one plan server of a host, so that later processes of the
// same server (each chat's, each restart) start with initialize at once:
// the fallback sends the same initialize, one round trip later.
type discoverMemo struct{ legacy atomic.Bool }

// lastSessionVersion is the newest protocol version with initialize: the
// one the go-sdk's fallback asks for.
var lastSessionVersion = SessionVersions()[0]

// options returns the client session options for the next connection; m
// may be nil (no memory).
func (m *discoverMemo) options() *mcp.ClientSessionOptions {
	if m == nil || !m.legacy.Load() {
		return nil
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: lastSessionVersion}
}

// learn records how a connection came to be: a protocol version before
// the sessionless one means server/discover failed and initialize was
// used.
func (m *discoverMemo) learn(cs *mcp.ClientSession) {
	if m == nil || cs == nil {
		return
	}
	if res := cs.InitializeResult(); res != nil && res.ProtocolVersion < SessionlessVersion {
		m.legacy.Store(true)
	}
}
