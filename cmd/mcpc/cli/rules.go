package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/policies/lint"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

func rulesCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "rules",
		Usage: "list every rule (id, severity, description), or show one in full",
		UsageText: `mcpc rules [--format text|json] [ID]

With ID, the rule in full: severity, description, example, the file that
holds its check and its entry in docs/rules.md.

Example:
   mcpc rules --format json
   mcpc rules package-unpinned`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Value: "text", Usage: "text|json"},
		},
		Action: func(c *ucli.Context) error {
			all, err := lint.Rules()
			if err != nil {
				return &exitError{code: ExitInternal, msg: err.Error()}
			}
			if c.NArg() > 1 {
				return usageError("rules takes one rule id at most")
			}
			if id := c.Args().First(); id != "" {
				return showRule(c, all, id)
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

// RulesDocURL is where docs/rules.md is published; a rule's entry is its
// id's anchor there.
const RulesDocURL = "https://github.com/mcpc-dev/mcpc/blob/main/docs/rules.md"

// showRule prints the rule id of all in full, in the --format asked; an
// unknown id is a usage error with the id it may have meant.
func showRule(c *ucli.Context, all []rules.Rule, id string) error {
	ids := make([]string, len(all))
	for i, r := range all {
		ids[i] = r.ID
		if r.ID != id {
			continue
		}
		docs := RulesDocURL + "#" + r.ID
		switch c.String("format") {
		case "json":
			out, err := plan.CanonicalJSON(map[string]string{"id": r.ID, "severity": string(r.Severity),
				"description": r.Description, "example": r.Example, "home": r.Home, "docs": docs})
			if err != nil {
				return err
			}
			_, err = c.App.Writer.Write(out)
			return err
		case "text":
			var b strings.Builder
			fmt.Fprintf(&b, "%s (%s)\n\n%s\n\nExample:\n  %s\n\n", r.ID, r.Severity, r.Description, r.Example)
			if r.Home != "" {
				fmt.Fprintf(&b, "Checked in: %s\n", r.Home)
			}
			fmt.Fprintf(&b, "Docs: %s\n", docs)
			_, err := fmt.Fprint(c.App.Writer, b.String())
			return err
		}
		return usageError("--format %q: rules prints text or json", c.String("format"))
	}
	sugg := "mcpc rules lists every rule id"
	if best := lint.Closest(id, ids); best != "" {
		sugg = fmt.Sprintf("did you mean %q?", best)
	}
	return usageError("rule %q does not exist; %s", id, sugg)
}
