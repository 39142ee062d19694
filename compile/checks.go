package compile

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/node"
	"github.com/mcpc-dev/mcpc/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// runChecks runs the schema checks on up to GOMAXPROCS goroutines and
// collects their diagnostics in job order.
func (c *compiler) runChecks() {
	jobs := c.checks
	// The jobs (and the shallow copy of settings.json made for its check)
	// are not needed past this point: not held to the end of compilation.
	c.checks = nil
	results := make([][]diag.Diagnostic, len(jobs))
	workers := min(runtime.GOMAXPROCS(0), 1+len(jobs)/64)
	if workers <= 1 {
		for i, j := range jobs {
			results[i] = c.v.Check(j.def, j.data, j.subject, j.naming)
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int, len(jobs))
		for i := range jobs {
			next <- i
		}
		close(next)
		for w := 0; w < workers; w++ {
			v, err := c.checker(w)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					j := jobs[i]
					if v == nil {
						// Cannot happen: the same schemas compiled for c.v.
						results[i] = []diag.Diagnostic{rules.TypeMismatch.At(j.data.Pos(), "internal: schema unavailable: "+err.Error(), "")}
						continue
					}
					results[i] = v.Check(j.def, j.data, j.subject, j.naming)
				}
			}()
		}
		wg.Wait()
	}
	for _, r := range results {
		c.ds = append(c.ds, r...)
	}
}

// checker is the Validator of the w-th goroutine of runChecks, acquired
// once per compilation: the checks run a batch at a time, and a Validator
// given back to the pool between batches was often dropped by a collection
// and compiled again (milliseconds each time). Compile releases them.
func (c *compiler) checker(w int) (*schema.Validator, error) {
	for len(c.checkers) <= w {
		c.checkers = append(c.checkers, nil)
	}
	if c.checkers[w] == nil {
		v, err := schema.Acquire()
		if err != nil {
			return nil, err
		}
		c.checkers[w] = v
	}
	return c.checkers[w], nil
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
