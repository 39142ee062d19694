package importer

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// entry is one converted server, in terms both targets share.
type entry struct {
	orig    string // the source's name
	name    string // the target's name (assignNames)
	namePos diag.Pos
	// transport is stdio, sse or websocket (craftbot's names).
	transport   string
	command     string
	args        []string
	cwd         *string
	env         []envVar
	url         string
	enabled     *bool
	callTimeout int // seconds; 0: not set
}

// envVar is one env entry; a nil value is null (remove the variable).
type envVar struct {
	key   string
	value *string
}

// knownFields are the server fields of the four clients (and of the
// Cline-style fields disabled, autoApprove, alwaysAllow and timeout that
// users copy between them) that the converter reads.
var knownFields = map[string]bool{
	"type": true, "command": true, "args": true, "env": true, "cwd": true, "envFile": true,
	"url": true, "headers": true, "disabled": true, "autoApprove": true, "alwaysAllow": true, "timeout": true,
}

// The source transports.
const (
	srcStdio = "stdio"
	srcHTTP  = "http"
	srcSSE   = "sse"
	srcWS    = "websocket"
	srcAuto  = "" // a url without a type: the client tries Streamable HTTP, then SSE
)

// convert turns one source server into an entry, or nil when it has no
// place in the output (an error, or a remote server for volcanic).
func (c *converter) convert(s *source) *entry {
	errsBefore, _, _ := diag.Count(c.res.Diagnostics)
	e := &entry{orig: s.name, namePos: s.namePos}
	subject := fmt.Sprintf("server %q", s.name)
	for _, m := range s.n.Members {
		if !knownFields[m.Key] {
			c.report(m.KeyPos(), FieldDropped, fmt.Sprintf("%s: field %q has no equivalent in %s; it is not imported", subject, m.Key, c.opts.To), "")
		}
	}
	transport, ok := c.sourceTransport(s, subject)
	if !ok {
		return nil
	}
	c.commonFields(s, e, subject)
	var keep bool
	if transport == srcStdio {
		keep = c.stdio(s, e, subject)
	} else {
		keep = c.remote(s, e, subject, transport)
	}
	if errs, _, _ := diag.Count(c.res.Diagnostics); !keep || errs > errsBefore {
		return nil
	}
	return e
}

// sourceTransport reads type (and url) into one of the src* transports.
func (c *converter) sourceTransport(s *source, subject string) (string, bool) {
	t := s.n.Get("type")
	if t == nil {
		if s.n.Get("url") != nil && s.n.Get("command") == nil {
			return srcAuto, true
		}
		return srcStdio, true
	}
	if t.Kind != node.String {
		c.report(t.Pos(), Shape, fmt.Sprintf("%s: type must be a string, not %s", subject, node.Describe(t)), `write "type": "stdio", "http" or "sse"`)
		return "", false
	}
	switch strings.ToLower(t.Text) {
	case "stdio":
		return srcStdio, true
	case "http", "streamable-http", "streamablehttp":
		return srcHTTP, true
	case "sse":
		return srcSSE, true
	case "ws", "websocket":
		return srcWS, true
	}
	c.report(t.Pos(), Shape, fmt.Sprintf("%s: type %q is not a transport %s knows", subject, clip(t.Text), clientName(c.opts.From)),
		`write "type": "stdio", "http" or "sse"`)
	return "", false
}

// commonFields maps disabled, timeout and the approval lists.
func (c *converter) commonFields(s *source, e *entry, subject string) {
	if m := s.n.Member("disabled"); m != nil {
		if m.Value.Kind != node.Bool {
			c.report(m.Value.Pos(), Shape, fmt.Sprintf("%s: disabled must be true or false, not %s", subject, node.Describe(m.Value)), "")
		} else if m.Value.Bool {
			f := false
			e.enabled = &f
			c.report(m.KeyPos(), FieldMapped, fmt.Sprintf(`%s: "disabled": true became "%s": false`, subject, c.field("enabled")), "")
		}
	}
	for _, key := range []string{"autoApprove", "alwaysAllow"} {
		if m := s.n.Member(key); m != nil {
			c.report(m.KeyPos(), FieldDropped, fmt.Sprintf("%s: %s is not imported: %s has no list of tools that run without asking", subject, key, c.opts.To),
				"decide in the agent host which of the server's tools need approval")
		}
	}
	if m := s.n.Member("timeout"); m != nil {
		c.timeout(m, e, subject)
	}
	if m := s.n.Member("envFile"); m != nil {
		c.report(m.KeyPos(), FieldDropped, fmt.Sprintf("%s: envFile is not imported: %s does not read a server's variables from a file", subject, c.opts.To),
			c.envFileAdvice())
	}
}

