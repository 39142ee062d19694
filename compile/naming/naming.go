// Package naming turns the tools that MCP servers list into the names the
// agent sees (SPEC §2.5). Everything here is a pure function: no I/O, no
// globals that change, the same input always gives the same output.
//
// # Steps, for each tool of each server, in order
//
//  1. name = toolPrefix + tool name;
//  2. every character (Unicode code point) outside A-Z a-z 0-9 _ - becomes
//     one "_"; each byte of invalid UTF-8 counts as one character;
//  3. the name is cut to [MaxLen] (48) characters — after step 2 the name is
//     ASCII, so a multi-byte character that straddles the cut is already a
//     single "_";
//  4. a name already taken by an earlier tool of the same server gets "_2",
//     "_3", …: the first free suffix, counting up per base name; the base is
//     cut so that base+suffix stays within 48 characters;
//  5. a name equal to a built-in tool ([DefaultBuiltins] unless configured;
//     compared exactly, case-sensitively) is not registered;
//  6. a name already registered by another server is dropped; the first
//     server in source order wins.
//
// A name that is empty after step 3 (empty prefix and empty tool name) is
// not registered (rule [RuleEmpty]); it takes no name in step 4.
//
// # One rule per tool
//
// [Result.Rule] holds the single rule that best explains what happened to a
// tool; [Result.Message] still mentions every change. Precedence, strongest
// first:
//
//	tool-name-empty, tool-builtin-conflict, tool-name-collision   (the tool is not registered)
//	tool-name-deduplicated                                        (a suffix _N was added)
//	tool-name-truncated                                           (cut at 48)
//	tool-name-sanitized                                           (characters replaced)
//
// A "_2" suffix is reported as its own rule, tool-name-deduplicated, rather
// than under the step that made two names equal: the suffix depends on the
// order in which the server lists its tools, so the agent-visible name is
// unstable across server versions, which is worth a warning of its own,
// whatever caused the clash (sanitizing, cutting, or a server listing one
// name twice).
//
// # Remote servers
//
// A [ServerTools] with Remote set is a remote server (SPEC §3): its tools are
// named <server>__<tool> (Prefix is ignored), sanitized and cut the same way,
// and a name that some other tool already has — also of the same server — is
// skipped (tool-name-collision) instead of getting a suffix.
//
// It serves mcpc's own commands, not embedders: its API may change
// (docs/decisions/0002-package-layout-and-import-direction.md).
package naming

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/policies/rules"
)

// MaxLen is the longest visible tool name, in characters.
const MaxLen = 48

// ProviderPrefix is what a Claude-Code-style provider puts before every tool
// name (15 + 48 = 63 characters, within the provider's limit of 64).
const ProviderPrefix = "mcp__volcanic__"

// Rule ids reported in [Result.Rule] (each rule is declared in package rules).
var (
	RuleSanitized    = rules.ToolNameSanitized.ID
	RuleTruncated    = rules.ToolNameTruncated.ID
	RuleDeduplicated = rules.ToolNameDeduplicated.ID
	RuleBuiltin      = rules.ToolBuiltinConflict.ID
	RuleCollision    = rules.ToolNameCollision.ID
	RuleEmpty        = rules.ToolNameEmpty.ID
)

// DefaultBuiltins are the host's built-in tool names, used when
// [Options.Builtins] is nil. Callers must not modify it.
var DefaultBuiltins = []string{"read", "write", "edit", "bash", "grep", "find", "ls", "send"}

// ServerTools is one server's tool list, as the server returned it.
type ServerTools struct {
	Server string   `json:"server"`           // server name from the plan
	Prefix string   `json:"prefix,omitempty"` // toolPrefix ("" for none)
	Tools  []string `json:"tools"`            // tool names in tools/list order
	// Remote marks a remote server (SPEC §3): names are <Server>__<tool>,
	// Prefix is ignored, and duplicates are skipped rather than suffixed.
	Remote bool `json:"remote,omitempty"`
}

// Options configures [Assign].
type Options struct {
	// Builtins are the names of the host's own tools. nil means
	// DefaultBuiltins; an empty non-nil slice means none.
	Builtins []string
}

