package cli

import (
	"fmt"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/policies/lint"
)

func rulesCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "rules",
		Usage: "list every rule: id, severity, description",
		UsageText: `mcpc rules [--format text|json]

Example:
   mcpc rules --format json`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "text|json"},
		},
		Action: func(c *ucli.Context) error {
			all, err := lint.Rules()
			if err != nil {
				return &exitError{code: ExitInternal, msg: err.Error()}
			}
			switch c.String("format") {
			case "json":
				type row struct {
					ID          string `json:"id"`
					Severity    string `json:"severity"`
					Description string `json:"description"`
					Example     string `json:"example"`
					Home        string `json:"home"`
				}
				rows := make([]row, 0, len(all))
				for _, r := range all {
					rows = append(rows, row{r.ID, string(r.Severity), r.Description, r.Example, r.Home})
				}
				out, err := plan.CanonicalJSON(rows)
				if err != nil {
					return err
				}
				_, err = c.App.Writer.Write(out)
				return err
			case "text":
				tw := tabwriter.NewWriter(c.App.Writer, 2, 8, 2, ' ', 0)
				for _, r := range all {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Severity, r.Description)
				}
				return tw.Flush()
			}
			return usageError("--format %q: rules prints text or json", c.String("format"))
		},
	}
}
