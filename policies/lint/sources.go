package lint

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/policies"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Flags are what the command line says about a deployment, beside
// mcpc.cue: the source flags given (Set names them; their values are in
// Sources), the target flags, and mcpc's own environment.
type Flags struct {
	Set      map[string]bool // source flags given: profile, appsettings, env-file, env, clean-env, agent-dir, config, deny-list
	Sources  compile.Options
	TargetOS string // "" when not given
	Path     string
	HasPath  bool
	Clients  []string
	Lock     string
	Environ  []string // mcpc's own environment, part of the host's unless cleanEnv
}

// InputError is a deployment that cannot be linted as described: nothing to
// check, a missing agent dir, a deny-list that does not load, an unknown
// client or OS (exit 2).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputError(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// CompileOptions are the compiler options of the deployment in dir: the
// sources of mcpc.cue (d, nil when there is none), each overridden by its
// source flag when that is given (a flag wins over the file, as on every
// command), else the files the host reads in dir: without mcpc.cue and
// source flags, the profile is the one whose files are in dir (Detect: a
// CraftBot app/config/mcp_config.json), and a volcanic agent directory
// there is read. Nothing to check is an error: a lint that checked nothing
// must not pass.
func CompileOptions(d *Deployment, dir string, f Flags) (compile.Options, error) {
	opts := compile.Options{Profile: compile.ProfileVolcanic}
	if d == nil && !anySet(f.Set) {
		if found, err := Detect(dir); err == nil {
			opts.Profile = found.Profile
			if found.Sources.AgentDir != "" {
				opts.AgentDir = filepath.Join(dir, found.Sources.AgentDir)
			}
		}
	}
	if d != nil {
		s := d.Sources
		if d.Profile != "" {
			opts.Profile = d.Profile
		}
		opts.AppSettings, opts.EnvFiles, opts.Env, opts.CleanEnv, opts.AgentDir, opts.Config =
			s.AppSettings, s.EnvFiles, s.Env, s.CleanEnv, s.AgentDir, s.Config
		if s.DenyList != "" {
			l, err := denylist.Load(s.DenyList)
			if err != nil {
				return opts, inputError("%s: denyList: %v", d.File, err)
			}
			opts.DenyList = l
		}
	}
	flagged := f.Sources
	for _, o := range []struct {
		flag string
		set  func()
	}{
		{"profile", func() { opts.Profile = flagged.Profile }},
		{"appsettings", func() { opts.AppSettings = flagged.AppSettings }},
		{"env-file", func() { opts.EnvFiles = flagged.EnvFiles }},
		{"env", func() { opts.Env = flagged.Env }},
		{"clean-env", func() { opts.CleanEnv = flagged.CleanEnv }},
		{"agent-dir", func() { opts.AgentDir = flagged.AgentDir }},
		{"config", func() { opts.Config = flagged.Config }},
		{"deny-list", func() { opts.DenyList = flagged.DenyList }},
	} {
		if f.Set[o.flag] {
			o.set()
		}
	}
	prof, err := compile.Lookup(opts.Profile)
	if err != nil {
		return opts, inputError("%v", err)
	}
	// A profile whose host runs on every OS ignores the target OS.
	opts.TargetOS = TargetOS(d, f)
	opts.Environ = nil
	if !opts.CleanEnv {
		opts.Environ = f.Environ // the host environment FindSources looks at too
	}
	if err := prof.FindSources(dir, &opts); err != nil {
		return opts, inputError("%v", err)
	}
	if opts.AgentDir != "" {
		if fi, err := os.Stat(opts.AgentDir); err != nil || !fi.IsDir() {
			return opts, inputError("agent dir %s does not exist", opts.AgentDir)
		}
	}
	return opts, nil
}

func anySet(set map[string]bool) bool {
	for _, v := range set {
		if v {
			return true
		}
	}
	return false
}

// TargetOS is the OS the deployment runs on: the flag, else mcpc.cue's,
// else this machine's.
func TargetOS(d *Deployment, f Flags) string {
	switch {
	case f.TargetOS != "":
		return f.TargetOS
	case d != nil && d.Target.OS != "":
		return d.Target.OS
	}
	return goruntime.GOOS
}

