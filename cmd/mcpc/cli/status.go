package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/internal/private"
	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/runtime"
	"github.com/mcpc-dev/mcpc/runtime/gateway"
)

// mcpc status reads a running gateway (SPEC §4, the seed's /mcp and
// /mcp <name>): over HTTP from `mcpc run --http`'s admin endpoints, or from
// the status socket of `mcpc run --stdio`, a unix socket only its owner can
// open (docs/decisions/
// 0023-gateway-protocol.md).

// statusTimeout bounds one status request: the gateway answers from memory.
const statusTimeout = 30 * time.Second

func statusCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "status",
		Usage: "a running gateway's servers and chats, or one server's details (/mcp, /mcp NAME)",
		UsageText: `mcpc status [--chat ID] [NAME] (--url URL | --workspace DIR | --socket PATH) [--admin-token-env NAME]

Without NAME: each server's discovery, then each chat's servers (not started,
running, exited, failed: <reason>, disabled) with their tool counts. With NAME:
that server in the chat (--chat, or the only chat): its command line (without
environment values), environment names, server version, tools, last error and
stderr tail. Known secrets show as [REDACTED].
--url reads mcpc run --http, --socket PATH also mcpc run --http unix:PATH; the admin
token is read from the variable --admin-token-env names, else, for a gateway on this
machine (a loopback URL, a socket of yours), from the token file mcpc run generated in
your runtime directory: the owner needs no flag. --workspace reads mcpc run --stdio
serving that workspace, through its status socket (no token); without --url,
--workspace or --socket, the only status socket there is.

Examples:
   mcpc status --url http://127.0.0.1:8080
   mcpc status --url http://127.0.0.1:8080 --chat 42 playwright
   mcpc status --url http://gateway.internal:8080 --admin-token-env MCPC_ADMIN_TOKEN
   mcpc status --socket /run/user/1000/mcpc-gw.sock
   mcpc status --workspace /srv/chats/42 github
   mcpc status --format json`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "url", Usage: "the `URL` of mcpc run --http (http://HOST:PORT)"},
			&ucli.StringFlag{Name: "admin-token-env", Usage: "with --url or --socket: the variable `NAME` holding the gateway's admin token (mcpc run --admin-token-env); without it, a gateway of yours on this machine is read with the token mcpc run generated"},
			&ucli.StringFlag{Name: "workspace", Usage: "read mcpc run --stdio serving the workspace `DIR`"},
			&ucli.StringFlag{Name: "socket", Usage: "read the unix socket at `PATH`: mcpc run --stdio's status socket, or mcpc run --http unix:PATH (both log it)"},
			&ucli.StringFlag{Name: "chat", Usage: "only the chat `ID` (over --stdio the chat is \"stdio\")"},
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "text|json"},
		},
		Action: statusAction,
	}
}

func statusAction(c *ucli.Context) error {
	if c.NArg() > 1 {
		return usageError("status takes at most one server NAME, got %d arguments", c.NArg())
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return usageError("--format %q: use text or json", format)
	}
	gw, err := statusGateway(c)
	if err != nil {
		return err
	}
	chat := c.String("chat")
	if chat != "" && !gateway.ChatIDPattern.MatchString(chat) {
		return usageError("--chat %q: a chat id has 1 to 64 characters of A-Z a-z 0-9 _ -", chat)
	}
	raw, err := gw.get("/status")
	if err != nil {
		return err
	}
	if done, err := craftbotStatus(c, gw.where, raw, format); done {
		return err
	}
	var st runtime.HostStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		return &exitError{code: ExitInternal, msg: fmt.Sprintf("%s answered GET /status with something that is not a status: %v", gw.where, err)}
	}
	if chat != "" && findChat(st, chat) == nil {
		return usageError("%s has no chat %q; its chats: %s", gw.where, chat, chatList(st))
	}
	if c.NArg() == 0 {
		if format == "json" {
			return printJSON(c.App.Writer, statusJSON(st, chat))
		}
		printStatus(c.App.Writer, st, chat)
		return nil
	}
	name := c.Args().First()
	if chat == "" {
		if len(st.Chats) != 1 {
			return usageError("give --chat ID: %s serves %s (%s)", gw.where, plural(len(st.Chats), "chat"), chatList(st))
		}
		chat = st.Chats[0].ID
	}
	raw, err = gw.get(gateway.ServerPath(chat, name))
	if err != nil {
		return err
	}
	var d runtime.ServerDetail
	if err := json.Unmarshal(raw, &d); err != nil {
		return &exitError{code: ExitInternal, msg: fmt.Sprintf("%s answered with something that is not a server's details: %v", gw.where, err)}
	}
	if format == "json" {
		return printJSON(c.App.Writer, d)
	}
	printDetail(c.App.Writer, chat, d)
	return nil
}

