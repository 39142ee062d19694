package volcanic

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Mistakes that the host accepts without a word and that lose a setting or a
// server: a Claude Desktop block pasted into appsettings, single-underscore
// environment keys, servers written as an array, names that differ only in
// case across sources, fields of other MCP clients (and ${workspace} in a
// prompt section: workspace_in_prompt.go).

// checkHostFile looks at the top of one appsettings file, before it is bound.
func (c *compiler) checkHostFile(root *node.Node) {
	if root == nil || root.Kind != node.Object {
		return
	}
	pasted := func(m *node.Member, where string) {
		c.ds = append(c.ds, rules.McpServersInAppSettings.At(m.KeyPos(),
			fmt.Sprintf("%s is a Claude Desktop block; the host reads its servers from Mcp:Servers and never reads this, so none of its %s starts", where, plural(m.Value)),
			"move the entries to Mcp:Servers (PascalCase fields: Command, Args, Env) or to the agent's settings.json mcpServers"))
	}
	for i := range root.Members {
		m := &root.Members[i]
		switch {
		case strings.EqualFold(m.Key, "mcpServers"):
			pasted(m, "mcpServers")
		case strings.EqualFold(m.Key, "Mcp") && m.Value.Kind == node.Object:
			for j := range m.Value.Members {
				sub := &m.Value.Members[j]
				switch {
				case strings.EqualFold(sub.Key, "mcpServers"):
					pasted(sub, "Mcp:mcpServers")
				case strings.EqualFold(sub.Key, "Servers") && sub.Value.Kind == node.Array:
					c.ds = append(c.ds, rules.ServersArray.At(sub.Value.Pos(),
						fmt.Sprintf("Mcp:Servers is a list: .NET binds it to servers named 0, 1, …, so tool prefixes, names in logs and precedence all use the index (%s)", plural(sub.Value)),
						`write an object keyed by name: "Servers": {"github": {"Command": "npx", …}}`))
				}
			}
		}
	}
}

func plural(n *node.Node) string {
	count := len(n.Members) + len(n.Elems)
	if count == 1 {
		return "1 server"
	}
	return fmt.Sprintf("%d servers", count)
}

// singleUnderscore matches a host variable meant for the Mcp section with
// single underscores, which .NET does not read as a section separator.
var singleUnderscore = regexp.MustCompile(`(?i)^mcp_(servers|playwright)_[^_]`)

// checkEnvKeys reports host variables written with single underscores.
func (c *compiler) checkEnvKeys() {
	for _, layer := range c.res.Env.Layers() {
		for _, v := range layer {
			if !singleUnderscore.MatchString(v.Name) || strings.Contains(v.Name, "__") {
				continue
			}
			c.ds = append(c.ds, rules.EnvKeySingleUnderscore.At(v.Pos(),
				fmt.Sprintf("%s has single underscores: .NET reads only __ as the section separator, so the host ignores it", v.Name),
				fmt.Sprintf("write %s", strings.ReplaceAll(v.Name, "_", "__"))))
		}
	}
}

// checkNameCase reports server names of different sources that differ only
// in case: the host keeps both, as two servers.
func (c *compiler) checkNameCase(entries []*compile.Entry) {
	first := map[string]*compile.Entry{}
	for _, e := range entries {
		key := strings.ToLower(e.Name)
		f, ok := first[key]
		if !ok {
			first[key] = e
			continue
		}
		if f.Name != e.Name {
			c.ds = append(c.ds, rules.NameCaseCollision.At(e.NamePos,
				fmt.Sprintf("server %q differs only in case from %q (%s): the host runs both, as two servers", e.Name, f.Name, originOf(f.Origin)),
				fmt.Sprintf("give it a name of its own, or remove it: named %q it would not override that server, since the first definition wins and this one would be dropped as shadowed", f.Name)))
		}
	}
}

func originOf(o plan.Origin) string { return o.String() }

// foreignFields are fields of other MCP clients (Claude Desktop, Cline,
// Cursor, VS Code) that operators carry over; each with what to write in a
// volcanic entry instead.
var foreignFields = map[string]string{
	"disabled":    `write "enabled": false (volcanic's field is enabled)`,
	"timeout":     `write "callTimeoutSeconds" (seconds; Cline's timeout is in seconds too, Claude Code's in milliseconds)`,
	"autoapprove": "volcanic has no approval list: every registered tool can be called; remove it",
	"alwaysallow": "volcanic has no approval list: every registered tool can be called; remove it",
	"type":        `a stdio entry needs no type; a remote server goes into the chat's servers.json (mcpc remote add NAME URL)`,
	"transport":   `a stdio entry needs no transport; a remote server goes into the chat's servers.json (mcpc remote add NAME URL)`,
	"url":         "a remote server goes into the chat's servers.json: mcpc remote add NAME URL",
	"headers":     "remote headers are sealed in the chat's servers.json: mcpc remote add NAME URL --header \"Name: value\"",
	"envfile":     "the host reads no env file per server: put the values in env, or ${env:NAME} from the host environment",
}

// misspelt are unknown fields that mean a known one too far away for the
// did-you-mean of unknown-field.
var misspelt = map[string]string{
	"environment": "env", "enviroment": "env", "environmentvariables": "env", "envvars": "env", "env_vars": "env", "variables": "env",
	"arguments": "args", "argv": "args", "workingdirectory": "cwd", "workdir": "cwd", "working_dir": "cwd", "dir": "cwd",
	"prefix": "toolPrefix", "tool_prefix": "toolPrefix",
}

var unknownFieldMsg = regexp.MustCompile(`unknown field "([^"]+)"`)

// explainForeign turns the unknown-field findings on fields of other clients
// into foreign-field, with what to write instead, and gives misspellings the
// field they mean.
func explainForeign(ds []diag.Diagnostic) {
	for i := range ds {
		d := &ds[i]
		if d.Rule != rules.UnknownField.ID {
			continue
		}
		m := unknownFieldMsg.FindStringSubmatch(d.Message)
		if m == nil {
			continue
		}
		key := strings.ToLower(m[1])
		if advice, ok := foreignFields[key]; ok {
			prefix := d.Message[:strings.Index(d.Message, m[0])]
			*d = rules.ForeignField.Claim(*d)
			d.Message = fmt.Sprintf("%s%q is a field of another MCP client; the host ignores it", prefix, m[1])
			d.Suggestion = advice
			continue
		}
		if field, ok := misspelt[key]; ok && d.Suggestion == "" {
			if strings.ContainsAny(m[1][:1], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
				field = strings.ToUpper(field[:1]) + field[1:]
			}
			d.Suggestion = fmt.Sprintf("did you mean %q?", field)
		}
	}
}
