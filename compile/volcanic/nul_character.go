package volcanic

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// nulCharacter: a NUL character in the command, an argument, the cwd or an
// env name or value of an entry (disabled entries too), or in a host
// variable an env value copies with ${env:NAME}; no process can be started
// with it. It comes from a \u0000 in JSON or a NUL byte in an env file; the
// value is never quoted, since it may be a secret.
var nulCharacter = entryCheck{Rule: rules.NULCharacter, preset: true, run: func(x *entryRun) {
	report := func(pos diag.Pos, what string) {
		x.report(pos,
			fmt.Sprintf("%s: %s contains a NUL character; no process can be started with it, so the host cannot start the server", x.subject, what),
			`remove it (in JSON it is written \u0000)`)
	}
	value := func(n *node.Node, path ...string) {
		if n == nil || n.Kind != node.String {
			return
		}
		if i := strings.IndexByte(n.Text, 0); i >= 0 {
			report(textPos(n, utf8.RuneCountInString(n.Text[:i])), x.name(path...))
		}
	}
	root := x.e.Node()
	value(root.Get(FieldCommand), FieldCommand)
	if args := root.Get(FieldArgs); args != nil && args.Kind == node.Array {
		for i, a := range args.Elems {
			value(a, FieldArgs, strconv.Itoa(i))
		}
	}
	value(root.Get(FieldCwd), FieldCwd)
	if env := root.Member(FieldEnv); env != nil && env.Value.Kind == node.Object {
		for _, m := range env.Value.Members {
			if strings.ContainsRune(m.Key, 0) {
				report(m.KeyPos(), "the name of a variable in "+x.name(FieldEnv))
				continue
			}
			value(m.Value, FieldEnv, m.Key)
		}
	}
	if x.e.Source == "preset" {
		return // its env is built from checked settings
	}
	x.eachTemplate(func(n *node.Node, t plan.Template, path []string, env bool) {
		v, set, ok := x.envTemplate(t, env)
		if !ok || !set || v.Value == "" || strings.IndexByte(v.Value, 0) < 0 {
			return
		}
		field := x.name(path...)
		x.report(textPos(n, t.Start),
			fmt.Sprintf("%s: %s contains a NUL character (%s), which %s would get; no process can be started with it, so the host cannot start the server", x.subject, t.Name, v.ValuePos(), field),
			"remove it from "+t.Name)
	})
}}
