package compile

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpc-dev/mcpc/compile/plan"
)

// volcanic is the profile of the host configuration, the Playwright preset
// and the agent's settings.json (SPEC §2).
type volcanic struct{}

func init() { Register(volcanic{}) }

func (volcanic) Name() string { return ProfileVolcanic }

func (volcanic) Compile(c *Compilation) error { return c.c.run() }

func (volcanic) Explain(r *Result, name string) (*Explanation, bool) { return r.explainVolcanic(name) }

func (volcanic) Summary(r *Result) string {
	return fmt.Sprintf("%s, %d shadowed", Plural(len(r.Names()), "server"), len(r.Entries)-len(r.Names()))
}

// FindSources: without appsettings named, those a .NET host reads in dir.
func (volcanic) FindSources(dir string, opts *Options, getenv func(string) string) error {
	if len(opts.AppSettings) > 0 {
		return nil
	}
	opts.AppSettings = DotnetAppSettings(dir, getenv)
	if len(opts.AppSettings) == 0 && opts.AgentDir == "" {
		return fmt.Errorf("%s: nothing to check: no appsettings.json there, and neither mcpc.cue (mcpc lint --init writes one) nor the source flags name a source", dir)
	}
	return nil
}

// Recompile: the files and choices p's sources record, and what they
// cannot record from this run (the process environment, the --env values,
// the deny-list). Without a settings source the agent directory is found
// as mcpc plan finds it (VOLCANIC_AGENT_DIR, else HOME): a settings.json
// there that mcpc plan did not read makes another plan, and the digest
// says so.
func (volcanic) Recompile(p *plan.Plan, run RunSources) (Options, []string, error) {
	opts := Options{Profile: ProfileVolcanic, CleanEnv: true, DenyList: run.DenyList}
	var files []string
	for _, s := range p.Sources {
		switch s.Kind {
		case "environment":
			opts.CleanEnv = false
			opts.Environ = run.Environ
		case "env":
			opts.Env = run.Env
		case "appsettings":
			opts.AppSettings = append(opts.AppSettings, s.Path)
		case "env-file":
			opts.EnvFiles = append(opts.EnvFiles, s.Path)
		case "settings":
			opts.AgentDir = filepath.Dir(s.Path)
		}
		switch s.Kind {
		case "appsettings", "env-file", "settings":
			files = append(files, s.Path)
		}
	}
	return opts, files, nil
}

// DotnetAppSettings are the appsettings files a .NET host reads in dir:
// appsettings.json, then appsettings.<Environment>.json (DOTNET_ENVIRONMENT,
// else ASPNETCORE_ENVIRONMENT), those that exist.
func DotnetAppSettings(dir string, getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	candidates := []string{filepath.Join(dir, "appsettings.json")}
	env := getenv("DOTNET_ENVIRONMENT")
	if env == "" {
		env = getenv("ASPNETCORE_ENVIRONMENT")
	}
	if env != "" {
		candidates = append(candidates, filepath.Join(dir, "appsettings."+env+".json"))
	}
	var out []string
	for _, f := range candidates {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			out = append(out, f)
		}
	}
	return out
}
