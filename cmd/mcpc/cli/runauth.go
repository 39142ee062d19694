package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/internal/private"
)

// mcpc run --http authenticates by default (docs/decisions/
// 0026-gateway-authentication.md): the admin endpoints need the admin token,
// the MCP endpoints the MCP token, each from the variable its flag names
// or, without the flag, generated for this run and kept in a 0600 token
// file of the user's runtime directory (private.Dir) while the gateway
// runs, named by its address, where mcpc status (and mcpc ui --gateway)
// find the admin token. --mcp-no-auth leaves the MCP endpoints open. The
// tokens' values appear nowhere: the log names the files.

// unixAddrPrefix starts a unix socket listen address: --http unix:PATH.
const unixAddrPrefix = "unix:"

// Token kinds, the ends of the token files' names.
const (
	adminTokenKind = "admin-token"
	mcpTokenKind   = "mcp-token"
)

// gatewayAuth is what a gateway over HTTP authenticates with.
type gatewayAuth struct {
	admin, mcp string
	// adminGenerated and mcpGenerated: the token was made for this run,
	// and is written to its token file once the gateway listens.
	adminGenerated, mcpGenerated bool
	// mcpOpen: --mcp-no-auth, the MCP endpoints take every request.
	mcpOpen bool
	// dir is the runtime directory that holds the generated tokens' files.
	dir string
}

// secrets are the tokens, which output redacts.
func (a gatewayAuth) secrets() []string { return []string{a.admin, a.mcp} }

// takeTokens takes the gateway's tokens out of the host variables vars
// (no server inherits them) and, over HTTP, generates those not given.
func takeTokens(c *ucli.Context, vars map[string]string) (gatewayAuth, error) {
	var a gatewayAuth
	// Before taking either: taking the first removes the variable.
	if name := c.String("admin-token-env"); name != "" && name == c.String("mcp-token-env") {
		return a, usageError("--admin-token-env and --mcp-token-env hold the same token (both name %s): every MCP client could then use the admin endpoints; give each its own variable and token", name)
	}
	a.mcpOpen = c.Bool("mcp-no-auth")
	if a.mcpOpen && c.IsSet("mcp-token-env") {
		return a, usageError("--mcp-no-auth and --mcp-token-env contradict each other: give one (--mcp-no-auth leaves /chats/{id}/mcp without authentication)")
	}
	var err error
	if a.admin, err = takeToken(c, "admin-token-env", vars); err != nil {
		return a, err
	}
	if a.mcp, err = takeToken(c, "mcp-token-env", vars); err != nil {
		return a, err
	}
	if a.admin != "" && a.admin == a.mcp {
		return a, usageError("--admin-token-env and --mcp-token-env hold the same token: every MCP client could then use the admin endpoints; give each its own")
	}
	if c.String("http") == "" {
		return a, nil
	}
	if a.admin == "" {
		if a.admin, err = private.NewToken(); err != nil {
			return a, &exitError{code: ExitInternal, msg: err.Error()}
		}
		a.adminGenerated = true
	}
	if a.mcp == "" && !a.mcpOpen {
		if a.mcp, err = private.NewToken(); err != nil {
			return a, &exitError{code: ExitInternal, msg: err.Error()}
		}
		a.mcpGenerated = true
	}
	if a.adminGenerated || a.mcpGenerated {
		if a.dir, err = private.Dir(true); err != nil {
			return a, usageError("mcpc run --http keeps the tokens it generates in its runtime directory: %v (or give --admin-token-env NAME and --mcp-token-env NAME)", err)
		}
	}
	return a, nil
}

// tokenFileKey names the token files of a gateway listening at addr:
// http-<ip>-<port> by the address it bound (':' of an IPv6 address as
// '_'), unix-<hash> for a unix socket, as statusSocketName hashes a
// workspace. The address, not only the port, decides: another user may
// listen on the same port of another loopback address (::1 beside
// 127.0.0.1), and must not be sent the token.
func tokenFileKey(addr net.Addr) string {
	if ua, ok := addr.(*net.UnixAddr); ok {
		return unixTokenKey(ua.Name)
	}
	host, port, _ := net.SplitHostPort(addr.String())
	return httpTokenKey(net.ParseIP(host), port)
}

func httpTokenKey(ip net.IP, port string) string {
	return "http-" + strings.ReplaceAll(ip.String(), ":", "_") + "-" + port
}

func unixTokenKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	sum := sha256.Sum256([]byte(path))
	return "unix-" + hex.EncodeToString(sum[:8])
}

func tokenFilePath(dir, key, kind string) string {
	return filepath.Join(dir, key+"."+kind)
}