// statusClient reads one gateway's admin endpoints (runtime's client).
type statusClient struct {
	*gateway.AdminClient
	where string // for messages: the URL or the socket
}

// statusGateway picks the gateway the flags name.
func statusGateway(c *ucli.Context) (*statusClient, error) {
	u, ws, sock := c.String("url"), c.String("workspace"), c.String("socket")
	n := 0
	for _, s := range []string{u, ws, sock} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return nil, usageError("give one of --url, --workspace and --socket")
	}
	if c.String("admin-token-env") != "" && u == "" && sock == "" {
		return nil, usageError("--admin-token-env goes with --url or --socket: a status socket of mcpc run --stdio needs no token")
	}
	if u != "" {
		return httpStatusClient(c, "--url", u)
	}
	if ws != "" {
		abs, err := filepath.Abs(ws)
		if err != nil {
			return nil, usageError("--workspace %s: %v", ws, err)
		}
		dir, err := private.Dir(false)
		if err != nil {
			return nil, usageError("%v", err)
		}
		sock = filepath.Join(dir, statusSocketName(abs))
		if _, err := os.Stat(sock); err != nil {
			return nil, usageError("no mcpc run --stdio serves %s: its status socket %s does not exist", abs, sock)
		}
	}
	if sock == "" {
		found, err := findStatusSockets()
		if err != nil {
			return nil, usageError("%v", err)
		}
		switch len(found) {
		case 0:
			return nil, usageError("no gateway to read: give --url URL for mcpc run --http; no mcpc run --stdio of yours is running (no status socket)")
		case 1:
			sock = found[0]
		default:
			return nil, usageError("%d mcpc run --stdio are running: give --workspace DIR or --socket PATH (%s)", len(found), strings.Join(found, ", "))
		}
	}
	return socketStatusClient(c, sock)
}

func httpStatusClient(c *ucli.Context, flag, raw string) (*statusClient, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, usageError("%s %q: give the gateway's address, such as http://127.0.0.1:8080", flag, raw)
	}
	base := u.Scheme + "://" + u.Host
	sc := &statusClient{AdminClient: &gateway.AdminClient{Where: base, Base: base, Client: &http.Client{Timeout: statusTimeout}}, where: base}
	keys, local := urlTokenKeys(u)
	tok, err := adminToken(c, keys, local)
	if err != nil {
		return nil, err
	}
	sc.Token = tok
	return sc, nil
}

func socketStatusClient(c *ucli.Context, sock string) (*statusClient, error) {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	// The admin endpoints of mcpc run --stdio answer loopback host names
	// without a token; mcpc run --http unix:PATH wants its admin token,
	// from its token file only if the socket is the user's own.
	tok, err := adminToken(c, []string{unixTokenKey(sock)}, private.Owned(sock))
	if err != nil {
		return nil, err
	}
	where := "the socket " + sock
	return &statusClient{AdminClient: &gateway.AdminClient{Where: where, Base: "http://localhost", Token: tok, Client: &http.Client{Transport: tr, Timeout: statusTimeout}}, where: where}, nil
}

