package compile

import (
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/redact"
)

// HostEnvOptions are the sources of a host environment (SPEC §2.1), as the
// source flags give them.
type HostEnvOptions struct {
	Environ  []string // the process environment; ignored with CleanEnv
	CleanEnv bool
	EnvFiles []string // dotenv files, overlaid in order
	Env      []string // KEY=VALUE entries, overlaid last
	DenyList *denylist.List
	ReadFile func(string) ([]byte, error) // nil: inputfile.Read
}

// LoadHostEnv builds a host environment exactly as Compile does, for
// commands that need one without compiling (mcpc run): the process
// environment, then each env file, then the --env entries. Lines that do
// not parse come back as positioned diagnostics (secret values never
// quoted), with a FileSet for their excerpts; an env file that cannot be
// read is an *InputError.
func LoadHostEnv(opts HostEnvOptions) (*HostEnv, *FileSet, []diag.Diagnostic, error) {
	deny := opts.DenyList
	if deny == nil {
		deny = denylist.Default()
	}
	read := opts.ReadFile
	if read == nil {
		read = inputfile.Read
	}
	c := &compiler{opts: Options{Environ: opts.Environ, CleanEnv: opts.CleanEnv, EnvFiles: opts.EnvFiles, Env: opts.Env},
		read: withoutBOM(read), res: &Result{Files: newFileSet(), Deny: deny}}
	if err := c.readHostEnv(); err != nil {
		return nil, nil, nil, err
	}
	var secrets []string
	for _, name := range c.res.Env.Names() {
		if deny.Denied(name) {
			secrets = append(secrets, c.res.Env.Value(name))
		}
	}
	c.res.Files.redactor = redact.New(secrets)
	for i := range c.ds {
		c.ds[i].Message = c.res.Files.redactor.Redact(c.ds[i].Message)
		c.ds[i].Suggestion = c.res.Files.redactor.Redact(c.ds[i].Suggestion)
	}
	diag.Sort(c.ds)
	return c.res.Env, c.res.Files, c.ds, nil
}

// readHostEnv builds the host environment and its configuration layers.
func (c *compiler) readHostEnv() error {
	env := newHostEnv()
	c.res.Env = env
	if !c.opts.CleanEnv {
		vars := processEnvVars(c.opts.Environ)
		env.addLayer(vars)
		c.res.Files.addPseudo(ProcessEnvFile, envLines(vars, func(string) bool { return false }))
		c.res.Sources = append(c.res.Sources, plan.SourceRef{Kind: "environment"})
	}
	for _, f := range c.opts.EnvFiles {
		data, err := c.read(f)
		if err != nil {
			return &InputError{Path: f, Err: err}
		}
		vars, ds, masks := parseDotenv(f, data, c.res.Deny.Denied)
		c.ds = append(c.ds, ds...)
		env.addLayer(vars)
		c.res.Files.add(f, data)
		for line, text := range masks {
			c.res.Files.mask(f, line, text)
		}
		c.res.Sources = append(c.res.Sources, plan.SourceRef{Kind: "env-file", Path: f})
	}
	if len(c.opts.Env) > 0 {
		vars, ds := entryVars(EnvFlagFile, "env", c.opts.Env)
		c.ds = append(c.ds, ds...)
		env.addLayer(vars)
		c.res.Files.addPseudo(EnvFlagFile, envLines(vars, c.res.Deny.Denied))
		c.res.Sources = append(c.res.Sources, plan.SourceRef{Kind: "env"})
	}
	return nil
}
