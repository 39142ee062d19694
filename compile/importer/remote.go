package importer

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/node"
)

// remoteSchemes are the URL schemes of remote servers, by lower-case prefix.
var remoteSchemes = []string{"http://", "https://", "ws://", "wss://"}

// remote converts a server the client connects to by URL: for craftbot an
// sse or websocket entry; for volcanic, whose remote servers live per chat
// in a sealed file, the mcpc remote add command that adds it.
func (c *converter) remote(s *source, e *entry, subject, transport string) bool {
	u := s.n.Get("url")
	if u == nil {
		c.report(s.namePos, Shape, fmt.Sprintf("%s is a remote (%s) server without url", subject, transportWords(transport)), `add "url": "https://…"`)
		return false
	}
	raw, ok := c.stringValue(u, subject, "url")
	if !ok {
		return false
	}
	lower := strings.ToLower(raw)
	scheme := ""
	for _, p := range remoteSchemes {
		if strings.HasPrefix(lower, p) {
			scheme = strings.TrimSuffix(p, "://")
		}
	}
	templated := strings.HasPrefix(raw, "${") && c.opts.To == Volcanic // guidance only: the user fills it in
	if scheme == "" && !templated {
		c.report(u.Pos(), Shape, fmt.Sprintf("%s: url must be an absolute http(s) or ws(s) URL", subject), `write "url": "https://mcp.example.com/mcp"`)
		return false
	}
	shown, hidden := displayURL(raw)
	shown = c.shownTemplates(shown)
	if hidden {
		c.secret(u, raw)
	}
	for _, key := range []string{"command", "args", "env", "cwd"} {
		if m := s.n.Member(key); m != nil {
			c.report(m.KeyPos(), FieldDropped, fmt.Sprintf("%s: %s is not imported: a remote server is not started", subject, key), "")
		}
	}
	var headers []node.Member
	if m := s.n.Member("headers"); m != nil {
		c.headerNames(m.Value, subject)
		if m.Value.Kind == node.Object {
			headers = m.Value.Members
		}
	}
	if c.opts.To == Volcanic {
		c.remoteGuidance(s, subject, transport, scheme, shown, hidden, headers)
		return false
	}
	return c.craftbotRemote(s, e, u, subject, transport, scheme, raw, hidden, headers)
}

func transportWords(t string) string {
	switch t {
	case srcHTTP:
		return "Streamable HTTP"
	case srcSSE:
		return "SSE"
	case srcWS:
		return "WebSocket"
	}
	return "Streamable HTTP or SSE"
}

// displayURL is a URL as a report may show it: without user info, query or
// fragment, which may carry a key; hidden says something was cut.
func displayURL(raw string) (string, bool) {
	s, hidden := raw, false
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s, hidden = s[:i], true
	}
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		host := rest
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			host = rest[:j]
		}
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			s, hidden = s[:i+3]+rest[at+1:], true
		}
	}
	return s, hidden
}

// remoteGuidance reports a remote server for volcanic: the command that
// adds it to a chat, with header names and never their values.
func (c *converter) remoteGuidance(s *source, subject, transport, scheme, shown string, hidden bool, headers []node.Member) {
	file := "settings.json"
	if c.opts.Form == FormAppSettings {
		file = "Mcp section"
	}
	msg := fmt.Sprintf("%s is a remote (%s) server; volcanic's %s holds only servers it starts, so it is not in the output", subject, transportWords(transport), file)
	if scheme == "ws" || scheme == "wss" || transport == srcWS {
		c.report(s.namePos, Remote, msg, "volcanic connects to remote servers over Streamable HTTP or SSE only; ask the server's provider for an http(s) endpoint")
		return
	}
	c.res.Remote++
	name := c.remoteName(s.name)
	cmd := []string{"mcpc remote add", name, shellQuote(shown)}
	switch transport {
	case srcHTTP:
		cmd = append(cmd, "--transport http")
	case srcSSE:
		cmd = append(cmd, "--transport sse")
	}
	cmd = append(cmd, keyOptions(headers)...)
	cmd = append(cmd, "--workspace DIR --scope CHAT")
	sugg := "add it to each chat that uses it: " + strings.Join(cmd, " ")
	var notes []string
	if name != s.name {
		notes = append(notes, fmt.Sprintf("a remote server's name is 1-20 of a-z 0-9 -, so %q became %s", s.name, name))
	}
	if hidden {
		notes = append(notes, "the URL's user info, query or fragment is not shown, as it may hold a key: give the whole URL as the source has it")
	}
	if hasTemplates(c.split(shown)) {
		notes = append(notes, "replace each ${…} in the URL with its value")
	}
	if len(headers) > 0 {
		notes = append(notes, "put the key in place of the <…>, or leave the option out to type it without echo")
	}
	if len(notes) > 0 {
		sugg += "; " + strings.Join(notes, "; ")
	}
	c.report(s.namePos, Remote, msg, sugg)
}

