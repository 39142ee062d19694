package cli

import (
	"os"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/atomicfile"
)

func planCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "plan",
		Usage: "compile the sources to the frozen launch plan (canonical JSON)",
		UsageText: `mcpc plan [source flags] [-o FILE] [--workspace DIR --resolve]

The sources are found as validate finds them (mcpc validate --help).

Examples:
   mcpc plan -o plan.json                       # the deployment of the current directory (its mcpc.cue)
   mcpc plan --appsettings appsettings.json --agent-dir agent -o plan.json
   mcpc plan --appsettings appsettings.json --workspace /srv/chats/42 --resolve`,
		Flags: flags(sourceFlags(), formatFlags(), []ucli.Flag{
			&ucli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the plan to `FILE` instead of standard output"},
			&ucli.StringFlag{Name: "workspace", Usage: "a chat's workspace `DIR`, for --resolve"},
			&ucli.BoolFlag{Name: "resolve", Usage: "print one chat's resolved view (needs --workspace); ${env:…} values are [REDACTED]"},
		}),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("plan takes no arguments, got %q", c.Args().First())
			}
			if c.Bool("resolve") && c.String("workspace") == "" {
				return usageError("--resolve needs --workspace DIR")
			}
			opts, err := deploymentOptions(c)
			if err != nil {
				return err
			}
			opts.KeepPlanJSON = !c.Bool("resolve") // printed as sealed: encode it once
			res, err := compileWith(opts)
			if err != nil {
				return err
			}
			if err := printDiagnostics(c.App.ErrWriter, diagFlags(c), res.Diagnostics, res.Files, res.Redactor.Redact); err != nil {
				return err
			}
			if res.Plan == nil {
				return &exitError{code: ExitProblems, msg: "no plan: fix the errors above"}
			}
			var out []byte
			if c.Bool("resolve") {
				out, err = plan.CanonicalJSON(compile.Resolve(res.Plan, c.String("workspace"), res.Env, res.Deny))
			} else {
				out, err = res.PlanJSON() // encoded once: the bytes its digest was computed over
			}
			if err != nil {
				return &exitError{code: ExitInternal, msg: err.Error()}
			}
			if file := c.String("output"); file != "" {
				if err := refuseInput("-o", file, inputsOf(c, res.Sources)); err != nil {
					return err
				}
				if err := atomicfile.Replace(file, out, 0o644, nil); err != nil {
					return usageError("%v", err)
				}
				return errorsBesidePlan(res)
			}
			if _, err = c.App.Writer.Write(out); err != nil {
				return err
			}
			return errorsBesidePlan(res)
		},
	}
}

// errorsBesidePlan is the exit of a plan printed beside errors: a host
// that runs the rest of its servers (craftbot) has a plan although one of
// them is wrong, and the errors still fail the command.
func errorsBesidePlan(res *compile.Result) error {
	if res.HasErrors() {
		return &exitError{code: ExitProblems, msg: "the plan is written, but it does not run as the file says: fix the errors above"}
	}
	return nil
}

// inputsOf lists every file a command read: its file flags and the
// sources of the plan.
func inputsOf(c *ucli.Context, sources []plan.SourceRef) []string {
	var inputs []string
	for _, f := range []string{"appsettings", "env-file"} {
		inputs = append(inputs, c.StringSlice(f)...)
	}
	for _, f := range []string{"deny-list", "plan"} {
		if c.String(f) != "" {
			inputs = append(inputs, c.String(f))
		}
	}
	for _, s := range sources {
		if s.Path != "" {
			inputs = append(inputs, s.Path)
		}
	}
	if ws := c.String("workspace"); ws != "" {
		inputs = append(inputs, filepath.Join(ws, ".volcanic", "mcp", "servers.json"))
	}
	return inputs
}

// refuseInput makes sure an output (named by flag) never overwrites an
// input, whether by the same path or another path to the same file.
func refuseInput(flag, out string, inputs []string) error {
	outAbs, _ := filepath.Abs(out)
	outInfo, statErr := os.Stat(out)
	for _, in := range inputs {
		inAbs, _ := filepath.Abs(in)
		same := inAbs == outAbs
		if !same && statErr == nil {
			if inInfo, err := os.Stat(in); err == nil && os.SameFile(inInfo, outInfo) {
				same = true
			}
		}
		if same {
			return usageError("%s %s is an input; mcpc never writes over an input", flag, out)
		}
	}
	return nil
}
