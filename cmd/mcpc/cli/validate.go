package cli

import (
	"fmt"

	"github.com/mcpc-dev/mcpc/internal/report"
	ucli "github.com/urfave/cli/v2"
)

func validateCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "validate",
		Usage: "check every source the compiler reads; print the diagnostics, not the plan",
		UsageText: `mcpc validate [source flags] [--workspace DIR [--scope SCOPE]] [--format text|json|sarif|github] [--strict]

The sources are the source flags, over those of the mcpc.cue found upward from the current
directory, else the files the host reads here; with none, validate exits 2 ("nothing to check").
--appsettings - reads standard input.

Examples:
   mcpc validate                                # the deployment of the current directory
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
			if err := existingDirs(c, "workspace"); err != nil {
				return err
			}
			res, err := compileDeployment(c)
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
