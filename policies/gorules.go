package policies

import (
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/policies/toollock"
)

// Input is what the Go deployment rules look at: the plan, the tool lock
// when there is one (so that CI needs no servers), and the target the
// deployment runs on.
type Input struct {
	Plan   *plan.Plan
	Lock   *toollock.Lock // nil: the rules about tools do not run
	Target Target
	// EnvValue is the value env key of Plan.Servers[server] is launched
	// with, where the plan holds a reference (a craftbot ${config:KEY} is
	// read from mcp_config.json); ok is false when it is not known. nil:
	// the plan's own values. A value may be a secret: rules never print it.
	EnvValue func(server int, key string) (value string, ok bool)
	// HostSecrets are the names of the secret (deny-listed) variables of
	// the host environment the deployment describes (env files, --env),
	// sorted; nil when that environment is not known.
	HostSecrets []string
}

// envValue is the value env key of server i is launched with (see
// Input.EnvValue).
func (in *Input) envValue(i int, key string) (string, bool) {
	if in.EnvValue != nil {
		return in.EnvValue(i, key)
	}
	v := in.Plan.Servers[i].Env[key]
	if v == nil {
		return "", false
	}
	return *v, true
}

// Target describes the machine a deployment runs on.
type Target struct {
	// OS is linux, darwin or windows.
	OS string
	// Lookup reports whether a command name (no slash) is found on the
	// target's PATH.
	Lookup func(name string) bool
	// Exists reports whether an absolute path exists on the target; nil when
	// the target is not this machine and paths cannot be checked.
	Exists func(path string) bool
	// Browsers reports whether a Playwright browser (chromium, chrome,
	// msedge, firefox, webkit) of revision (its build number; "" for any)
	// is installed on the target, and else the build of another revision
	// it found ("chromium-1234"), if any; nil when unknown.
	Browsers func(name, revision string) (found bool, other string)
	// Clients are the target clients whose limits apply to tools
	// (ClientLimits names them).
	Clients []string
}

// Check is one deployment rule written in Go, for what a CUE pack cannot
// express (the file system, PATH, the tool lock): its declaration and its
// check, in one value.
type Check struct {
	rules.Rule
	Run func(in *Input) []Violation
}

// GoRules are the deployment rules written in Go, each in a file named after
// its id.
func GoRules() []Check {
	return []Check{runtimeMissing, toolBudget, toolNameLength, playwrightBrowserMissing, npxWithoutYes, placeholderValue, cbHostEnv}
}

// RunGo runs every Go rule on in, violations sorted by rule and path.
func RunGo(in *Input) []Violation {
	var out []Violation
	for _, c := range GoRules() {
		for _, v := range c.Run(in) {
			v.Rule, v.Severity = c.ID, c.Severity
			out = append(out, v)
		}
	}
	sortViolations(out)
	return out
}
