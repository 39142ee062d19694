package craftbot

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
)

// Recompile (what mcpc run --watch compiles a craftbot plan's config file
// with) takes the config file the plan names, a relative path from the
// current directory, else from the plan file's; this run's host
// environment and deny-list; and this machine's OS.
func TestRecompileOptions(t *testing.T) {
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(filepath.Join(dir, "mcp_config.json"), []byte(`{"mcp_servers": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	deny := &denylist.List{}
	run := compile.RunSources{PlanFile: planFile, Environ: []string{"A=1"}, Env: []string{"B=2"}, EnvFiles: []string{"x.env"}, DenyList: deny}
	withConfig := func(path string) *plan.Plan {
		return &plan.Plan{Profile: plan.ProfileCraftbot, Sources: []plan.SourceRef{{Kind: "config", Path: path}}}
	}

	// Not in the current directory (the package's): from the plan file's.
	opts, files, err := Profile.Recompile(withConfig("mcp_config.json"), run)
	want := filepath.Join(dir, "mcp_config.json")
	if err != nil || opts.Config != want || !slices.Equal(files, []string{want}) {
		t.Fatalf("Recompile = %q, %q, %v; want the plan directory's %s", opts.Config, files, err, want)
	}
	if opts.Profile != plan.ProfileCraftbot || !slices.Equal(opts.Environ, run.Environ) || !slices.Equal(opts.Env, run.Env) ||
		!slices.Equal(opts.EnvFiles, run.EnvFiles) || opts.CleanEnv || opts.DenyList != deny {
		t.Errorf("options %+v do not carry this run's host environment and deny-list", opts)
	}
	if ValidTargetOS(goruntime.GOOS) && opts.TargetOS != goruntime.GOOS {
		t.Errorf("TargetOS %q, want this machine's %s", opts.TargetOS, goruntime.GOOS)
	}

	// In the current directory: as it is.
	opts, _, err = Profile.Recompile(withConfig("recompile_test.go"), run)
	if err != nil || opts.Config != "recompile_test.go" {
		t.Errorf("a path found in the current directory became %q (%v)", opts.Config, err)
	}

	// --clean-env: no process environment.
	clean := run
	clean.CleanEnv = true
	if opts, _, _ := Profile.Recompile(withConfig(want), clean); !opts.CleanEnv || opts.Environ != nil {
		t.Errorf("--clean-env: options %+v read the process environment", opts)
	}

	// No config source: an error that says how to write the plan again.
	if _, _, err := Profile.Recompile(&plan.Plan{Profile: plan.ProfileCraftbot}, run); err == nil ||
		!strings.Contains(err.Error(), "names no config file") {
		t.Errorf("a plan without a config source: %v", err)
	}
}