func (c *converter) envFileAdvice() string {
	if c.opts.To == Volcanic {
		return `put the file's variables into the host environment (--env-file when checking) and add each one the server needs to env as "NAME": "${env:NAME}"`
	}
	return "copy each variable the server needs into its env"
}

// maxTimeoutSeconds is the largest callTimeoutSeconds the host binds (a
// 32-bit integer).
const maxTimeoutSeconds = math.MaxInt32

// timeout maps timeout (seconds, as Cline writes it; a value over an hour
// is read as milliseconds) to callTimeoutSeconds.
func (c *converter) timeout(m *node.Member, e *entry, subject string) {
	v := m.Value
	if v.Kind != node.Number {
		c.report(v.Pos(), Shape, fmt.Sprintf("%s: timeout must be a number of seconds, not %s", subject, node.Describe(v)), "")
		return
	}
	if c.opts.To == Craftbot {
		c.report(m.KeyPos(), FieldDropped, fmt.Sprintf("%s: timeout is not imported: CraftBot has no per-server timeout", subject), "")
		return
	}
	f, err := strconv.ParseFloat(v.Text, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) {
		c.report(v.Pos(), FieldDropped, fmt.Sprintf("%s: timeout %s is not a positive number of seconds; callTimeoutSeconds keeps its default (120)", subject, clip(v.Text)), "")
		return
	}
	secs, how := math.Ceil(f), "seconds"
	if f > 3600 {
		secs, how = math.Ceil(f/1000), "milliseconds (a value over an hour)"
	}
	if secs > maxTimeoutSeconds {
		c.report(v.Pos(), FieldDropped, fmt.Sprintf("%s: timeout %s does not fit callTimeoutSeconds; it keeps its default (120)", subject, clip(v.Text)), "")
		return
	}
	e.callTimeout = int(secs)
	c.report(m.KeyPos(), FieldMapped, fmt.Sprintf(`%s: "timeout": %s, read as %s, became "%s": %d`, subject, clip(v.Text), how, c.field("callTimeoutSeconds"), e.callTimeout), "")
}

// field is a volcanic field's name in the output form.
func (c *converter) field(name string) string {
	if c.opts.Form == FormAppSettings {
		return strings.ToUpper(name[:1]) + name[1:]
	}
	return name
}

// stdio converts a server the client starts as a process.
func (c *converter) stdio(s *source, e *entry, subject string) bool {
	e.transport = "stdio"
	cmd := s.n.Get("command")
	if cmd == nil {
		c.report(s.namePos, Shape, fmt.Sprintf("%s has no command and no url; %s cannot start it", subject, clientName(c.opts.From)),
			`add "command": "npx" (or the program that runs the server)`)
		return false
	}
	if text, ok := c.stringValue(cmd, subject, "command"); ok {
		if strings.TrimSpace(text) == "" {
			c.report(cmd.Pos(), Shape, fmt.Sprintf("%s has an empty command", subject), `write "command": "npx" (or the program that runs the server)`)
		}
		e.command, _ = c.convertText(cmd, text, subject, "command")
	}
	if a := s.n.Get("args"); a != nil {
		if a.Kind != node.Array {
			c.report(a.Pos(), Shape, fmt.Sprintf("%s: args must be a list of strings, not %s", subject, node.Describe(a)), `write "args": ["-y", "package"]`)
		} else {
			for i, el := range a.Elems {
				where := fmt.Sprintf("args[%d]", i)
				if text, ok := c.stringValue(el, subject, where); ok {
					out, _ := c.convertText(el, text, subject, where)
					e.args = append(e.args, out)
				}
			}
		}
	}
	if m := s.n.Member("cwd"); m != nil {
		if c.opts.To == Craftbot {
			c.report(m.KeyPos(), FieldDropped, fmt.Sprintf("%s: cwd is not imported: CraftBot starts servers in its own working directory", subject),
				"if the server needs a directory, pass it as an argument")
		} else if text, ok := c.stringValue(m.Value, subject, "cwd"); ok {
			out, _ := c.convertText(m.Value, text, subject, "cwd")
			e.cwd = &out
		}
	}
	if env := s.n.Get("env"); env != nil {
		c.env(env, e, subject)
	}
	for _, key := range []string{"url", "headers"} {
		if m := s.n.Member(key); m != nil {
			c.report(m.KeyPos(), FieldDropped, fmt.Sprintf("%s: %s is not imported: the server is started by its command (stdio)", subject, key), "")
			if key == "headers" {
				c.headerNames(m.Value, subject)
			}
		}
	}
	return true
}