// keyOptions are the mcpc remote add options that set the headers, with
// placeholders for their values.
func keyOptions(headers []node.Member) []string {
	if len(headers) == 0 {
		return []string{"--no-key"}
	}
	var out []string
	for _, h := range headers {
		if strings.EqualFold(h.Key, "Authorization") && h.Value.Kind == node.String && strings.HasPrefix(strings.ToLower(h.Value.Text), "bearer ") && len(headers) == 1 {
			return []string{"--bearer <token>"}
		}
		out = append(out, fmt.Sprintf(`--header "%s: <value>"`, strings.NewReplacer(`"`, `\"`, "$", `\$`, "`", "\\`").Replace(h.Key)))
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// remoteName turns a server name into a unique remote name: 1-20 of
// a-z 0-9 -.
func (c *converter) remoteName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	base := strings.Trim(collapseDashes(b.String()), "-")
	if base == "" {
		base = "remote"
	}
	if len(base) > 20 {
		base = strings.TrimRight(base[:20], "-")
	}
	if c.remoteNames == nil {
		c.remoteNames = map[string]bool{}
	}
	out := base
	for i := 2; c.remoteNames[out]; i++ {
		suffix := fmt.Sprintf("-%d", i)
		out = base[:min(len(base), 20-len(suffix))] + suffix
	}
	c.remoteNames[out] = true
	return out
}

// craftbotRemote makes an sse or websocket entry.
func (c *converter) craftbotRemote(s *source, e *entry, u *node.Node, subject, transport, scheme, raw string, hidden bool, headers []node.Member) bool {
	if hasTemplates(c.split(raw)) {
		c.report(u.Pos(), TemplateUnsupported, fmt.Sprintf("%s: url holds a ${…}; CraftBot expands no variables", subject), "write the URL itself")
		return false
	}
	switch {
	case scheme == "ws" || scheme == "wss" || transport == srcWS:
		e.transport = "websocket"
	case transport == srcSSE:
		e.transport = "sse"
	default:
		e.transport = "sse"
		c.report(s.namePos, Remote, fmt.Sprintf("%s is a %s server; CraftBot connects over sse or websocket only, so it became an sse entry", subject, transportWords(transport)),
			"check that the server offers SSE at this URL (often a path ending in /sse rather than /mcp)")
	}
	if len(headers) > 0 {
		var names []string
		for _, h := range headers {
			names = append(names, h.Key)
		}
		c.report(s.n.Member("headers").KeyPos(), FieldDropped, fmt.Sprintf("%s: headers are not imported (%s): CraftBot's entries have no headers", subject, strings.Join(names, ", ")),
			"if the server accepts its key another way, write it into the url; otherwise CraftBot cannot authenticate to it")
	}
	if hidden {
		c.report(u.Pos(), Secret, fmt.Sprintf("%s: the url has user info, a query or a fragment, which may hold a key; it is copied as it is", subject),
			"keep mcp_config.json on a machine you control and out of version control")
	}
	e.url = raw
	return true
}

func collapseDashes(s string) string {
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	return s
}

// shownTemplates rewrites the templates of s as a report may quote them
// (without defaults, which are values).
func (c *converter) shownTemplates(s string) string {
	var b strings.Builder
	for _, p := range c.split(s) {
		if p.kind == tLiteral {
			b.WriteString(p.text)
		} else {
			b.WriteString(p.shown())
		}
	}
	return b.String()
}
