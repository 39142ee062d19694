package importer

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/node"
)

// credentialWords mark an env key whose value is a credential, beside the
// deny-list (which says which host variables servers never inherit, a
// narrower question): STRIPE_SECRET_KEY and AWS_ACCESS_KEY_ID are
// credentials too.
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL"}

// isCredential reports whether an env key names a credential.
func (c *converter) isCredential(key string) bool {
	if c.deny.Denied(key) {
		return true
	}
	up := strings.ToUpper(key)
	for _, w := range credentialWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// secret records a literal credential at v: printers redact it and hide the
// rest of its line in excerpts.
func (c *converter) secret(v *node.Node, value string) {
	if value == "" {
		return
	}
	c.res.Secrets = append(c.res.Secrets, value)
	c.res.SecretLines = append(c.res.SecretLines, v.Pos())
}

// env converts a server's env, in file order.
func (c *converter) env(n *node.Node, e *entry, subject string) {
	if n.Kind != node.Object {
		c.report(n.Pos(), Shape, fmt.Sprintf("%s: env must be an object of variables, not %s", subject, node.Describe(n)), `write "env": {"NAME": "value"}`)
		return
	}
	seen := map[string]string{}
	for _, m := range n.Members {
		// Record every credential first: whatever happens to the entry,
		// its value never shows.
		if m.Value.Kind == node.String && c.isCredential(m.Key) && !hasTemplates(c.split(m.Value.Text)) {
			c.secret(m.Value, m.Value.Text)
		}
		if !c.envKeyOK(m, subject, seen) {
			continue
		}
		if v, keep := c.envValue(m, subject); keep {
			e.env = append(e.env, envVar{key: m.Key, value: v})
		}
	}
}

// envKeyOK checks an env key: a variable name for volcanic, and unique as
// the host compares keys (case-insensitively in an appsettings file).
func (c *converter) envKeyOK(m node.Member, subject string, seen map[string]string) bool {
	switch {
	case c.opts.To == Volcanic && !envNameRE.MatchString(m.Key):
		c.report(m.KeyPos(), EnvName, fmt.Sprintf("%s: env key %q is not a variable name volcanic accepts", subject, m.Key),
			"use letters, digits and _, not starting with a digit")
		return false
	case c.opts.To == Craftbot && (m.Key == "" || strings.ContainsAny(m.Key, "=\x00")):
		c.report(m.KeyPos(), EnvName, fmt.Sprintf("%s: env key %q cannot name an environment variable", subject, m.Key), "remove = and NUL from the name")
		return false
	}
	fold := m.Key
	if c.opts.To == Volcanic && c.opts.Form == FormAppSettings {
		fold = strings.ToUpper(m.Key)
	}
	if prev, ok := seen[fold]; ok {
		c.report(m.KeyPos(), EnvName, fmt.Sprintf("%s: env key %q repeats %q; the host's configuration keys ignore case", subject, m.Key, prev),
			"keep one of them, or use --form settings (settings.json compares keys exactly)")
		return false
	}
	seen[fold] = m.Key
	return true
}

// envValue converts one env value; keep false leaves the variable out.
func (c *converter) envValue(m node.Member, subject string) (*string, bool) {
	v, key := m.Value, m.Key
	where := "env " + key
	switch v.Kind {
	case node.Null:
		if c.opts.To == Volcanic && c.opts.Form == FormSettings {
			return nil, true // settings.json: null removes the variable, as in VS Code
		}
		c.report(m.KeyPos(), FieldMapped, fmt.Sprintf("%s: %s is null (remove the variable), which %s cannot say; it is left out", subject, where, c.targetFile()), "")
		return nil, false
	case node.Number, node.Bool:
		s := v.Text
		if v.Kind == node.Bool {
			s = fmt.Sprint(v.Bool)
		}
		c.report(v.Pos(), FieldMapped, fmt.Sprintf("%s: %s is %s; it became a string", subject, where, node.Describe(v)), "")
		return &s, true
	case node.String:
	default:
		c.report(v.Pos(), Shape, fmt.Sprintf("%s: %s must be a string, not %s", subject, where, node.Describe(v)), "")
		return nil, false
	}
	text, ok := c.stringValue(v, subject, where)
	if !ok {
		return nil, false
	}
	pieces := c.split(text)
	if !hasTemplates(pieces) {
		if text != "" && c.isCredential(key) {
			return c.literalSecret(m, subject), true
		}
		return &text, true
	}
	if c.opts.To == Craftbot {
		return c.craftbotEnvTemplates(m, pieces, subject)
	}
	return c.volcanicEnvTemplates(m, pieces, subject)
}

func (c *converter) targetFile() string {
	switch {
	case c.opts.To == Craftbot:
		return "mcp_config.json"
	case c.opts.Form == FormAppSettings:
		return "an appsettings file (null binds to an empty string there)"
	}
	return "settings.json"
}

// literalSecret handles a credential written into the source.
func (c *converter) literalSecret(m node.Member, subject string) *string {
	key := m.Key
	text := m.Value.Text
	if c.opts.To == Craftbot {
		c.report(m.Value.Pos(), Secret, fmt.Sprintf("%s: env %s holds a literal credential; it is copied into mcp_config.json, where CraftBot reads credentials", subject, key),
			"keep mcp_config.json on a machine you control and out of version control")
		return &text
	}
	host := key
	if prev, ok := c.secretVars[key]; ok && prev != text {
		host = envVarFor(c.current) + "_" + key
	}
	c.secretVars[host] = text
	ref := "${env:" + host + "}"
	c.report(m.Value.Pos(), Secret, fmt.Sprintf("%s: env %s holds a literal credential; it is not copied: the output reads it from the host variable %s (%s), which reaches only this server", subject, key, host, ref),
		fmt.Sprintf("set %s in the host environment (an env file kept out of version control) to the value written here", host))
	return &ref
}

// volcanicEnvTemplates rewrites an env value's templates to ${env:NAME}
// and ${workspace}.
func (c *converter) volcanicEnvTemplates(m node.Member, pieces []piece, subject string) (*string, bool) {
	v, key := m.Value, m.Key
	where := "env " + key
	whole := len(pieces) == 1
	var b strings.Builder
	ok := true
	for i, p := range pieces {
		if p.kind != tLiteral && repeated(pieces[:i], p) {
			b.WriteString(c.volcanicRepeat(p, key))
			continue
		}
		switch p.kind {
		case tLiteral:
			b.WriteString(p.text)
		case tSeparator:
			b.WriteString("/")
			c.report(v.Pos(), Template, fmt.Sprintf("%s: %s in %s became /", subject, p.text, where), "")
		case tWorkspace:
			b.WriteString("${workspace}")
			c.report(v.Pos(), Template, fmt.Sprintf("%s: ${workspaceFolder} in %s became ${workspace}, the chat's workspace", subject, where), "")
		case tEnv:
			if !envNameRE.MatchString(p.name) {
				c.report(v.Pos(), TemplateUnsupported, fmt.Sprintf("%s: %s reads the variable %q, whose name volcanic cannot write in ${env:NAME}", subject, where, clip(p.name)),
					"use a variable named with letters, digits and _")
				ok = false
				continue
			}
			ref := "${env:" + p.name + "}"
			b.WriteString(ref)
			switch {
			case p.hasDef:
				c.report(v.Pos(), DefaultLost, fmt.Sprintf("%s: %s in %s became %s without its default: an unset host variable gives the server an empty value", subject, p.shown(), where, ref),
					fmt.Sprintf("set %s in the host environment", p.name))
			case p.text != ref:
				c.report(v.Pos(), Template, fmt.Sprintf("%s: %s in %s became %s, the host variable %s", subject, p.text, where, ref, p.name), "")
			}
		case tInput:
			host := c.inputVar(p.name, key, whole)
			b.WriteString("${env:" + host + "}")
			c.report(v.Pos(), EnvToFill, fmt.Sprintf("%s: %s in %s is %s; volcanic cannot ask for a value: it became ${env:%s}", subject, p.text, where, c.inputWords(p.name), host),
				fmt.Sprintf("set %s in the host environment", host))
		default:
			c.report(v.Pos(), TemplateUnsupported, fmt.Sprintf("%s: %s holds %s (%s), which volcanic cannot express", subject, where, p.shown(), p.why),
				"write the value itself")
			ok = false
		}
	}
	s := b.String()
	return &s, ok
}

// craftbotEnvTemplates: CraftBot passes env values literally. A value that
// read a variable becomes empty, to be filled in (as CraftBot's catalog
// ships keys); ${VAR:-default} alone becomes its default.
func (c *converter) craftbotEnvTemplates(m node.Member, pieces []piece, subject string) (*string, bool) {
	v, key := m.Value, m.Key
	where := "env " + key
	if len(pieces) == 1 && pieces[0].kind == tEnv && pieces[0].hasDef {
		p := pieces[0]
		if c.isCredential(key) {
			c.secret(v, p.def)
		}
		c.report(v.Pos(), DefaultLost, fmt.Sprintf("%s: %s in %s became its default: CraftBot does not read %s from its environment", subject, p.shown(), where, p.name),
			fmt.Sprintf("to change it: /mcp env %s %s VALUE", sanitizeName(c.current, c.opts.To), key))
		d := p.def
		return &d, true
	}
	var what []string
	for _, p := range pieces {
		switch p.kind {
		case tLiteral:
		case tSeparator:
		case tEnv:
			what = append(what, p.shown()+" (the variable "+p.name+")")
		case tInput:
			what = append(what, p.text+" ("+c.inputWords(p.name)+")")
		case tWorkspace:
			what = append(what, "${workspaceFolder}")
		default:
			what = append(what, p.shown())
		}
	}
	empty := ""
	c.report(v.Pos(), EnvToFill, fmt.Sprintf("%s: %s reads %s; CraftBot passes env values literally, so it is left empty to fill in", subject, where, strings.Join(what, ", ")),
		fmt.Sprintf("/mcp env %s %s VALUE", sanitizeName(c.current, c.opts.To), key))
	return &empty, true
}

// inputWords describes a VS Code input for a message.
func (c *converter) inputWords(id string) string {
	in, ok := c.inputs[id]
	switch {
	case !ok:
		return "an input the file does not define"
	case in.description != "" && in.password:
		return fmt.Sprintf("a password VS Code asks for (%q)", clip48(in.description))
	case in.description != "":
		return fmt.Sprintf("a value VS Code asks for (%q)", clip48(in.description))
	}
	return "a value VS Code asks for"
}

func clip48(s string) string {
	r := []rune(s)
	if len(r) > 48 {
		return string(r[:48]) + "…"
	}
	return s
}

// headerNames records a headers object's values as secrets and returns
// its names in file order.
func (c *converter) headerNames(n *node.Node, subject string) []string {
	if n.Kind != node.Object {
		c.report(n.Pos(), Shape, fmt.Sprintf("%s: headers must be an object of names and values, not %s", subject, node.Describe(n)), "")
		return nil
	}
	var names []string
	for _, m := range n.Members {
		names = append(names, m.Key)
		if m.Value.Kind == node.String {
			for _, p := range c.split(m.Value.Text) {
				if p.kind == tLiteral {
					c.secret(m.Value, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p.text), "Bearer ")))
				}
			}
			if !hasTemplates(c.split(m.Value.Text)) {
				c.secret(m.Value, m.Value.Text)
			}
		}
	}
	return names
}

// inputVar is the host variable that stands for a VS Code input: one per
// input in the whole file, named after the env key of its first use as a
// whole value ("GITHUB_TOKEN": "${input:token}"), else after the input id.
func (c *converter) inputVar(id, key string, whole bool) string {
	if v, ok := c.inputVars[id]; ok {
		return v
	}
	v := envVarFor(id)
	if whole {
		v = key
	}
	c.inputVars[id] = v
	return v
}

// volcanicRepeat is the output of a template already reported in the same
// value.
func (c *converter) volcanicRepeat(p piece, key string) string {
	switch p.kind {
	case tSeparator:
		return "/"
	case tWorkspace:
		return "${workspace}"
	case tEnv:
		return "${env:" + p.name + "}"
	case tInput:
		return "${env:" + c.inputVar(p.name, key, false) + "}"
	}
	return ""
}