// Result is what happened to one tool.
type Result struct {
	Server string `json:"server"`
	Tool   string `json:"tool"` // the server's own name, used to call it
	// Name is the visible name, "" when the tool is not registered.
	Name string `json:"name"`
	// Rule explains a drop or a change ("" when the name is prefix+tool as
	// is). See the package documentation for the precedence.
	Rule       string `json:"rule,omitempty"`
	Message    string `json:"message,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

// Registered reports whether the tool is visible to the agent.
func (r Result) Registered() bool { return r.Name != "" }

// allowed reports whether c may stand in a visible name.
func allowed(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// sanitize applies step 2. The result is ASCII. changed reports whether any
// character was replaced.
func sanitize(s string) (out string, changed bool) {
	clean := true
	for i := 0; i < len(s); i++ {
		if !allowed(rune(s[i])) {
			clean = false
			break
		}
	}
	if clean {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	// Ranging over a string yields utf8.RuneError with width 1 for every
	// byte of invalid UTF-8, so each such byte becomes one "_".
	for _, c := range s {
		if allowed(c) {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String(), true
}

// cut applies step 3 to an ASCII string.
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return s[:n], true
}

// Visible returns the visible name of tool under prefix: steps 1–3.
func Visible(prefix, tool string) string {
	s, _ := sanitize(prefix + tool)
	s, _ = cut(s, MaxLen)
	return s
}

// Remote returns the visible name of tool of the remote server: <server>__<tool>,
// sanitized and cut like [Visible].
func Remote(server, tool string) string {
	return Visible(server+"__", tool)
}

// Provider returns the name under which a Claude-Code-style provider shows
// the visible name to the agent.
func Provider(name string) string {
	return ProviderPrefix + name
}

// suffixed returns base cut so that base+"_k" fits in MaxLen, plus "_k".
func suffixed(base string, k int) string {
	suf := "_" + strconv.Itoa(k)
	b, _ := cut(base, MaxLen-len(suf))
	return b + suf
}

// owner is who holds a visible name.
type owner struct {
	server string
	tool   string
}

// facts records how one tool got its name, for the message.
type facts struct {
	server    *ServerTools
	tool      string
	prefix    string // the prefix actually used (remote: server + "__")
	full      string // prefix + tool
	name      string // after steps 1–4
	sanitized bool
	truncated bool
	dupBase   string // step 4: the name that was taken ("" if none)
	dupPrev   string // step 4: the earlier tool of the same server that took it
	rule      string
	winner    owner // step 6, or the same-server tool for a skipped remote duplicate
	ownDup    bool  // a remote duplicate within one server
}

// Assign names the tools of all servers, given in source (merge) order, and
// returns one Result per tool, in input order.
func Assign(servers []ServerTools, opts Options) []Result {
	builtins := opts.Builtins
	if builtins == nil {
		builtins = DefaultBuiltins
	}
	isBuiltin := make(map[string]bool, len(builtins))
	for _, b := range builtins {
		isBuiltin[b] = true
	}

	total := 0
	for _, s := range servers {
		total += len(s.Tools)
	}
	out := make([]Result, 0, total)
	registered := make(map[string]owner, total) // across servers
	var w writer                                // message buffer, reused

	for si := range servers {
		s := &servers[si]
		prefix := s.Prefix
		if s.Remote {
			prefix = s.Server + "__"
		}
		taken := make(map[string]string, len(s.Tools)) // name → tool of this server (step 4)
		var next map[string]int                        // base → next suffix to try
		for _, tool := range s.Tools {
			f := facts{server: s, tool: tool, prefix: prefix, full: prefix + tool}
			f.name, f.sanitized = sanitize(f.full)
			f.name, f.truncated = cut(f.name, MaxLen)
			switch {
			case f.truncated:
				f.rule = RuleTruncated
			case f.sanitized:
				f.rule = RuleSanitized
			}

			switch prev, dup := taken[f.name]; {
			case f.name == "":
				f.rule = RuleEmpty
			case dup && s.Remote: // remote servers skip duplicates
				f.rule = RuleCollision
				f.winner, f.ownDup = owner{server: s.Server, tool: prev}, true
			case dup: // step 4
				f.dupBase, f.dupPrev = f.name, prev
				if next == nil {
					next = map[string]int{}
				}
				k := max(next[f.dupBase], 2)
				for {
					f.name = suffixed(f.dupBase, k)
					k++
					if _, t := taken[f.name]; !t {
						break
					}
				}
				next[f.dupBase] = k
				f.rule = RuleDeduplicated
			}
			if f.rule != RuleEmpty && f.rule != RuleCollision {
				taken[f.name] = tool
				if isBuiltin[f.name] { // step 5
					f.rule = RuleBuiltin
				} else if o, clash := registered[f.name]; clash { // step 6
					f.rule = RuleCollision
					f.winner = o
				} else {
					registered[f.name] = owner{server: s.Server, tool: tool}
				}
			}

			r := Result{Server: s.Server, Tool: tool, Rule: f.rule}
			switch f.rule {
			case RuleEmpty, RuleBuiltin, RuleCollision:
			default:
				r.Name = f.name
			}
			if f.rule != "" {
				r.Message, r.Suggestion = w.explain(&f)
			}
			out = append(out, r)
		}
	}
	return out
}

// writer builds messages with one allocation each.
type writer struct{ b []byte }

func (w *writer) s(parts ...string) *writer {
	for _, p := range parts {
		w.b = append(w.b, p...)
	}
	return w
}

// q appends x quoted like %q does: invalid UTF-8 bytes show as \xNN, so
// messages are always valid UTF-8.
func (w *writer) q(x string) *writer {
	for i := 0; i < len(x); i++ {
		if c := x[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			w.b = strconv.AppendQuote(w.b, x)
			return w
		}
	}
	w.b = append(append(append(w.b, '"'), x...), '"')
	return w
}

// take returns the text written so far and empties the buffer.
func (w *writer) take() string {
	t := string(w.b)
	w.b = w.b[:0]
	return t
}

// changes writes what steps 2–4 did, separated by "; ".
func (w *writer) changes(f *facts) {
	sep := ""
	if f.sanitized {
		w.s(`characters outside A-Z a-z 0-9 _ - became "_"`)
		sep = "; "
	}
	if f.truncated {
		w.s(sep).q(f.full).s(" (", strconv.Itoa(utf8.RuneCountInString(f.full)), " characters) was cut to ", strconv.Itoa(MaxLen))
		sep = "; "
	}
	if f.dupBase != "" {
		w.s(sep).q(f.dupBase).s(" is already taken by tool ").q(f.dupPrev).s(" of the same server, so a suffix was added")
	}
}

// also writes the changes made before a drop as a message tail.
func (w *writer) also(f *facts) {
	if f.sanitized || f.truncated || f.dupBase != "" {
		w.s(" (")
		w.changes(f)
		w.s(")")
	}
}

// explain returns the message and the suggestion for f.rule.
func (w *writer) explain(f *facts) (msg, suggestion string) {
	s := f.server
	kind := "server "
	if s.Remote {
		kind = "remote server "
	}
	switch f.rule {
	case RuleEmpty:
		p := suggestPrefix(s.Server, "")
		msg = w.s("server ").q(s.Server).s(" lists a tool with an empty name and has no toolPrefix, so the tool has no name and is not registered").take()
		suggestion = w.s(`set "toolPrefix": `).q(p).s(" on server ").q(s.Server).s(" to register it as ").q(p).take()
	case RuleBuiltin:
		w.s("tool ").q(f.tool).s(" of ", kind).q(s.Server).s(" is not registered: ").q(f.name).s(" is the name of a built-in tool")
		w.also(f)
		msg = w.take()
		if s.Remote {
			suggestion = "add the remote server under another name"
		} else {
			p := suggestPrefix(s.Server, f.prefix)
			suggestion = w.s(`set "toolPrefix": `).q(p).s(" on server ").q(s.Server).s("; the tool then shows as ").q(Visible(p, f.tool)).take()
		}
	case RuleCollision:
		if f.ownDup {
			msg = w.s("tool ").q(f.tool).s(" of ", kind).q(s.Server).s(" is skipped: the name ").q(f.name).s(" is already used by its tool ").q(f.winner.tool).take()
			return msg, ""
		}
		w.s("tool ").q(f.tool).s(" of ", kind).q(s.Server).s(" is not registered: the name ").q(f.name).s(" is already registered by tool ").q(f.winner.tool).s(" of server ").q(f.winner.server).s(", which comes first in source order")
		w.also(f)
		msg = w.take()
		if s.Remote {
			suggestion = "add the remote server under another name"
		} else {
			p := suggestPrefix(s.Server, f.prefix)
			suggestion = w.s("give server ").q(f.winner.server).s(" or server ").q(s.Server).s(` a toolPrefix, for example "toolPrefix": `).q(p).s(" on ").q(s.Server).s(", to keep both").take()
		}
	default: // the tool is registered under a changed name
		w.s("tool ").q(f.tool).s(" of ", kind).q(s.Server).s(" is registered as ").q(f.name).s(": ")
		w.changes(f)
		msg = w.take()
		if f.rule == RuleTruncated && f.prefix != "" && !s.Remote {
			suggestion = "a shorter toolPrefix keeps more of the tool name"
		}
	}
	return msg, suggestion
}

// suggestPrefix proposes a toolPrefix for server: its name, sanitized, plus
// "_", made different from the prefix it already has.
func suggestPrefix(server, current string) string {
	p, _ := sanitize(server)
	for strings.HasPrefix(p, "mcp__") {
		p = strings.TrimPrefix(p, "mcp__")
	}
	if p == "" {
		p = "srv"
	}
	p, _ = cut(p, 16)
	p += "_"
	if p == current {
		p = current + "x_"
	}
	return p
}