// writeTokenFiles writes the generated tokens of a gateway listening at
// addr, logs where they are (never their values), and returns the
// function that removes them when the gateway stops.
func writeTokenFiles(a gatewayAuth, addr net.Addr, mcpPath string, logw *lockedWriter) (remove func(), err error) {
	key := tokenFileKey(addr)
	var written []func()
	remove = func() {
		for _, f := range written {
			f()
		}
	}
	for _, t := range []struct {
		generated bool
		tok, kind string
		line      string
	}{
		{a.adminGenerated, a.admin, adminTokenKind, "mcpc: admin token (GET /status, POST …/reset and …/restart need it; mcpc status reads it): %s\n"},
		{a.mcpGenerated, a.mcp, mcpTokenKind, "mcpc: MCP token (" + mcpPath + " needs Authorization: Bearer <the file's content>): %s\n"},
	} {
		if !t.generated {
			continue
		}
		path := tokenFilePath(a.dir, key, t.kind)
		if err := private.WriteToken(path, t.tok); err != nil {
			remove()
			return nil, &exitError{code: ExitInternal, msg: err.Error()}
		}
		tok := t.tok
		written = append(written, func() { private.RemoveToken(path, tok) })
		logw.printf(t.line, path)
	}
	return remove, nil
}

// readTokenFile reads the token of kind that a gateway of this user keeps
// under key; "" when there is none.
func readTokenFile(key, kind string) (string, error) {
	dir, err := private.Dir(false)
	if errors.Is(err, private.ErrNoDir) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	tok, err := private.ReadToken(tokenFilePath(dir, key, kind))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return tok, err
}

// urlTokenKeys are the token file keys a gateway at u (http://IP:PORT)
// may have, if u names a loopback address of this machine by number: the
// address itself, then the unspecified address of its family, and for IPv4
// the dual-stack [::], since a gateway bound to one of those holds the
// port on that address too, so no other user can listen there. A host
// name (localhost) may resolve to another address than the gateway's,
// where another user listens: it gets no token file.
func urlTokenKeys(u *url.URL) ([]string, bool) {
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsLoopback() {
		return nil, false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	keys := []string{httpTokenKey(ip, port)}
	if ip.To4() != nil {
		keys = append(keys, httpTokenKey(net.IPv4zero, port))
	}
	return append(keys, httpTokenKey(net.IPv6unspecified, port)), true
}

// listenGateway listens on a gateway's --http address: HOST:PORT, or
// unix:PATH for a unix socket only the user can connect to.
func listenGateway(addr string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, unixAddrPrefix); ok {
		ln, err := private.ListenUnix(path)
		if err != nil {
			return nil, usageError("--http %s: %v", addr, err)
		}
		return ln, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageError("--http %s: %v", addr, err)
	}
	return ln, nil
}

// servingWhere says where a gateway listening on ln serves paths, for the
// log, and how mcpc status reads it.
func servingWhere(ln net.Listener, paths ...string) (where, status string) {
	if ua, ok := ln.Addr().(*net.UnixAddr); ok {
		return fmt.Sprintf("on the unix socket %s, %s", ua.Name, strings.Join(paths, " and ")), "mcpc status --socket " + ua.Name
	}
	base := "http://" + ln.Addr().String()
	return "at " + base + strings.Join(paths, " and at "+base), base + "/status"
}

// listenWarning is the warning for MCP endpoints left open by
// --mcp-no-auth on a TCP address, "" otherwise: a unix socket is the
// user's only.
func listenWarning(addr string, mcpOpen bool) string {
	if !mcpOpen || strings.HasPrefix(addr, unixAddrPrefix) {
		return ""
	}
	if !loopback.ListenAddr(addr) {
		return fmt.Sprintf("--http %s is reachable beyond this machine and --mcp-no-auth leaves the MCP endpoints /chats/{id}/mcp without authentication: anyone who reaches the port can use every server; drop --mcp-no-auth", addr)
	}
	return fmt.Sprintf("--mcp-no-auth: the MCP endpoints /chats/{id}/mcp at %s are not authenticated: every user of this machine can call every server as you; drop --mcp-no-auth, or listen on --http unix:PATH", addr)
}

// checkListenAddr checks the form of an --http address.
func checkListenAddr(addr string) error {
	if path, ok := strings.CutPrefix(addr, unixAddrPrefix); ok {
		if path == "" {
			return usageError("--http %q: give the socket's path, such as unix:/run/user/1000/mcpc.sock", addr)
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return usageError("--http %q: expected HOST:PORT, such as 127.0.0.1:8080, or unix:PATH (%v)", addr, err)
	}
	return nil
}
