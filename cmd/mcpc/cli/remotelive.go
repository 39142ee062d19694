package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/private"
	"github.com/mcpc-dev/mcpc/runtime"
)

// The seed's /mcp_list is the chat's own view: the connections the running
// chat holds, "connecting" while they are made, and only the tools the chat
// serves (a tool whose name a local tool has is skipped there). mcpc remote
// list shows that view when a gateway serves the workspace's chat, read
// through the gateway's admin interface (GET /status); otherwise it opens
// connections of its own and says that it only probes
// (docs/decisions/0022-remote-servers.md).

// liveFlags name the gateway that serves the chat, as mcpc status's do.
func liveFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "url", Usage: "show the running chat's own view, read from mcpc run --http at `URL` (http://HOST:PORT); without it, an mcpc run --stdio of yours serving --workspace is read"},
		&ucli.StringFlag{Name: "socket", Usage: "show the running chat's own view, read from the status socket at `PATH` (mcpc run --stdio, or mcpc run --http unix:PATH)"},
		&ucli.StringFlag{Name: "admin-token-env", Usage: "with --url or --socket: the variable `NAME` holding the gateway's admin token"},
	}
}

// liveChat is a running chat's remote servers, read from its gateway.
type liveChat struct {
	id, where string
	remote    *runtime.RemoteStatus
}

// liveRemote finds the gateway chat whose workspace is ws. It returns nil
// and why not when no gateway serves it (the caller probes and says so);
// an error when the gateway named by --url or --socket cannot be read.
func liveRemote(c *ucli.Context, ws string) (*liveChat, string, error) {
	u, sock := c.String("url"), c.String("socket")
	if u != "" && sock != "" {
		return nil, "", usageError("give one of --url and --socket")
	}
	if c.String("admin-token-env") != "" && u == "" && sock == "" {
		return nil, "", usageError("--admin-token-env goes with --url or --socket")
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return nil, "", usageError("--workspace %s: %v", ws, err)
	}
	named := u != "" || sock != ""
	var gw *statusClient
	switch {
	case u != "":
		gw, err = httpStatusClient(c, "--url", u)
	case sock != "":
		gw, err = socketStatusClient(c, sock)
	default:
		const none = "no mcpc run --stdio of yours serves this workspace (give --url for mcpc run --http)"
		dir, derr := private.Dir(false)
		if derr != nil {
			return nil, none, nil
		}
		sock = filepath.Join(dir, statusSocketName(abs))
		if _, serr := os.Stat(sock); serr != nil {
			return nil, none, nil
		}
		gw, err = socketStatusClient(c, sock)
	}
	if err != nil {
		return nil, "", err
	}
	raw, err := gw.get("/status")
	if err != nil {
		if !named {
			// A status socket left by a run that was killed: nothing serves
			// the workspace any more.
			var ee *exitError
			if errors.As(err, &ee) {
				return nil, fmt.Sprintf("the status socket %s of this workspace does not answer", sock), nil
			}
		}
		return nil, "", err
	}
	var kind struct {
		Profile string `json:"profile"`
	}
	if json.Unmarshal(raw, &kind) == nil && kind.Profile == plan.ProfileCraftbot {
		return nil, "", usageError("%s runs a craftbot plan: CraftBot has no remote servers of a chat", gw.where)
	}
	var st runtime.HostStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, "", &exitError{code: ExitInternal, msg: fmt.Sprintf("%s answered GET /status with something that is not a status: %v", gw.where, err)}
	}
	for i := range st.Chats {
		if sameDir(st.Chats[i].Workspace, abs) {
			return &liveChat{id: st.Chats[i].ID, where: gw.where, remote: st.Chats[i].Remote}, "", nil
		}
	}
	return nil, fmt.Sprintf("%s serves no chat in this workspace (its chats: %s; a chat appears with its first request)", gw.where, chatList(st)), nil
}

// sameDir reports whether two absolute paths name one directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ea == eb
}