// adminToken is the admin token to send: from the variable
// --admin-token-env names, else, for a gateway of the user's on this
// machine (local), the one mcpc run generated and keeps under the first
// of keys that has one; ""
// when there is none.
func adminToken(c *ucli.Context, keys []string, local bool) (string, error) {
	if name := c.String("admin-token-env"); name != "" {
		tok, ok := os.LookupEnv(name)
		if !ok || strings.TrimSpace(tok) == "" {
			return "", usageError("--admin-token-env %s: %s is not set or blank", name, name)
		}
		return tok, nil
	}
	if !local {
		return "", nil
	}
	for _, key := range keys {
		tok, err := readTokenFile(key, adminTokenKind)
		if err != nil {
			return "", usageError("the admin token of this gateway: %v", err)
		}
		if tok != "" {
			return tok, nil
		}
	}
	return "", nil
}

// get reads one admin endpoint; an answer other than 200 is an error with
// the gateway's message.
func (sc *statusClient) get(path string) ([]byte, error) {
	body, err := sc.Get(context.Background(), path)
	var ae *gateway.AdminError
	var ue *gateway.UnreachableError
	switch {
	case errors.As(err, &ae):
		code := ExitUsage
		if ae.Code >= 500 {
			code = ExitInternal
		}
		msg := ae.Error()
		if ae.Code == http.StatusUnauthorized {
			msg += "; give --admin-token-env NAME, the variable that holds the gateway's admin token (mcpc run --admin-token-env), or run mcpc status as the user who runs the gateway on this machine, which reads the token mcpc run generated"
		}
		return nil, &exitError{code: code, msg: msg}
	case errors.As(err, &ue):
		return nil, usageError("%v", ue)
	case err != nil:
		return nil, &exitError{code: ExitInternal, msg: err.Error()}
	}
	return body, nil
}

func findChat(st runtime.HostStatus, id string) *runtime.ChatStatus {
	for i := range st.Chats {
		if st.Chats[i].ID == id {
			return &st.Chats[i]
		}
	}
	return nil
}

func chatList(st runtime.HostStatus) string {
	if len(st.Chats) == 0 {
		return "none yet"
	}
	ids := make([]string, len(st.Chats))
	for i, c := range st.Chats {
		ids[i] = c.ID
	}
	sort.Strings(ids)
	return strings.Join(ids, ", ")
}

// statusJSON is the status as printed with --format json: one chat's
// only, with --chat.
func statusJSON(st runtime.HostStatus, chat string) any {
	if chat == "" {
		return st
	}
	return findChat(st, chat)
}

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// printStatus writes the /mcp view: the discoveries, then each chat's
// servers.
func printStatus(w io.Writer, st runtime.HostStatus, chat string) {
	var b bytes.Buffer
	if chat == "" {
		fmt.Fprintf(&b, "servers (discovery, shared by the chats): %s running\n", plural(st.Processes, "process"))
		for _, s := range st.Servers {
			fmt.Fprintf(&b, "  %s: %s · %s", term.Escape(s.Name), term.Escape(s.State), plural(s.Tools, "tool"))
			if len(s.UnsetEnv) > 0 {
				fmt.Fprintf(&b, " · host variables not set (given empty): %s", term.Escape(strings.Join(s.UnsetEnv, ", ")))
			}
			b.WriteString("\n")
		}
		if len(st.Chats) == 0 {
			b.WriteString("no chats yet\n")
		}
	}
	for _, c := range st.Chats {
		if chat != "" && c.ID != chat {
			continue
		}
		fmt.Fprintf(&b, "chat %s (%s):\n", term.Escape(c.ID), term.Escape(c.Workspace))
		for _, s := range c.Servers {
			fmt.Fprintf(&b, "  %s: %s · %s\n", term.Escape(s.Name), term.Escape(s.State), plural(s.Tools, "tool"))
		}
		if c.Remote != nil {
			for _, r := range c.Remote.Servers {
				fmt.Fprintf(&b, "  remote %s (%s): %s\n", term.Escape(r.Name), term.Escape(r.URL), term.Escape(r.State))
			}
			for _, s := range c.Remote.Skipped {
				fmt.Fprintf(&b, "  remote entry %s at %s skipped: %s\n", term.Escape(s.Name), term.Escape(s.Position), term.Escape(s.Reason))
			}
		}
	}
	_, _ = w.Write(b.Bytes())
}

