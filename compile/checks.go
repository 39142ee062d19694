package compile

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// checkPool runs the schema checks of a compilation on GOMAXPROCS-1
// goroutines while the compilation goes on binding and reading entries:
// each entry is submitted once the checks of its own are made, and packed
// by the goroutine that checked it. Jobs go in small groups (a goroutine
// woken for each one cost more than many checks), and the queue is short,
// so that few entries wait with their trees whole. Checking the entries a
// batch of a thousand at a time instead, each batch waiting for its
// slowest check, cost a third more time on a busy machine.
type checkPool struct {
	jobs    chan []numberedJob
	pending []numberedJob
	wg      sync.WaitGroup
	// found holds, per goroutine, the diagnostics of the jobs that have
	// any, with the job's number.
	found [][]numberedDiags
	n     int
}

type numberedJob struct {
	n int
	checkJob
}

type numberedDiags struct {
	n  int
	ds []diag.Diagnostic
}

const (
	// checkGroup is how many jobs go to a goroutine at once.
	checkGroup = 32
	// checkQueue is how many groups wait for a goroutine at most.
	checkQueue = 4
)

// check has j's schema check run, and its entry packed after it.
func (c *compiler) check(j checkJob) {
	// The compilation's own goroutine stays busy binding and reading: one
	// goroutine fewer than GOMAXPROCS checks (the checks are an eighth of
	// a compilation), as more than GOMAXPROCS busy goroutines only take
	// turns.
	workers := runtime.GOMAXPROCS(0) - 1
	if workers < 1 {
		c.ds = append(c.ds, c.v.Check(j.def, j.data, j.subject, j.naming)...)
		if j.entry != nil {
			j.entry.pack()
		}
		return
	}
	p := c.checks
	if p == nil {
		p = startChecks(workers)
		c.checks = p
	}
	p.pending = append(p.pending, numberedJob{p.n, j})
	p.n++
	if len(p.pending) == checkGroup {
		p.jobs <- p.pending
		p.pending = make([]numberedJob, 0, checkGroup)
	}
}

// startChecks starts workers goroutines, each with a Validator of its own.
func startChecks(workers int) *checkPool {
	p := &checkPool{jobs: make(chan []numberedJob, checkQueue), pending: make([]numberedJob, 0, checkGroup), found: make([][]numberedDiags, workers)}
	for w := range workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			v, err := schema.Acquire()
			if err == nil {
				defer schema.Release(v)
			}
			for group := range p.jobs {
				for _, j := range group {
					var ds []diag.Diagnostic
					if v == nil {
						// Cannot happen: the same schemas compiled for c.v.
						ds = []diag.Diagnostic{rules.TypeMismatch.At(j.data.Pos(), "internal: schema unavailable: "+err.Error(), "")}
					} else {
						ds = v.Check(j.def, j.data, j.subject, j.naming)
					}
					if len(ds) > 0 {
						p.found[w] = append(p.found[w], numberedDiags{j.n, ds})
					}
					if j.entry != nil {
						j.entry.pack()
					}
				}
			}
		}()
	}
	return p
}

// waitChecks waits for every check submitted and adds their diagnostics,
// in the order the checks were submitted.
func (c *compiler) waitChecks() {
	p := c.checks
	if p == nil {
		return
	}
	c.checks = nil
	if len(p.pending) > 0 {
		p.jobs <- p.pending
	}
	close(p.jobs)
	p.wg.Wait()
	var all []numberedDiags
	for _, f := range p.found {
		all = append(all, f...)
	}
	slices.SortFunc(all, func(a, b numberedDiags) int { return a.n - b.n })
	for _, f := range all {
		c.ds = append(c.ds, f.ds...)
	}
}

// stopChecks ends the goroutines of the checks, if a compilation stopped
// before waiting for them.
func (c *compiler) stopChecks() {
	if p := c.checks; p != nil {
		c.checks = nil
		close(p.jobs)
		p.wg.Wait()
	}
}

