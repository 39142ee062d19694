package compile

import (
	"regexp"
	"sort"
)

var envRefRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// learnSecrets (re)builds the redactor from the deny-listed host variables
// and the variables the inputs read so far reference with ${env:NAME}.
func (c *compiler) learnSecrets() {
	res := c.res
	var secrets []string
	for _, name := range res.Env.Names() {
		if res.Deny.Denied(name) {
			secrets = append(secrets, res.Env.Value(name))
		}
	}
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
	// A plan holds configuration, not resolutions: only host secrets are
	// taken out of it (a referenced DEBUG=true must not blank every "true").
	c.planRedactor = NewRedactor(secrets)
	for name := range refs {
		secrets = append(secrets, res.Env.Value(name))
	}
	sort.Strings(secrets)
	res.Redactor = NewRedactor(secrets)
	res.Files.redactor = res.Redactor
}

// quote shows a value in a message: redacted first, then cut to 40
// characters (cutting first could leave a secret's beginning).
func (c *compiler) quote(s string) string {
	return quoteShort(c.res.Redactor.Redact(s))
}
