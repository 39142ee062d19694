package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/volcanic"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/report"
	"github.com/mcpc-dev/mcpc/policies/lint"
	ucli "github.com/urfave/cli/v2"
)

func validateCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "validate",
		Usage: "check every source the compiler reads; print the diagnostics, not the plan",
		UsageText: `mcpc validate [source flags] [--workspace DIR [--scope SCOPE]] [--format text|json|sarif|github] [--strict]

Examples:
   mcpc validate --clean-env --appsettings examples/volcanic/appsettings.json \
     --env-file examples/volcanic/host.env --agent-dir examples/volcanic/agent
   mcpc validate --appsettings appsettings.json --workspace /srv/chats/42 --scope 42   # also servers.json`,
		Flags: flags(sourceFlags(), formatFlags(), []ucli.Flag{
			&ucli.BoolFlag{Name: "strict", Usage: "exit 1 on warnings too"},
			&ucli.StringFlag{Name: "workspace", Usage: "also validate the chat workspace `DIR`'s .volcanic/mcp/servers.json"},
			&ucli.StringFlag{Name: "scope", Usage: "the chat's session `SCOPE`: with the host secret, sealed entries are opened"},
		}),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("validate takes no arguments, got %q", c.Args().First())
			}
			res, err := compileForValidate(c)
			if err != nil {
				return err
			}
			ds, sources, remoteNote, err := remoteValidation(c, res)
			if err != nil {
				return err
			}
			if err := printDiagnostics(c.App.Writer, diagFlags(c), ds, sources, res.Redactor.Redact); err != nil {
				return err
			}
			for _, line := range []string{res.PlaywrightLog, remoteNote} {
				if line != "" {
					fmt.Fprintln(c.App.ErrWriter, line)
				}
			}
			fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", res.Summary(), report.Summary(ds))
			return exitFor(ds, c.Bool("strict"))
		},
	}
}

// compileForValidate compiles the source flags; with none at all, the
// deployment of the current directory: its mcpc.cue (found upward), else the
// appsettings files a .NET host reads here. Nothing to check (no
// appsettings, no settings.json in the agent dir, no server from the
// environment) is a usage error, not "0 servers: no problems".
func compileForValidate(c *ucli.Context) (*compile.Result, error) {
	for _, f := range sourceFlagNames {
		if c.IsSet(f) {
			return compileFromFlags(c)
		}
	}
	var d *lint.Deployment
	if file := lint.Find("."); file != "" {
		var ds []diag.Diagnostic
		if d, ds = lint.Load(file); len(ds) > 0 {
			return nil, deploymentError(c, ds, sourcesOf())
		}
	}
	opts := compile.Options{Profile: compile.ProfileVolcanic, Environ: environ()}
	if d != nil {
		var err error
		if opts, err = lint.CompileOptions(d, ".", lint.Flags{Environ: environ()}); err != nil {
			return nil, inputErr(err)
		}
	} else {
		opts.AppSettings = volcanic.DotnetAppSettings(".", nil)
	}
	res, err := compileWith(opts)
	if err != nil {
		return nil, err
	}
	if d == nil && len(opts.AppSettings) == 0 && len(res.Entries) == 0 {
		if _, err := os.Stat(filepath.Join(res.AgentDir, "settings.json")); err != nil {
			return nil, usageError("nothing to check: no source flags, no mcpc.cue, no appsettings.json here, no %s and no Mcp__Servers__ variable (mcpc validate --help)",
				filepath.Join(res.AgentDir, "settings.json"))
		}
	}
	return res, nil
}
