package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

// Protocol correctness of the gateway, where the go-sdk's server needs help
// (docs/decisions/0023-gateway-protocol.md):
// the protocol versions it negotiates, valid JSON-RPC error codes, unknown
// methods over HTTP, the Origin rule, and SSE resumption.

// GatewayProtocolVersions returns the MCP protocol versions the gateway
// negotiates, newest first: the go-sdk's, up to the last one with
// sessions. The same over stdio and HTTP; an HTTP request whose
// MCP-Protocol-Version is another one gets 400 listing these.
func GatewayProtocolVersions() []string { return runtime.SessionVersions() }

// codeNotInitialized is the JSON-RPC error code of a request that comes
// before initialize: the request is not valid at that point of the session
// (-32600 Invalid Request). The go-sdk answers it with code 0, which is no
// JSON-RPC error code.
const codeNotInitialized = jsonrpc.CodeInvalidRequest

// validErrors wraps a server transport so that every error response it
// writes has a JSON-RPC error code: a request read before the session's
// initialize gets codeNotInitialized, any other error without a code
// (a plain Go error inside the SDK) gets -32603 Internal error.
func validErrors(t mcp.Transport) mcp.Transport { return &validErrorsTransport{inner: t} }

type validErrorsTransport struct{ inner mcp.Transport }

func (t *validErrorsTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &validErrorsConn{Connection: c, early: map[jsonrpc.ID]bool{}}, nil
}

type validErrorsConn struct {
	mcp.Connection

	mu          sync.Mutex
	initialized bool                // an initialize request was read
	early       map[jsonrpc.ID]bool // calls read before it, not answered yet
}

func (c *validErrorsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.IsCall() {
		c.mu.Lock()
		if req.Method == "initialize" {
			c.initialized = true
		} else if !c.initialized {
			c.early[req.ID] = true
		}
		c.mu.Unlock()
	}
	return msg, err
}

func (c *validErrorsConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		c.mu.Lock()
		early := c.early[resp.ID]
		delete(c.early, resp.ID)
		c.mu.Unlock()
		var werr *jsonrpc.Error
		if !errors.As(resp.Error, &werr) || werr.Code == 0 {
			code := int64(jsonrpc.CodeInternalError)
			if early {
				code = codeNotInitialized
			}
			fixed := *resp
			fixed.Error = &jsonrpc.Error{Code: code, Message: resp.Error.Error()}
			msg = &fixed
		}
	} else if ok {
		c.mu.Lock()
		delete(c.early, resp.ID)
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// serverMethods are the messages the go-sdk's server takes (its
// serverMethodInfos): whether each is a notification and whether it needs
// params. TestServerMethodsAreTheSDKs keeps the list in step with the SDK.
// Over HTTP the SDK's handler refuses any other message, or one without
// the params it needs, with a plain-text 400 before it reaches the
// session; the gateway answers it as the session does over stdio
// (beforeSession).
var serverMethods = map[string]methodKind{
	"completion/complete": needsParams, "server/discover": 0, "initialize": needsParams, "ping": 0,
	"prompts/list": 0, "prompts/get": needsParams, "tools/list": 0, "tools/call": needsParams,
	"resources/list": 0, "resources/templates/list": 0, "resources/read": needsParams,
	"logging/setLevel": needsParams, "resources/subscribe": needsParams, "resources/unsubscribe": needsParams,
	"subscriptions/listen":    needsParams,
	"notifications/cancelled": notification, "notifications/initialized": notification,
	"notifications/roots/list_changed": notification, "notifications/progress": notification | needsParams,
}

type methodKind int

const (
	notification methodKind = 1 << iota // a notification, else a call
	needsParams                         // refused without params
)

// beforeSession answers, as the session does over stdio, a body of one
// message that the SDK's handler would refuse before it reaches the
// session: a call of a method the server does not know gets the JSON-RPC
// error -32601, a call without the params its method needs -32600, and
// a notification the server does not take is accepted and dropped (202).
// It reports whether it answered.
func beforeSession(w http.ResponseWriter, body *transport.Body) bool {
	if body == nil || len(body.Messages) != 1 {
		return false
	}
	req, ok := body.Messages[0].(*jsonrpc.Request)
	if !ok {
		return false
	}
	kind, known := serverMethods[req.Method]
	switch {
	case !req.IsCall():
		if known && kind&notification != 0 && (kind&needsParams == 0 || len(req.Params) > 0) {
			return false
		}
		w.WriteHeader(http.StatusAccepted)
	case !known || kind&notification != 0:
		writeCallError(w, req, jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %q", req.Method))
	case kind&needsParams != 0 && len(req.Params) == 0:
		writeCallError(w, req, jsonrpc.CodeInvalidRequest, `invalid request: missing required "params"`)
	default:
		return false
	}
	return true
}

// writeCallError answers a call with a JSON-RPC error, as the SDK does over
// stdio: 200, one JSON-RPC error response.
func writeCallError(w http.ResponseWriter, req *jsonrpc.Request, code int64, msg string) {
	data, err := transport.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		http.Error(w, msg, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(data, '\n'))
}

// checkProtocolVersion answers 400 to a request whose MCP-Protocol-Version
// header names a version the gateway does not negotiate, listing the ones
// it does. The SDK would let sessionless versions through to a session
// that cannot serve them.
func (g *Gateway) checkProtocolVersion(w http.ResponseWriter, r *http.Request) bool {
	return protocolVersionAllowed(w, r, g.writeError)
}

// protocolVersionAllowed is checkProtocolVersion, answering with
// writeError.
func protocolVersionAllowed(w http.ResponseWriter, r *http.Request, writeError func(http.ResponseWriter, int, string)) bool {
	v := r.Header.Get("MCP-Protocol-Version")
	if v == "" || slices.Contains(gatewayVersions, v) {
		return true
	}
	versions := GatewayProtocolVersions()
	writeError(w, http.StatusBadRequest, fmt.Sprintf("unsupported MCP-Protocol-Version %q: the gateway accepts %s", v, strings.Join(versions, ", ")))
	return false
}

// allowedOrigin reports whether a request may come from its Origin: one
// without Origin (not from a browser) or from a page on a loopback host.
// A browser page of any other origin gets 403 on every endpoint, the MCP
// endpoints (the DNS-rebinding rule of the Streamable HTTP transport) and
// the admin endpoints alike (a page could otherwise reset chats through
// the operator's browser).
func allowedOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false // "null" (a sandboxed or file page) included
	}
	return loopback.HostPort(u.Host)
}

// Resumable SSE streams (Streamable HTTP): every event of a chat's streams
// is kept, up to eventStoreBytes per chat, so that a client that lost a
// stream reconnects with Last-Event-ID and gets what it missed; each SSE
// answer starts with a retry hint.
const (
	eventStoreBytes = 1 << 20
	sseRetry        = time.Second
)

// newEventStore returns the event store of one chat's streams.
func newEventStore() mcp.EventStore {
	s := mcp.NewMemoryEventStore(nil)
	s.SetMaxBytes(eventStoreBytes)
	return s
}

// gatewayVersions is GatewayProtocolVersions, for the check of every HTTP
// request; never changed.
var gatewayVersions = GatewayProtocolVersions()
