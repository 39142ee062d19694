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
	"sync"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/cmd/mcpc/ui"
	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/internal/private"
	"github.com/mcpc-dev/mcpc/policies/lint"
)

func uiCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "ui",
		Usage: "a local web page: the servers (CraftBot's Settings → MCP: enable, disable, env, add, remove) and a running gateway's console",
		UsageText: `mcpc ui [source flags | --profile craftbot --config FILE] [--gateway URL [--admin-token-env NAME]] --listen ADDR [--token-env NAME | --no-token]

The page lists every server of the deployment (searchable; filters:
enabled, needs config, with problems): name, description, source,
transport, enabled, action set (craftbot) or tool prefix (volcanic), what
the host will do with it and every diagnostic mcpc lint reports for it
with its suggestion, target-OS mark and env variable names (never
values); a volcanic server's provenance as mcpc explain shows it. With
--profile craftbot it edits mcp_config.json as mcpc config does: enable,
disable, remove, a value per env key, a new key, add a server (stdio, or
JSON). With --gateway it is also the console of mcpc run --http (either
profile): each server's state beside its verdict, state, tools, last
error and stderr tail, restart (and reset of a chat), the tools as the
agent sees them with a form from each schema to call one; updated live.
The admin token stays in mcpc ui.

Only whoever has the page's access token gets in: mcpc ui makes one at
each start, prints the page's address with it (URL/?token=TOKEN) once on
stderr, and writes it to a file only you can read
(ui-PORT.token in $XDG_RUNTIME_DIR/mcpc, else in $TMPDIR/mcpc-UID;
removed when mcpc ui ends). Opening that address gives
the browser a session cookie; every request without one is refused (401).
--token-env NAME takes the token from a variable instead (16 characters
or more). --no-token serves without one: any local user or process can
then read the page and edit the config; loopback only, with a warning.

Examples:
   mcpc ui --profile craftbot --config app/config/mcp_config.json --listen 127.0.0.1:8090
   mcpc ui --appsettings appsettings.json --gateway http://127.0.0.1:8080 --admin-token-env MCPC_ADMIN_TOKEN --listen 127.0.0.1:8090`,
		Flags: flags(sourceFlags(), []ucli.Flag{
			&ucli.StringFlag{Name: "listen", Usage: "serve the page on `ADDR` (host:port; loopback only with --no-token)"},
			&ucli.StringFlag{Name: "token-env", Usage: "the variable `NAME` holding the page's access token (16 characters or more), instead of one mcpc ui makes"},
			&ucli.BoolFlag{Name: "no-token", Usage: "serve WITHOUT authentication: any local user or process can read the page and edit the config (loopback only)"},
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
	// Before the token file exists: a stop signal then ends mcpc ui
	// through the return below, which removes the file.
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError("--listen %s: %v", addr, err)
	}
	defer ln.Close()
	base := fmt.Sprintf("http://%s/", ln.Addr())
	var lines []string
	switch {
	case opts.NoToken:
		lines = append(lines, "serving "+base,
			fmt.Sprintf("WARNING: --no-token: no authentication; any local user or process that connects to %s can read the page and %s", ln.Addr(), noTokenRisk(opts)))
	case c.String("token-env") != "":
		name := c.String("token-env")
		lines = append(lines, fmt.Sprintf("serving %s (open it once with ?token= and the token in $%s)", base, name))
		opts.TokenHint = fmt.Sprintf("%s?token= with the token in the variable %s of mcpc ui", base, name)
	default:
		// The one place the token is shown: the address its owner opens.
		lines = append(lines, "serving "+base, fmt.Sprintf("open %s?token=%s", base, opts.Token))
		opts.TokenHint = "the address mcpc ui printed when it started"
		path, remove, err := writeUIToken(ln.Addr().(*net.TCPAddr).Port, opts.Token)
		if err != nil {
			lines = append(lines, fmt.Sprintf("the token is in no file: %v", err))
		} else {
			defer remove()
			lines = append(lines, fmt.Sprintf("the token is also in %s (yours only; removed when mcpc ui ends)", path))
			opts.TokenHint += fmt.Sprintf(", or %s?token= with the token in %s", base, path)
		}
	}
	srv, err := ui.New(opts)
	if err != nil {
		return &exitError{code: ExitInternal, msg: err.Error()}
	}
	for _, l := range lines {
		logw.printf("mcpc ui: %s\n", l)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: httpReadHeaderTimeout}
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

// noTokenRisk is what anyone can do with a page that has no token.
func noTokenRisk(opts ui.Options) string {
	what := "see every server"
	if opts.Edits() {
		what = "edit " + opts.Config + " (enable, disable, remove, set env, add)"
	}
	if opts.Gateway != nil {
		what += " and restart or reset the gateway's servers and call their tools"
	}
	return what
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
	noToken := c.Bool("no-token")
	if noToken && c.IsSet("token-env") {
		return opts, "", usageError("--no-token and --token-env: give one (the page's access token, or none)")
	}
	if n := c.String("token-env"); n != "" && n == c.String("admin-token-env") {
		return opts, "", usageError("--token-env and --admin-token-env name the same variable %s: whoever opens the page would hold the gateway's admin token too; give each its own", n)
	}
	tok, err := takeToken(c, "token-env", vars)
	if err != nil {
		return opts, "", err
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return opts, "", usageError("--listen %q: expected HOST:PORT, such as 127.0.0.1:8090 (%v)", addr, err)
	}
	switch {
	case noToken:
		if !loopback.ListenAddr(addr) {
			return opts, "", usageError("--listen %s: with --no-token, mcpc ui listens on loopback only; use 127.0.0.1:PORT, or drop --no-token (the page then asks for its access token)", addr)
		}
		opts.NoToken = true
	case tok == "":
		if tok, err = private.NewToken(); err != nil {
			return opts, "", &exitError{code: ExitInternal, msg: "cannot make an access token: " + err.Error()}
		}
	}
	opts.Token = tok
	co, err := deploymentOptions(c)
	if err != nil {
		return opts, "", err
	}
	opts.Profile, opts.Compile = co.Profile, co
	opts.Lint = uiLint(c)
	if opts.Edits() { // the file the page edits, which it reads afresh at each load
		opts.Config = co.Config
		if opts.Config == "" {
			opts.Config = craftbot.DefaultPath
		}
		opts.Craftbot.TargetOS = co.TargetOS
		opts.EditNotes = lint.EditNotes
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
		if opts.Token != "" && gw.Token == opts.Token {
			return opts, "", usageError("--token-env and --admin-token-env hold the same token: whoever opens the page would hold the gateway's admin token too; give each its own")
		}
	} else if c.String("admin-token-env") != "" {
		return opts, "", usageError("--admin-token-env goes with --gateway URL")
	}
	return opts, addr, nil
}

// uiLint is the page's mcpc lint: the deployment of the current directory
// (its mcpc.cue, with the source flags over it), as mcpc lint with the same
// flags reports it. One run at a time: a page load runs it.
func uiLint(c *ucli.Context) func() (*compile.Result, []diag.Diagnostic, error) {
	var mu sync.Mutex
	return func() (*compile.Result, []diag.Diagnostic, error) {
		mu.Lock()
		defer mu.Unlock()
		rep, _, _, _, err := lintDeployment(c, lint.Found{Dir: ".", File: lint.Find(".")})
		if err != nil {
			return nil, nil, err
		}
		return rep.Result, rep.Diagnostics, nil
	}
}
