// Package volcanic is the host profile of volcanic's .NET host: its
// appsettings layers and environment bound as .NET binds them, the
// Playwright preset, and the agent's settings.json, checked and merged
// into one plan (SPEC §2). It registers itself with package compile as the
// default profile.
package volcanic

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/schema"
)

// Profile is the profile of the host configuration, the Playwright preset
// and the agent's settings.json (SPEC §2), registered as compile's
// default.
var Profile compile.Profile = profile{}

type profile struct{}

func init() { compile.Register(Profile) }

func (profile) Name() string { return compile.ProfileVolcanic }

// Compile reads and checks the sources of cc's options. The schema checks
// run beside the reading (checkPool), on a validator of their own.
func (profile) Compile(cc *compile.Compilation) error {
	v, err := schema.Acquire()
	if err != nil {
		return err
	}
	defer schema.Release(v)
	c := &compiler{cc: cc, opts: cc.Options(), res: cc.Result(), v: v}
	defer c.stopChecks() // after an input error too: no goroutine left waiting
	return c.run()
}

func (profile) Explain(r *compile.Result, name string) (*compile.Explanation, bool) {
	return explain(r, name)
}

func (profile) Summary(r *compile.Result) string {
	return fmt.Sprintf("%s, %d shadowed", compile.Plural(len(r.Names()), "server"), len(r.Entries)-len(r.Names()))
}

// FindSources: without appsettings named, those a .NET host reads in dir
// (DotnetAppSettings), its Environment taken from the host environment
// opts describes: mcpc's own unless cleanEnv, the env files and --env.
// Without those nor an agent dir, the host still reads the settings.json of
// its default agent dir and its environment: an env file is a source (an
// image configured by its environment alone), and so is an Mcp variable;
// nothing to check is when none of them holds anything.
func (profile) FindSources(dir string, opts *compile.Options) error {
	if len(opts.AppSettings) > 0 {
		return nil
	}
	env, _, _, err := compile.LoadHostEnv(compile.HostEnvOptions{Environ: opts.Environ, CleanEnv: opts.CleanEnv,
		EnvFiles: opts.EnvFiles, Env: opts.Env, ReadFile: opts.ReadFile})
	getenv := func(string) string { return "" }
	if err == nil {
		getenv = env.Value
	}
	opts.AppSettings = DotnetAppSettings(dir, getenv)
	if len(opts.AppSettings) > 0 || opts.AgentDir != "" || len(opts.EnvFiles) > 0 || err != nil {
		return nil // an input it cannot read, the compilation reports
	}
	settings := filepath.Join(agentDir(*opts, env), "settings.json")
	if fi, err := os.Stat(settings); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	for _, name := range env.Names() {
		if levels := keyLevels(name); len(levels) >= 2 && foldKey(levels[0]) == "MCP" {
			return nil
		}
	}
	return fmt.Errorf("%s: nothing to check: no appsettings.json there, no %s, no env file and no Mcp__ variable, and neither mcpc.cue (mcpc lint --init writes one) nor the source flags name a source", dir, settings)
}

// Detect: the appsettings files (a .NET host's layering order:
// appsettings.json first), .env and *.env files, and agent/settings.json or
// .volcanic/agent; found when there is an appsettings file or an agent
// directory.
func (profile) Detect(dir string) (compile.Options, string, bool) {
	var opts compile.Options
	rel := func(p string) string {
		if r, err := filepath.Rel(dir, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "appsettings*.json"))
	sort.Slice(matches, func(i, j int) bool {
		bi, bj := filepath.Base(matches[i]) == "appsettings.json", filepath.Base(matches[j]) == "appsettings.json"
		if bi != bj {
			return bi
		}
		return matches[i] < matches[j]
	})
	for _, f := range matches {
		opts.AppSettings = append(opts.AppSettings, rel(f))
	}
	// *.env matches .env too (a leading dot is no special case for Glob):
	// .env goes first, once.
	if fi, err := os.Stat(filepath.Join(dir, ".env")); err == nil && fi.Mode().IsRegular() {
		opts.EnvFiles = append(opts.EnvFiles, ".env")
	}
	named, _ := filepath.Glob(filepath.Join(dir, "*.env"))
	for _, f := range named {
		if filepath.Base(f) != ".env" {
			opts.EnvFiles = append(opts.EnvFiles, rel(f))
		}
	}
	for _, agent := range []string{"agent", filepath.Join(".volcanic", "agent")} {
		if fi, err := os.Stat(filepath.Join(dir, agent, "settings.json")); err == nil && fi.Mode().IsRegular() {
			opts.AgentDir = filepath.ToSlash(agent)
			break
		}
	}
	return opts, "appsettings*.json, agent/settings.json", len(opts.AppSettings) > 0 || opts.AgentDir != ""
}

// Recompile: the files and choices p's sources record, and what they
// cannot record from this run (the process environment, the --env values,
// the deny-list). Without a settings source the agent directory is found
// as mcpc plan finds it (VOLCANIC_AGENT_DIR, else HOME): a settings.json
// there that mcpc plan did not read makes another plan, and the digest
// says so.
func (profile) Recompile(p *plan.Plan, run compile.RunSources) (compile.Options, []string, error) {
	opts := compile.Options{Profile: compile.ProfileVolcanic, CleanEnv: true, DenyList: run.DenyList}
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
// appsettings.json, then appsettings.<Environment>.json, those that exist.
// Environment is getenv's DOTNET_ENVIRONMENT, else ASPNETCORE_ENVIRONMENT,
// else Production, as the .NET host defaults it; getenv reads the host
// environment.
func DotnetAppSettings(dir string, getenv func(string) string) []string {
	var out []string
	for _, f := range []string{filepath.Join(dir, "appsettings.json"), filepath.Join(dir, "appsettings."+DotnetEnvironment(getenv)+".json")} {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			out = append(out, f)
		}
	}
	return out
}

// DotnetEnvironment is the .NET host's Environment in the host environment
// getenv reads: DOTNET_ENVIRONMENT, else ASPNETCORE_ENVIRONMENT, else
// Production.
func DotnetEnvironment(getenv func(string) string) string {
	for _, name := range []string{"DOTNET_ENVIRONMENT", "ASPNETCORE_ENVIRONMENT"} {
		if v := getenv(name); v != "" {
			return v
		}
	}
	return "Production"
}
