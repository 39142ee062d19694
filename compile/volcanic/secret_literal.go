package volcanic

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// secretLiteral: a value a plan would carry that holds the value of a host
// secret (SPEC §2.4: a plan never holds a secret, and a secret written into
// a command line shows in ps; exposure says where each field shows), or a credential written into the file. A
// value bound from a secret host variable into env is fine: the plan
// refers to the variable.
var secretLiteral = entryCheck{Rule: rules.SecretLiteral, preset: true, run: func(x *entryRun) {
	c, e := x.c, x.e
	// The field's name is made only for a message: most values hold no
	// secret.
	check := func(n *node.Node, envValue bool, path ...string) {
		if n == nil || n.Kind != node.String {
			return
		}
		if name, ok := c.secretRef(e, n); ok {
			switch {
			case !envValue:
				x.report(n.Pos(),
					fmt.Sprintf("%s: %s is set by %s, a host secret; a plan cannot carry its value, and %s", x.subject, e.Naming(path), name, exposure(path)),
					"set it through env instead: an env value may be ${env:NAME}, and the server reads the variable")
			case strings.Contains(n.Text, "${"):
				x.report(n.Pos(),
					fmt.Sprintf("%s: %s is set by %s, a host secret whose value holds ${…}, which the host would expand; a plan can refer to the variable only as it is", x.subject, e.Naming(path), name),
					"keep ${…} out of the secret, or write the template in the configuration file")
			}
			return
		}
		i, ok := c.hostSecrets.Contains(n.Text)
		if !ok {
			checkCredential(x, n, envValue, path)
			return
		}
		name := c.hostSecretNames[i]
		sugg := fmt.Sprintf("pass it in env (\"%s\": \"${env:%s}\") and let the server read the variable", name, name)
		if envValue {
			sugg = fmt.Sprintf("write \"${env:%s}\" instead of the value", name)
		}
		x.report(n.Pos(),
			fmt.Sprintf("%s: %s holds the value of the host secret %s; a plan cannot carry it, and %s", x.subject, e.Naming(path), name, exposure(path)), sugg)
	}
	check(e.Node().Get(FieldCommand), false, FieldCommand)
	if args := e.Node().Get(FieldArgs); args != nil && args.Kind == node.Array {
		for i, a := range args.Elems {
			if a.Kind == node.String {
				check(a, false, FieldArgs, strconv.Itoa(i))
			}
		}
	}
	check(e.Node().Get(FieldCwd), false, FieldCwd)
	check(e.Node().Get(FieldToolPrefix), false, FieldToolPrefix)
	check(e.Node().Get(FieldPromptSection), false, FieldPromptSection)
	if env := e.Node().Get(FieldEnv); env != nil && env.Kind == node.Object {
		for _, m := range env.Members {
			check(m.Value, true, FieldEnv, m.Key)
		}
	}
}}

// checkCredential reports a value that looks like a credential written
// into a configuration file (SPEC §2.4: a secret written literally into a
// config value is a diagnostic, never a silent rewrite). The credential
// becomes a known secret, so that no output shows it.
func checkCredential(x *entryRun, n *node.Node, envValue bool, path []string) {
	c, e := x.c, x.e
	if len(n.Text) < minCredentialLen {
		return // shorter than any credential shape: most values stop here
	}
	key := ""
	if envValue {
		key = path[len(path)-1]
	}
	what, found := credentialIn(n.Text, key)
	if found == "" {
		return
	}
	c.literalSecrets = append(c.literalSecrets, found)
	sugg := "pass it in env from a host variable: \"NAME\": \"${env:NAME}\", and let the server read NAME"
	if envValue && validEnvName(key) {
		sugg = fmt.Sprintf("write \"${env:%s}\" and give the host the variable %s (an env file outside the repository, or the service's secret store)", key, key)
	}
	x.report(n.Pos(),
		fmt.Sprintf("server %q: %s holds what looks like %s, written into the file: it ends up in the repository and in the plan, and %s", e.Name, e.Naming(path), what, exposure(path)), sugg)
}

// exposure says where a value of the field at path is visible once the
// server runs: only a command line shows in ps to every user of the
// machine; an environment is readable by the same user and root.
func exposure(path []string) string {
	switch path[0] {
	case FieldCommand, FieldArgs:
		return "a command line shows in ps to every user of the machine"
	case FieldEnv:
		return "a server's environment is readable in /proc/PID/environ by the same user and root"
	case FieldCwd:
		return "a working directory shows in /proc/PID/cwd and in mcpc status"
	case FieldToolPrefix:
		return "a tool prefix is part of every tool name the agent and its model see"
	default: // promptSection
		return "a prompt section is sent to the model"
	}
}
