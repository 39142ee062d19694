package volcanic

import (
	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/schema"
)

// compiler is one compilation of a volcanic deployment: the engine's
// Compilation, and what the profile's steps hold between them.
type compiler struct {
	cc   *compile.Compilation
	opts compile.Options
	res  *compile.Result
	v    *schema.Validator
	// checks runs the schema checks while the entries are bound and read.
	checks *checkPool
	// entryRun is what the entry check running sees (checkEntry).
	entryRun entryRun
	cfg      *config
	layers   []layerInfo
	ds       []diag.Diagnostic
	// settingsPath is set when settings.json was read.
	settingsPath string
	settingsData []byte
	// texts are the inputs read so far, searched for ${env:NAME}.
	texts [][]byte
	// hostSecrets finds the values of deny-listed host variables (named by
	// hostSecretNames, in the same order) in config values.
	hostSecrets *redact.Redactor
	// knownSecrets are the values the redactor knows; literalSecrets the
	// credentials found written into configuration values.
	knownSecrets, literalSecrets []string
	hostSecretNames              []string
}

// checkJob is one schema check, run in parallel with the others.
type checkJob struct {
	def     string
	data    *node.Node
	subject string
	naming  schema.Naming
	// entry, when set, is packed once its tree is checked.
	entry *compile.Entry
}

// run compiles the deployment c.opts names: the host environment, the
// appsettings layers, the preset and settings.json, merged into one plan.
func (c *compiler) run() error {
	res := c.res
	if err := c.cc.ReadHostEnv(); err != nil {
		return err
	}
	if err := c.readAppSettings(); err != nil {
		return err
	}
	if err := c.loadSettings(); err != nil {
		return err
	}
	// Known secrets (SPEC §2.4): values of deny-listed host variables and of
	// every ${env:NAME} the inputs reference. They are known before binding,
	// so that a message quoting a value redacts it before cutting it short.
	c.learnSecrets()
	hostEntries, pw := c.bindHost()
	// The configuration tree has served: the entries hold what was bound.
	// Holding it while settings.json is parsed made the largest part of the
	// peak heap.
	c.cfg = nil

	p := &preset{env: res.Env, cfg: pw, quote: c.quote}
	p.resolve()
	c.ds = append(c.ds, p.ds...)

	settingsEntries, src, err := c.readSettings()
	if err != nil {
		return err
	}
	res.PlaywrightLog = res.Redactor.Redact(p.LogLine())

	entries := make([]*compile.Entry, 0, len(hostEntries)+1+len(settingsEntries))
	entries = append(entries, hostEntries...)
	var presetEntry []*compile.Entry
	if p.enabled {
		presetEntry = []*compile.Entry{p.entry()}
		entries = append(entries, presetEntry...)
		res.Sources = append(res.Sources, plan.SourceRef{Kind: "preset"})
	}
	entries = append(entries, settingsEntries...)
	if c.settingsPath != "" {
		res.Sources = append(res.Sources, plan.SourceRef{Kind: "settings", Path: c.settingsPath})
	}
	res.Entries = entries

	for _, e := range presetEntry {
		c.checkEntry(e)
		e.Pack()
	}
	c.settleSettings(settingsEntries, src)
	c.waitChecks()
	c.checkEnvKeys()
	c.checkNameCase(entries)
	explainForeign(c.ds)
	merged := c.merge(entries)
	c.learnLiteralSecrets()
	c.cc.Report(c.ds...)
	return c.cc.Finish(merged)
}

// settle makes the checks of e that the schema does not express, then
// has its schema check run (job), after which its tree is packed: the
// entries are settled one by one as they are bound or read, so that the
// trees of every entry are never whole at once.
func (c *compiler) settle(e *compile.Entry, job checkJob) {
	c.checkEntry(e)
	job.entry = e
	c.check(job)
}

// read reads a source file, without its byte order mark.
func (c *compiler) read(path string) ([]byte, error) { return c.cc.Read(path) }
