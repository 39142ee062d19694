package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/craftbot"
	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/ui"
)

func uiCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "ui",
		Usage: "a local web page: the servers (CraftBot's Settings → MCP: enable, disable, env, remove) and a running gateway",
		UsageText: `mcpc ui [source flags | --profile craftbot --config FILE] [--gateway URL [--admin-token-env NAME]] --listen 127.0.0.1:PORT [--token-env NAME]

The page lists every server of the deployment: source, transport, enabled,
action set (craftbot) or tool prefix (volcanic), validity with its
diagnostics, target-OS mark and env variable names (never values). With
--profile craftbot it edits mcp_config.json as mcpc config does. With
--gateway it shows mcpc run --http's chats and servers and restarts or
resets them (the admin token stays in mcpc ui). It listens on loopback
only, unless --token-env names a variable holding an access token
(16 characters or more): then open the page once as URL/?token=TOKEN.

Examples:
   mcpc ui --profile craftbot --config app/config/mcp_config.json --listen 127.0.0.1:8090
   mcpc ui --appsettings appsettings.json --gateway http://127.0.0.1:8080 --admin-token-env MCPC_ADMIN_TOKEN --listen 127.0.0.1:8090`,
		Flags: flags(sourceFlags(), []ucli.Flag{
			&ucli.StringFlag{Name: "listen", Usage: "serve the page on `ADDR` (host:port; loopback unless --token-env)"},
			&ucli.StringFlag{Name: "token-env", Usage: "the variable `NAME` holding the page's access token (16 characters or more); allows a non-loopback --listen"},
			&ucli.StringFlag{Name: "gateway", Usage: "the `URL` of mcpc run --http to show and drive"},
			&ucli.StringFlag{Name: "admin-token-env", Usage: "with --gateway: the variable `NAME` holding the gateway's admin token"},
		}),
		Action: uiAction,
	}
}

func uiAction(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usageError("ui takes no arguments, got %q", c.Args().First())
	}
	opts, addr, err := uiOptions(c)
	if err != nil {
		return err
	}
	logw := &lockedWriter{w: c.App.ErrWriter}
	opts.Log = func(line string) { logw.printf("mcpc ui: %s\n", line) }
	srv, err := ui.New(opts)
	if err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError("--listen %s: %v", addr, err)
	}
	hint := ""
	if opts.Token != "" {
		hint = fmt.Sprintf(" (open it once with ?token= and the token in $%s)", c.String("token-env"))
	}
	logw.printf("mcpc ui: serving http://%s/%s\n", ln.Addr(), hint)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: httpReadHeaderTimeout}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return &exitError{code: ExitInternal, msg: err.Error()}
	case <-ctx.Done():
	}
	_ = hs.Close()
	return nil
}

// uiOptions checks the flags of mcpc ui and builds the page's options and
// its listen address.
func uiOptions(c *ucli.Context) (ui.Options, string, error) {
	var opts ui.Options
	addr := c.String("listen")
	if addr == "" {
		return opts, "", usageError("ui needs --listen 127.0.0.1:PORT")
	}
	vars := map[string]string{}
	for _, kv := range environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	tok, err := takeToken(c, "token-env", vars)
	if err != nil {
		return opts, "", err
	}
	opts.Token = tok
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return opts, "", usageError("--listen %q: expected HOST:PORT, such as 127.0.0.1:8090 (%v)", addr, err)
	}
	if tok == "" && !loopback.ListenAddr(addr) {
		return opts, "", usageError("--listen %s: without --token-env, mcpc ui listens on loopback only; use 127.0.0.1:PORT, or put a token in a variable and pass --token-env NAME", addr)
	}
	co, err := optionsFromFlags(c)
	if err != nil {
		return opts, "", err
	}
	opts.Profile, opts.Compile = co.Profile, co
	if co.Profile == compile.ProfileCraftbot {
		opts.Config = co.Config
		if opts.Config == "" {
			opts.Config = craftbot.DefaultPath
		}
		opts.Craftbot.TargetOS = co.TargetOS
		if _, err := os.Stat(opts.Config); errors.Is(err, fs.ErrNotExist) {
			return opts, "", usageError("%s does not exist: give --config FILE, or run mcpc in CraftBot's directory (it reads %s)", opts.Config, craftbot.DefaultPath)
		}
	} else if _, err := compileWith(co); err != nil {
		return opts, "", err // an input that cannot be read: say so now, not on the page
	}
	if u := c.String("gateway"); u != "" {
		gw, err := httpStatusClient(c, "--gateway", u)
		if err != nil {
			return opts, "", err
		}
		opts.Gateway = gw.AdminClient
	} else if c.String("admin-token-env") != "" {
		return opts, "", usageError("--admin-token-env goes with --gateway URL")
	}
	return opts, addr, nil
}
