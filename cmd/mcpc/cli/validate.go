package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/report"
)

func validateCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "validate",
		Usage: "check every source the compiler reads; print the diagnostics, not the plan",
		UsageText: `mcpc validate [source flags] [--format text|json|sarif|github] [--strict]

Example:
   mcpc validate --clean-env --appsettings examples/volcanic/appsettings.json \
     --env-file examples/volcanic/host.env --agent-dir examples/volcanic/agent`,
		Flags: flags(sourceFlags(), formatFlags(), []ucli.Flag{
			&ucli.BoolFlag{Name: "strict", Usage: "exit 1 on warnings too"},
		}),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("validate takes no arguments, got %q", c.Args().First())
			}
			res, err := compileFromFlags(c)
			if err != nil {
				return err
			}
			if err := printDiagnostics(c, c.App.Writer, res); err != nil {
				return err
			}
			fmt.Fprintln(c.App.ErrWriter, res.PlaywrightLog)
			fmt.Fprintf(c.App.ErrWriter, "%s, %d shadowed: %s\n", plural(len(res.Names()), "server"), len(res.Entries)-len(res.Names()), report.Summary(res.Diagnostics))
			if code := problemsCode(res.Diagnostics, c.Bool("strict")); code != ExitOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
}