// checkEntry makes the checks of one entry that the schema does not express.
func (c *compiler) checkEntry(e *Entry) {
	subject := fmt.Sprintf("server %q", e.Name)
	name := func(f string) string { return e.naming([]string{f}) }
	if strings.TrimSpace(e.Name) == "" {
		sugg := `give it a name: "mcpServers": {"github": {…}}`
		if e.Source == "host" {
			sugg = `give it a name: "Servers": {"github": {…}}, or Mcp__Servers__github__Command in the environment (the name goes between the double underscores)`
		}
		c.ds = append(c.ds, rules.ServerNameEmpty.At(e.NamePos, "a server has an empty name", sugg))
	}
	cmd := e.Node().Get(FieldCommand)
	switch {
	case cmd == nil:
		sugg := fmt.Sprintf("add %q: \"npx\" (or the program that runs the server)", name(FieldCommand))
		for _, m := range e.Node().Members {
			if looksLike(m.Key, FieldCommand) && !strings.EqualFold(m.Key, FieldCommand) {
				sugg = fmt.Sprintf("rename %q to %q", m.Key, name(FieldCommand))
			}
		}
		c.ds = append(c.ds, rules.MissingCommand.At(e.NamePos,
			fmt.Sprintf("%s has no %s; the host cannot start it (disabled entries are checked too)", subject, name(FieldCommand)), sugg))
	case cmd.Kind == node.String && strings.TrimSpace(cmd.Text) == "":
		c.ds = append(c.ds, rules.MissingCommand.At(cmd.Pos(),
			fmt.Sprintf("%s has an empty %s; the host cannot start it", subject, name(FieldCommand)),
			"write the program that runs the server, such as npx"))
	}
	if tp := e.Node().Get(FieldToolPrefix); tp != nil && tp.Kind == node.String && strings.HasPrefix(tp.Text, "mcp__") {
		c.ds = append(c.ds, rules.ToolPrefixReserved.At(tp.Pos(),
			fmt.Sprintf("%s: %s %q starts with mcp__, the namespace the provider gives every MCP tool (mcp__volcanic__<name>)", subject, name(FieldToolPrefix), tp.Text),
			fmt.Sprintf("use %q", strings.TrimPrefix(tp.Text, "mcp__"))))
	}
	for _, f := range []string{FieldStartup, FieldCall, FieldIdle} {
		if v := e.Node().Get(f); v != nil && v.Kind == node.Number && !strings.ContainsAny(v.Text, ".eE") {
			if _, ok := parseDotnetInt(v.Text); !ok {
				c.ds = append(c.ds, rules.TypeMismatch.At(v.Pos(),
					fmt.Sprintf("%s: %s is %s, which does not fit a 32-bit integer", subject, name(f), v.Text),
					"write a number of seconds up to 2147483647"))
			}
		}
	}
	c.checkSecrets(e)
	c.checkNUL(e, subject)
	if e.Source == "preset" {
		return // built from checked settings
	}
	t := &templateChecker{env: c.res.Env, subject: subject}
	// A value without "${" has no template: its field's name is not made.
	if templated(cmd) {
		t.check(cmd, name(FieldCommand), false)
	}
	if args := e.Node().Get(FieldArgs); args != nil && args.Kind == node.Array {
		for i, a := range args.Elems {
			if templated(a) {
				t.check(a, e.naming([]string{FieldArgs, strconv.Itoa(i)}), false)
			}
		}
	}
	if cwd := e.Node().Get(FieldCwd); templated(cwd) {
		t.check(cwd, name(FieldCwd), false)
	}
	if ps := e.Node().Get(FieldPromptSection); templated(ps) {
		t.checkEnvRefs(ps, name(FieldPromptSection))
	}
	if env := e.Node().Member(FieldEnv); env != nil && env.Value.Kind == node.Object {
		for _, m := range env.Value.Members {
			if !validEnvName(m.Key) && !strings.ContainsRune(m.Key, 0) { // NUL: nul-character
				c.ds = append(c.ds, rules.EnvNameInvalid.At(m.KeyPos(),
					fmt.Sprintf("%s: %q is not a valid environment variable name: use letters, digits and _, not starting with a digit", subject, m.Key),
					fmt.Sprintf("did you mean %q?", suggestEnvName(m.Key))))
			}
			if templated(m.Value) {
				t.check(m.Value, e.naming([]string{FieldEnv, m.Key}), true)
			}
		}
	}
	c.ds = append(c.ds, t.ds...)
}

// templated reports whether n is a string that may hold a template.
func templated(n *node.Node) bool {
	return n != nil && n.Kind == node.String && strings.Contains(n.Text, "${")
}

// checkNUL reports a NUL character in the command, an argument, the cwd or
// an env name or value of e (disabled entries too). It comes from a \u0000
// in JSON or a NUL byte in an env file; the value is never quoted, since it
// may be a secret.
func (c *compiler) checkNUL(e *Entry, subject string) {
	name := e.naming
	if name == nil {
		name = settingsNaming // the preset: args[5] as in its plan entry
	}
	report := func(pos diag.Pos, what string) {
		c.ds = append(c.ds, rules.NULCharacter.At(pos,
			fmt.Sprintf("%s: %s contains a NUL character; no process can be started with it, so the host cannot start the server", subject, what),
			`remove it (in JSON it is written \u0000)`))
	}
	value := func(n *node.Node, path ...string) {
		if n == nil || n.Kind != node.String {
			return
		}
		if i := strings.IndexByte(n.Text, 0); i >= 0 {
			report(textPos(n, utf8.RuneCountInString(n.Text[:i])), name(path))
		}
	}
	value(e.Node().Get(FieldCommand), FieldCommand)
	if args := e.Node().Get(FieldArgs); args != nil && args.Kind == node.Array {
		for i, a := range args.Elems {
			value(a, FieldArgs, strconv.Itoa(i))
		}
	}
	value(e.Node().Get(FieldCwd), FieldCwd)
	if env := e.Node().Member(FieldEnv); env != nil && env.Value.Kind == node.Object {
		for _, m := range env.Value.Members {
			if strings.ContainsRune(m.Key, 0) {
				report(m.KeyPos(), "the name of a variable in "+name([]string{FieldEnv}))
				continue
			}
			value(m.Value, FieldEnv, m.Key)
		}
	}
}
