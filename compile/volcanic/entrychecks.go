package volcanic

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// entryCheck is one check of a server entry that the schema does not
// express: the rule it reports and its run, in one value, declared in the
// file named after the rule (missing_command.go for missing-command).
// What it finds is reported as its rule, with the rule's severity.
type entryCheck struct {
	rules.Rule
	// preset: the check runs on the Playwright preset's entry too. The
	// others look at what the preset is built from, checked already
	// (preset.go): its ${…} and its env.
	preset bool
	run    func(x *entryRun)
}

// entryChecks are the checks of every server entry, in the order they
// run.
var entryChecks = []entryCheck{
	serverNameEmpty,
	missingCommand,
	toolPrefixReserved,
	typeMismatch,
	secretLiteral,
	nulCharacter,
	envNameInvalid,
	unknownVariable,
	envRefOutsideEnv,
	envRefUnset,
	workspaceInPrompt,
}

// checkEntry runs the entry checks on e.
func (c *compiler) checkEntry(e *compile.Entry) {
	// One entryRun serves every entry of the compilation, its list of
	// templated values reused.
	x := &c.entryRun
	*x = entryRun{c: c, e: e, subject: fmt.Sprintf("server %q", e.Name), templated: x.templated[:0]}
	for i := range entryChecks {
		ch := &entryChecks[i]
		if e.Source == "preset" && !ch.preset {
			continue
		}
		x.rule = ch.Rule
		ch.run(x)
	}
}

// entryRun is what an entry check sees: the compilation, the entry, and
// the rule it reports.
type entryRun struct {
	c       *compiler
	e       *compile.Entry
	subject string // server "name", how messages name the entry
	rule    rules.Rule
	// templated are the values with a ${…} (eachTemplate), once parsed.
	parsed    bool
	templated []templatedValue
}

// report adds a finding of the running check's rule.
func (x *entryRun) report(pos diag.Pos, msg, suggestion string) {
	x.c.ds = append(x.c.ds, x.rule.At(pos, msg, suggestion))
}

// name is the user's name of the field at path in e.
func (x *entryRun) name(path ...string) string {
	if x.e.Naming == nil {
		return settingsNaming(path)
	}
	return x.e.Naming(path)
}

// eachTemplate calls f on every ${…} of a value of e the host expands
// (command, args, cwd, and env values, where env is true), with the value
// and the path of its field. The values are found and parsed once per
// entry, for every check that looks at them; a value without "${" has no
// template, and its field's path is not made.
func (x *entryRun) eachTemplate(f func(n *node.Node, t plan.Template, path []string, env bool)) {
	if !x.parsed {
		x.parsed = true
		x.findTemplates()
	}
	for _, v := range x.templated {
		for _, t := range v.templates {
			f(v.n, t, v.path, v.env)
		}
	}
}

// templatedValue is a value of an entry with its templates.
type templatedValue struct {
	n         *node.Node
	path      []string
	env       bool
	templates []plan.Template
}

func (x *entryRun) findTemplates() {
	add := func(n *node.Node, env bool, path ...string) {
		if ts := plan.Templates(n.Text); len(ts) > 0 {
			x.templated = append(x.templated, templatedValue{n, path, env, ts})
		}
	}
	root := x.e.Node()
	if n := root.Get(FieldCommand); templated(n) {
		add(n, false, FieldCommand)
	}
	if args := root.Get(FieldArgs); args != nil && args.Kind == node.Array {
		for i, a := range args.Elems {
			if templated(a) {
				add(a, false, FieldArgs, strconv.Itoa(i))
			}
		}
	}
	if n := root.Get(FieldCwd); templated(n) {
		add(n, false, FieldCwd)
	}
	if env := root.Member(FieldEnv); env != nil && env.Value.Kind == node.Object {
		for _, m := range env.Value.Members {
			if templated(m.Value) {
				add(m.Value, true, FieldEnv, m.Key)
			}
		}
	}
}

// envTemplate is the variable of an ${env:NAME} in an env value, the one
// place the host expands it, when NAME is a variable's name; ok is false
// for every other ${…}.
func (x *entryRun) envTemplate(t plan.Template, env bool) (v *compile.EnvVar, set, ok bool) {
	if t.Kind != plan.TemplateEnv || !env || !validEnvName(t.Name) || x.c.res.Env == nil {
		return nil, false, false
	}
	v, set = x.c.res.Env.Lookup(t.Name)
	return v, set, true
}

// templated reports whether n is a string that may hold a template.
func templated(n *node.Node) bool {
	return n != nil && n.Kind == node.String && strings.Contains(n.Text, "${")
}
