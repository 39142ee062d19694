package volcanic

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
)

// Recompile (what mcpc run --watch compiles a volcanic plan's sources
// with) takes the files and choices the plan's sources record, and from
// this run only what they cannot record: the process environment when the
// plan read it, the --env values when it took some, the deny-list. The
// files to watch are the source files, in order.
func TestRecompileOptions(t *testing.T) {
	deny := &denylist.List{}
	run := compile.RunSources{PlanFile: "plan.json", Environ: []string{"A=1"}, Env: []string{"B=2"},
		EnvFiles: []string{"run.env"}, CleanEnv: true, DenyList: deny}
	settings := filepath.Join("agent", "settings.json")
	p := &plan.Plan{Profile: plan.ProfileVolcanic, Sources: []plan.SourceRef{
		{Kind: "environment"}, {Kind: "appsettings", Path: "appsettings.json"}, {Kind: "env-file", Path: "plan.env"},
		{Kind: "env"}, {Kind: "settings", Path: settings}, {Kind: "appsettings", Path: "appsettings.Production.json"},
	}}
	opts, files, err := Profile.Recompile(p, run)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"appsettings.json", "plan.env", settings, "appsettings.Production.json"}; !slices.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
	if opts.Profile != compile.ProfileVolcanic || opts.CleanEnv || !slices.Equal(opts.Environ, run.Environ) || !slices.Equal(opts.Env, run.Env) ||
		!slices.Equal(opts.EnvFiles, []string{"plan.env"}) || opts.AgentDir != "agent" || opts.DenyList != deny ||
		!slices.Equal(opts.AppSettings, []string{"appsettings.json", "appsettings.Production.json"}) {
		t.Errorf("options %+v", opts)
	}

	// A plan that read neither the process environment nor --env takes
	// neither from this run, and names no file to watch.
	opts, files, err = Profile.Recompile(&plan.Plan{Profile: plan.ProfileVolcanic}, run)
	if err != nil || files != nil || !opts.CleanEnv || opts.Environ != nil || opts.Env != nil || opts.EnvFiles != nil {
		t.Errorf("Recompile of a plan without sources: %+v, %q, %v", opts, files, err)
	}
}