// TargetOf describes where the deployment runs, and names the tool lock to
// read: the flags, else mcpc.cue's target. This machine is the target unless
// a PATH describes another (an image) or another OS is named. Its PATH is
// the described host environment's; one without PATH (--clean-env) uses
// mcpc's own, since no host runs without one.
func TargetOf(d *Deployment, f Flags, opts compile.Options) (policies.Target, string, error) {
	goos := TargetOS(d, f)
	if !craftbot.ValidTargetOS(goos) {
		return policies.Target{}, "", inputError("target OS %s: one of %s", goos, strings.Join(craftbot.TargetOSes, ", "))
	}
	clients, lockFile := f.Clients, f.Lock
	path, image := f.Path, f.HasPath
	if d != nil {
		if len(clients) == 0 {
			clients = d.Target.Clients
		}
		if lockFile == "" {
			lockFile = d.Target.Lock
		}
		if !image && d.Target.Path != "" {
			path, image = joinPathList(d.Dir, d.Target.Path, goos), true
		}
	}
	for _, name := range clients {
		if !validClient(name) {
			return policies.Target{}, "", inputError("client %s: one of %s", name, ClientNames())
		}
	}
	if image || goos != goruntime.GOOS {
		return policies.ImageTarget(goos, path, clients), lockFile, nil
	}
	env, _, _, err := compile.LoadHostEnv(compile.HostEnvOptions{CleanEnv: opts.CleanEnv, Environ: opts.Environ, EnvFiles: opts.EnvFiles, Env: opts.Env})
	if err != nil {
		return policies.Target{}, "", err
	}
	vars := env.Map()
	path, ok := vars["PATH"]
	if !ok {
		path = os.Getenv("PATH")
	}
	return policies.LocalTarget(path, vars, clients), lockFile, nil
}

// ClientNames lists the target clients mcpc knows.
func ClientNames() string {
	var names []string
	for _, c := range policies.ClientLimits {
		names = append(names, c.Name)
	}
	return strings.Join(names, "|")
}

func validClient(name string) bool {
	for _, c := range policies.ClientLimits {
		if c.Name == name {
			return true
		}
	}
	return false
}

// joinPathList makes the relative directories of a PATH relative to dir.
func joinPathList(dir, path, goos string) string {
	sep := string(os.PathListSeparator)
	if goos == "windows" {
		sep = ";"
	}
	parts := strings.Split(path, sep)
	for i, p := range parts {
		if p != "" && !filepath.IsAbs(p) {
			parts[i] = filepath.Join(dir, p)
		}
	}
	return strings.Join(parts, sep)
}

// KnownRules are the rules a deployment may name: mcpc's and those of the
// packs it runs.
func KnownRules(packs []*policies.Pack) ([]rules.Rule, error) {
	all, err := Rules()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range all {
		seen[r.ID] = true
	}
	for _, p := range packs {
		for _, r := range p.Rules() {
			if !seen[r.ID] {
				all = append(all, r)
				seen[r.ID] = true
			}
		}
	}
	return all, nil
}

// Detect finds a deployment's sources in dir, for mcpc lint --init: those
// of the first profile that finds any there (compile.Profile.Detect).
// A host's own file says more than the default profile's generic names
// (appsettings*.json, *.env), so the default is asked last. Paths are
// relative to dir. The host environment is the files' alone (cleanEnv): a
// CI runner's own variables (an exported GITHUB_TOKEN) must not change
// what lint finds.
func Detect(dir string) (Deployment, error) {
	names := compile.ProfileNames() // the default first
	var order []string
	if len(names) > 0 {
		order = append(append(order, names[1:]...), names[0])
	}
	looked := map[string]string{}
	for _, name := range order {
		prof, err := compile.Lookup(name)
		if err != nil {
			return Deployment{}, inputError("%v", err)
		}
		opts, what, found := prof.Detect(dir)
		if found {
			return Deployment{Profile: prof.Name(), Sources: Sources{AppSettings: opts.AppSettings, EnvFiles: opts.EnvFiles, CleanEnv: true, AgentDir: opts.AgentDir, Config: opts.Config}}, nil
		}
		looked[name] = what
	}
	var what []string
	for _, n := range names {
		what = append(what, looked[n])
	}
	return Deployment{}, inputError("lint --init %s: no sources found (%s); give them with the source flags", dir, strings.Join(what, ", "))
}

// AppSettingsNote says which appsettings files opts layers when the host
// environment chose them beside appsettings.json (neither --appsettings nor
// mcpc.cue names any, and an appsettings.{Environment}.json is there), so
// a check says which configuration it describes; "" otherwise, when the
// files read are the ones named or appsettings.json alone.
func AppSettingsNote(d *Deployment, f Flags, opts compile.Options) string {
	if (opts.Profile != "" && opts.Profile != compile.ProfileVolcanic) || f.Set["appsettings"] || (d != nil && len(d.Sources.AppSettings) > 0) || len(opts.AppSettings) < 2 {
		return ""
	}
	names := make([]string, len(opts.AppSettings))
	for i, p := range opts.AppSettings {
		names[i] = filepath.Base(p)
	}
	return "read " + strings.Join(names, ", then ") + " (Environment " + strings.TrimSuffix(strings.TrimPrefix(names[len(names)-1], "appsettings."), ".json") + ")"
}