// stringValue checks that v is a string a process can take.
func (c *converter) stringValue(v *node.Node, subject, where string) (string, bool) {
	if v.Kind != node.String {
		c.report(v.Pos(), Shape, fmt.Sprintf("%s: %s must be a string, not %s", subject, where, node.Describe(v)), "")
		return "", false
	}
	if strings.ContainsRune(v.Text, 0) {
		c.report(v.Pos(), Shape, fmt.Sprintf("%s: %s holds a NUL character (\\u0000); no process can be started with it", subject, where), "remove the \\u0000")
		return "", false
	}
	return v.Text, true
}

// convertText rewrites the templates of a command, an argument or the cwd:
// places where volcanic allows ${workspace} only and craftbot nothing.
func (c *converter) convertText(v *node.Node, text, subject, where string) (string, bool) {
	pieces := c.split(text)
	if !hasTemplates(pieces) {
		return text, true
	}
	var b strings.Builder
	ok := true
	for i, p := range pieces {
		if p.kind != tLiteral && repeated(pieces[:i], p) {
			// The same template again in one value: same output, one report.
			if p.kind == tSeparator {
				b.WriteString("/")
			} else if p.kind == tWorkspace && c.opts.To == Volcanic {
				b.WriteString("${workspace}")
			}
			continue
		}
		switch p.kind {
		case tLiteral:
			b.WriteString(p.text)
		case tSeparator:
			b.WriteString("/")
			c.report(v.Pos(), Template, fmt.Sprintf("%s: %s in %s became /", subject, p.text, where), "")
		case tWorkspace:
			if c.opts.To == Craftbot {
				c.report(v.Pos(), TemplateUnsupported, fmt.Sprintf("%s: %s holds ${workspaceFolder}; CraftBot has no workspace variable", subject, where),
					"write the folder's absolute path")
				ok = false
				continue
			}
			b.WriteString("${workspace}")
			c.report(v.Pos(), Template, fmt.Sprintf("%s: ${workspaceFolder} in %s became ${workspace}, the chat's workspace", subject, where), "")
		case tEnv, tInput:
			c.report(v.Pos(), TemplateUnsupported, c.outsideEnvMessage(p, subject, where), c.outsideEnvAdvice(p))
			ok = false
		default:
			c.report(v.Pos(), TemplateUnsupported, fmt.Sprintf("%s: %s holds %s (%s), which %s cannot express", subject, where, p.shown(), p.why, c.opts.To),
				"write the value itself")
			ok = false
		}
	}
	return b.String(), ok
}

func (c *converter) outsideEnvMessage(p piece, subject, where string) string {
	what := fmt.Sprintf("%s, the host variable %s", p.shown(), p.name)
	if p.kind == tInput {
		what = fmt.Sprintf("%s, a value %s asks the user for", p.shown(), clientName(c.opts.From))
	}
	if c.opts.To == Volcanic {
		return fmt.Sprintf("%s: %s holds %s; volcanic reads host variables only in env values (${env:NAME}) and would pass it on literally", subject, where, what)
	}
	return fmt.Sprintf("%s: %s holds %s; CraftBot expands no variables and would pass it on literally", subject, where, what)
}

func (c *converter) outsideEnvAdvice(p piece) string {
	name := p.name
	if p.kind == tInput {
		name = envVarFor(p.name)
	}
	if !envNameRE.MatchString(name) {
		return "write the value itself"
	}
	if c.opts.To == Volcanic {
		return fmt.Sprintf(`if the server reads %s from its environment, remove it here and add "env": {"%s": "${env:%s}"}; otherwise write the value itself (it then shows in the plan and in ps)`, name, name, name)
	}
	return fmt.Sprintf(`if the server reads %s from its environment, remove it here and set it in env; otherwise write the value itself`, name)
}

// clip cuts a quoted number or word for a message.
func clip(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

// repeated reports whether p already occurs in earlier.
func repeated(earlier []piece, p piece) bool {
	for _, q := range earlier {
		if q.text == p.text {
			return true
		}
	}
	return false
}
