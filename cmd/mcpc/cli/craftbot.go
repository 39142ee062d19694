package cli

import (
	goruntime "runtime"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
)

// craftbotFlags are the source flags of the craftbot profile.
func craftbotFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "config", Usage: "craftbot: the host's mcp_config.json `FILE` (default: " + craftbot.DefaultPath + " under the current directory)"},
		&ucli.StringFlag{Name: "target-os", Usage: "craftbot: mark launch paths invalid on `OS` (" + strings.Join(craftbot.TargetOSes, "|") + "; default: this machine's)"},
	}
}

// profileOptions checks the profile and the flags that belong to one
// profile only, and fills in that profile's options. A flag of another
// profile is refused rather than ignored: an operator who gives it expects
// it to be read.
func profileOptions(c *ucli.Context, opts *compile.Options) error {
	prof, err := compile.Lookup(opts.Profile)
	if err != nil {
		return usageError("--profile %s: the profiles are %s", opts.Profile, strings.Join(compile.ProfileNames(), " and "))
	}
	return profileFlags[prof.Name()](c, opts)
}

// profileFlags checks, for each profile, the flags of the other profiles,
// and fills in the options of its own flags.
var profileFlags = map[string]func(*ucli.Context, *compile.Options) error{
	plan.ProfileVolcanic: volcanicOptions,
	plan.ProfileCraftbot: craftbotOptions,
}

func volcanicOptions(c *ucli.Context, _ *compile.Options) error {
	for _, f := range []string{"config", "target-os", "builtin-actions"} {
		if c.IsSet(f) {
			return usageError("--%s belongs to --profile craftbot", f)
		}
	}
	return nil
}

func craftbotOptions(c *ucli.Context, opts *compile.Options) error {
	if c.IsSet("builtin-tools") {
		return usageError("--builtin-tools belongs to --profile volcanic; craftbot's built-in actions are --builtin-actions")
	}
	for _, f := range []string{"appsettings", "agent-dir", "workspace", "scope", "resolve"} {
		if c.IsSet(f) {
			return usageError("--%s belongs to --profile volcanic; craftbot reads --config FILE", f)
		}
	}
	opts.Config = c.String("config")
	opts.TargetOS = c.String("target-os")
	if !c.IsSet("target-os") && craftbot.ValidTargetOS(goruntime.GOOS) {
		opts.TargetOS = goruntime.GOOS
	}
	if c.IsSet("target-os") && !craftbot.ValidTargetOS(opts.TargetOS) {
		return usageError("--target-os %s: one of %s", opts.TargetOS, strings.Join(craftbot.TargetOSes, ", "))
	}
	return nil
}

// exitFor is the exit of a command that printed the report ds.
func exitFor(ds []diag.Diagnostic, strict bool) error {
	if code := problemsCode(ds, strict); code != ExitOK {
		return &exitError{code: code}
	}
	return nil
}

// volcanicPlanOnly refuses a craftbot plan where mcpc tools --plan reads
// one: a craftbot plan's env holds references to mcp_config.json, which
// mcpc tools reads with --profile craftbot --config instead (mcpc run runs
// a craftbot plan: runCraftbot).
func volcanicPlanOnly(file string, p *plan.Plan) error {
	if p != nil && p.Profile != plan.ProfileVolcanic {
		return usageError("--plan %s is a %s plan: this mcpc starts volcanic plans only", file, p.Profile)
	}
	return nil
}
