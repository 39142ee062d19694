package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/term"
)

func explainCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "explain",
		Usage:     "show where each field of one server came from, and what it shadowed",
		ArgsUsage: "NAME",
		UsageText: `mcpc explain NAME [source flags] [--format text|json]

Example:
   mcpc explain github --appsettings appsettings.json --env-file host.env`,
		Flags: flags(sourceFlags(), formatFlags()),
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageError("explain needs exactly one server NAME")
			}
			name := c.Args().First()
			res, err := compileDeployment(c)
			if err != nil {
				return err
			}
			format := c.String("format")
			diagFormat := format
			if format != "json" {
				diagFormat = "text"
			}
			if err := printDiagnostics(c.App.ErrWriter, diagOutput{format: diagFormat, oneLine: c.Bool("oneline"), color: c}, res.Diagnostics, res.Files, res.Redactor.Redact); err != nil {
				return err
			}
			x, ok := res.Explain(name)
			if !ok {
				return usageError("no server named %q; servers: %s", name, strings.Join(res.Names(), ", "))
			}
			if format == "json" {
				out, err := plan.CanonicalJSON(x)
				if err != nil {
					return err
				}
				if _, err := c.App.Writer.Write(out); err != nil {
					return err
				}
			} else {
				writeExplanation(c, x)
			}
			return &exitError{code: problemsCode(res.Diagnostics, false)}
		},
	}
}

func writeExplanation(c *ucli.Context, x *compile.Explanation) {
	w := c.App.Writer
	fmt.Fprintf(w, "server %q from %s\n", x.Name, term.Escape(x.Origin.String()))
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, f := range x.Fields {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", term.Escape(f.Field), term.Escape(f.Value), term.Escape(f.From))
	}
	tw.Flush()
	for _, o := range x.Others {
		switch o.Role {
		case "shadowed":
			fmt.Fprintf(w, "shadows %s (dropped: the first source wins)\n", term.Escape(o.Origin.String()))
		default:
			fmt.Fprintf(w, "also defined at %s\n", term.Escape(o.Origin.String()))
		}
	}
}