// printDetail writes the /mcp <name> view.
func printDetail(w io.Writer, chat string, d runtime.ServerDetail) {
	var b bytes.Buffer
	// Every value may come from a server (its name, version, tools,
	// errors and stderr) or from servers.json: each is escaped.
	fmt.Fprintf(&b, "%s in chat %s: %s · %s\n", term.Escape(d.Name), term.Escape(chat), term.Escape(d.State), plural(d.Tools, "tool"))
	fmt.Fprintf(&b, "  command line: %s\n", term.Escape(d.CommandLine))
	fmt.Fprintf(&b, "  cwd: %s\n", term.Escape(d.Cwd))
	fmt.Fprintf(&b, "  env names: %s\n", term.Escape(orNone(strings.Join(d.EnvNames, ", "))))
	fmt.Fprintf(&b, "  server: %s\n", term.Escape(orNone(strings.TrimSpace(d.ServerName+" "+d.ServerVersion))))
	fmt.Fprintf(&b, "  tools: %s\n", term.Escape(orNone(strings.Join(d.ToolNames, ", "))))
	fmt.Fprintf(&b, "  last error: %s\n", term.Escape(orNone(d.LastError)))
	fmt.Fprintf(&b, "  processes started: %d\n", d.Starts)
	if d.Pid > 0 {
		fmt.Fprintf(&b, "  pid: %d\n", d.Pid)
	}
	if len(d.StderrTail) == 0 {
		b.WriteString("  stderr tail: none\n")
	} else {
		b.WriteString("  stderr tail:\n")
		for _, l := range d.StderrTail {
			fmt.Fprintf(&b, "    %s\n", term.Escape(l))
		}
	}
	_, _ = w.Write(b.Bytes())
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// The status socket of mcpc run --stdio: <dir>/stdio-<hash>.sock, where dir
// is the user's runtime directory (private.Dir: $XDG_RUNTIME_DIR/mcpc, else
// <temp>/mcpc-<uid>, the user's own and closed to others), and the hash is
// the first 16 hex digits of the SHA-256 of the workspace's absolute path
// (a socket path is at most 107 bytes, a workspace path may be longer).

// statusSocketName is the socket file of the workspace ws (absolute).
func statusSocketName(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	return "stdio-" + hex.EncodeToString(sum[:8]) + ".sock"
}

// findStatusSockets lists the status sockets that a gateway answers on.
func findStatusSockets() ([]string, error) {
	dir, err := private.Dir(false)
	if err != nil {
		if errors.Is(err, private.ErrNoDir) {
			return nil, nil
		}
		return nil, err
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "stdio-*.sock"))
	var live []string
	for _, m := range matches {
		if conn, err := net.DialTimeout("unix", m, time.Second); err == nil {
			conn.Close()
			live = append(live, m)
		}
	}
	return live, nil
}

// listenStatusSocket serves the admin endpoints of gw on the status socket
// of the workspace ws, for mcpc status. The socket is 0600 in a 0700
// directory; a stale one (its gateway is gone) is replaced. It returns the
// socket's path and a function that closes it, or an error to warn about:
// a gateway runs without its status socket rather than not at all.
func listenStatusSocket(gw http.Handler, ws string) (string, func(), error) {
	dir, err := private.Dir(true)
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, statusSocketName(ws))
	ln, err := private.ListenUnix(path)
	if errors.Is(err, private.ErrInUse) {
		return "", nil, fmt.Errorf("another mcpc run --stdio serves %s: its status socket %s is in use", ws, path)
	}
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: adminOnly(gw), ReadHeaderTimeout: httpReadHeaderTimeout}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return path, func() {
		srv.Close() // closes the listener, which removes the socket file
		<-done
	}, nil
}

// adminOnly serves the admin endpoints of a gateway and nothing else: the
// status socket is no MCP endpoint.
func adminOnly(gw http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.EscapedPath(), "/mcp") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error": "the status socket serves GET /status, GET /chats/{id}/servers/{name}, POST /chats/{id}/reset and POST /chats/{id}/servers/{name}/restart; MCP goes over stdio"}`+"\n")
			return
		}
		gw.ServeHTTP(w, r)
	})
}
