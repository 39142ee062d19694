package volcanic

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

var envRefRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// learnSecrets (re)builds the redactor from the deny-listed host variables
// and the variables the inputs read so far reference with ${env:NAME}, and
// warns about deny-listed variables whose value is too weak to redact.
func (c *compiler) learnSecrets() {
	res := c.res
	var secrets []string
	c.hostSecretNames = nil
	for _, name := range res.Env.Names() {
		if !res.Deny.Denied(name) {
			continue
		}
		v, _ := res.Env.Lookup(name)
		if v.Value == "" {
			continue
		}
		secrets = append(secrets, v.Value)
		c.hostSecretNames = append(c.hostSecretNames, name)
		if redact.Weak(v.Value) {
			c.ds = append(c.ds, rules.SecretWeak.At(v.ValuePos(),
				fmt.Sprintf("the value of %s is too weak to redact: a word this short or plain is ordinary text, so mcpc leaves it in output as it is", name),
				fmt.Sprintf("give %s a real secret (12 characters or more, not only letters)", name)))
		}
	}
	// What a config value must not hold: the values of host secrets.
	c.hostSecrets = redact.New(secrets)
	refs := map[string]bool{}
	for _, t := range c.texts {
		for _, m := range envRefRE.FindAllSubmatch(t, -1) {
			refs[string(m[1])] = true
		}
	}
	for _, layer := range res.Env.Layers() {
		for _, v := range layer {
			for _, m := range envRefRE.FindAllStringSubmatch(v.Value, -1) {
				refs[m[1]] = true
			}
		}
	}
	for name := range refs {
		secrets = append(secrets, res.Env.Value(name))
	}
	sort.Strings(secrets)
	c.knownSecrets = secrets
	c.cc.SetRedactor(redact.New(secrets))
}

// learnLiteralSecrets adds the credentials found written in the files to
// the known secrets, before any message or excerpt is printed.
func (c *compiler) learnLiteralSecrets() {
	if len(c.literalSecrets) == 0 {
		return
	}
	c.cc.SetRedactor(redact.New(append(append([]string(nil), c.knownSecrets...), c.literalSecrets...)))
}

// quote shows a value in a message: redacted first, then cut to 40
// characters (cutting first could leave a secret's beginning).
func (c *compiler) quote(s string) string {
	return quoteShort(c.res.Redactor.Redact(s))
}

// varAtLine returns the host environment variable on the line of pos (a
// bound value or key), or "" when pos is in a configuration file: the
// variable whose entry starts at column 1 of that line of that file, of the
// last layer read from the file. A layer's variables are in line order, so
// no index is built (a host environment can define thousands of servers).
func (c *compiler) varAtLine(pos diag.Pos) string {
	if c.res.Env == nil {
		return ""
	}
	layers := c.res.Env.Layers()
	for i := len(layers) - 1; i >= 0; i-- {
		vars := layers[i]
		if len(vars) == 0 || vars[0].Pos().File != pos.File {
			continue
		}
		j := sort.Search(len(vars), func(j int) bool { return vars[j].Loc.Line() >= pos.Line })
		if j < len(vars) {
			if at := vars[j].Pos(); at.Line == pos.Line && at.Column == 1 {
				return vars[j].Name
			}
		}
	}
	return ""
}

// secretRef reports whether a host env value is bound from a deny-listed
// host variable: the plan then records ${env:VAR}, and the runtime reads
// the value from its own environment at launch, as the host reads it.
func (c *compiler) secretRef(e *compile.Entry, n *node.Node) (string, bool) {
	if e.Source != "host" || n == nil || n.Kind != node.String || n.Text == "" {
		return "", false
	}
	name := c.varAtLine(n.Pos())
	if name == "" || !c.res.Deny.Denied(name) {
		return "", false
	}
	return name, true
}

// valueNode is the string node of a variable's value, positioned on it.
func valueNode(v *compile.EnvVar) *node.Node {
	n := node.Str(v.Value, v.ValuePos())
	n.TextOffset = v.TextOffset
	return n
}

func quoteShort(s string) string {
	r := []rune(s)
	if len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return `"` + s + `"`
}
