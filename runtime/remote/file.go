// Package remote is the file of a chat's remote MCP servers and the
// connection to one of them (SPEC §3): <workspace>/.volcanic/mcp/servers.json
// read with positions and validated into diagnostics, the sealed headers
// (HKDF-SHA256 → AES-256-GCM, bound to the chat's scope and every visible
// field), atomic edits that keep other entries byte for byte, and dialing
// one server (Dial, Probe: what `mcpc remote add` tries before it saves).
// The per-chat connections (connecting in the background, retries, naming,
// calls) are package remoteset's.
//
// An entry that is invalid or does not open is skipped and reported, never
// used, and never rewritten. No header value, token or host secret is ever
// put in a diagnostic, an error, a reason or a status.
//
// It imports diag, node, rules, schema, redact, internal/inputfile,
// internal/atomicfile, internal/term and internal/remotehttp (the url
// policy and the origin guard of every request); never naming, compile or
// runtime.
package remote

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tailscale/hujson"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/remotehttp"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// RelPath is where servers.json lives inside a chat's workspace.
const RelPath = ".volcanic/mcp/servers.json"

// FileVersion is the only version of servers.json.
const FileVersion = 1

// MaxFileSize bounds servers.json: a bigger file is refused unread (the agent
// can write the file, and must not make the host read gigabytes).
const MaxFileSize = 1 << 20

// Transports and auth kinds of an entry.
const (
	TransportAuto = "auto" // Streamable HTTP, falling back to SSE
	TransportHTTP = "http" // Streamable HTTP
	TransportSSE  = "sse"  // the older HTTP+SSE transport
	AuthHeaders   = "headers"
)

// Schema definitions (schema/remote.cue).
const (
	defFile   = "#Remote"
	defServer = "#RemoteServer"
)

// MaxNameLen is the longest server name.
const MaxNameLen = 20

// Server is the visible part of an entry: everything but the sealed
// headers. Every field is bound into the sealed part's associated data.
type Server struct {
	Name      string
	URL       string
	Transport string
	// Tools is the allowlist of the server's own tool names; nil allows
	// every tool.
	Tools []string
	Auth  string
}

// Equal reports whether s and o are the same server: every visible field,
// the allowlist's null and order included.
func (s Server) Equal(o Server) bool {
	if s.Name != o.Name || s.URL != o.URL || s.Transport != o.Transport || s.Auth != o.Auth || (s.Tools == nil) != (o.Tools == nil) || len(s.Tools) != len(o.Tools) {
		return false
	}
	for i := range s.Tools {
		if s.Tools[i] != o.Tools[i] {
			return false
		}
	}
	return true
}

// Entry is one element of servers, as read.
type Entry struct {
	Server
	Sealed string
	// Index is the element's index in servers.
	Index int
	// Pos is where the element starts; NamePos where its name (or, without
	// one, the element) is; SealedPos where its sealed value is.
	Pos, NamePos, SealedPos diag.Pos
	// Problem is the first error found in the entry ("" when it is valid).
	// An entry with a problem is skipped and never rewritten.
	Problem string

	start, end int // byte offsets of the element
}

// Valid reports whether the entry has no error (it may still not open).
func (e *Entry) Valid() bool { return e.Problem == "" }

// Label names the entry in messages: server "notes", or servers[2] when it
// has no usable name.
func (e *Entry) Label() string {
	if validName(e.Name) {
		return fmt.Sprintf("server %q", e.Name)
	}
	return fmt.Sprintf("servers[%d]", e.Index)
}

// File is servers.json as read: its entries, and every problem found.
type File struct {
	Path   string
	Data   []byte
	Exists bool
	// Entries in file order. Empty when Problem is set.
	Entries []*Entry
	// Diagnostics of the whole file, sorted.
	Diagnostics []diag.Diagnostic
	// Problem is set when the file as a whole cannot be used (invalid JSON,
	// not an object, wrong version, no servers list): then it has no
	// entries and is never edited.
	Problem string

	lines     *node.LineIndex
	arrStart  int    // offset of the [ of servers
	arrEnd    int    // offset after its ]
	keyIndent string // indentation of the line that holds "servers"
	userinfo  []string
}

// Parse reads servers.json from data (path is used in positions) and checks
// everything that does not need the host secret.
func Parse(path string, data []byte) *File {
	f := &File{Path: path, Data: data, Exists: true, lines: node.NewLineIndex(path, data)}
	defer func() { diag.Sort(f.Diagnostics) }()
	fail := func(d diag.Diagnostic) *File {
		f.Diagnostics = append(f.Diagnostics, d)
		f.Problem = fmt.Sprintf("%s: %s", d.Pos(), d.Message)
		f.Entries = nil
		return f
	}
	root, synErr := node.ParseJSONNesting(path, data, false, node.DotNetNesting)
	if synErr != nil {
		return fail(*synErr)
	}
	hv, err := hujson.Parse(data)
	if err != nil { // node.ParseJSON accepted it: cannot happen
		return fail(rules.JSONSyntax.At(root.Pos(), "invalid JSON: "+err.Error(), ""))
	}
	if root.Kind != node.Object {
		return fail(rules.TypeMismatch.At(root.Pos(), "servers.json must hold a JSON object {\"version\": 1, \"servers\": [...]}, not "+node.Describe(root), ""))
	}
	if ds := duplicateKeys(root, false); len(ds) > 0 {
		f.Diagnostics = append(f.Diagnostics, ds[1:]...)
		return fail(ds[0])
	}
	v, verr := schema.Acquire()
	if verr != nil {
		return fail(rules.TypeMismatch.At(root.Pos(), "internal: "+verr.Error(), ""))
	}
	defer schema.Release(v)

	var fatal []diag.Diagnostic
	for _, d := range v.Check(defFile, shallow(root), "servers.json", schema.DefaultNaming) {
		if d.Severity == diag.Error && (d.Pos() == root.Pos() || topLevel(root, d.Pos())) {
			fatal = append(fatal, d)
		} else {
			f.Diagnostics = append(f.Diagnostics, d)
		}
	}
	if len(fatal) > 0 {
		f.Diagnostics = append(f.Diagnostics, fatal[1:]...)
		return fail(fatal[0])
	}
	servers := root.Get("servers")
	// Byte offsets of the list and of each element, for edits.
	obj := hv.Value.(*hujson.Object)
	var arr *hujson.Value
	for i := range obj.Members {
		if name, _ := obj.Members[i].Name.Value.(hujson.Literal); name.String() == "servers" {
			arr = &obj.Members[i].Value
			f.keyIndent = indentOf(data, obj.Members[i].Name.StartOffset)
		}
	}
	elems := arr.Value.(*hujson.Array).Elements
	f.arrStart, f.arrEnd = arr.StartOffset, arr.EndOffset

	firstByName := map[string]*Entry{}
	for i, el := range servers.Elems {
		e := &Entry{Index: i, Pos: el.Pos(), NamePos: el.Pos(), SealedPos: el.Pos(), start: elems[i].StartOffset, end: elems[i].EndOffset}
		f.Entries = append(f.Entries, e)
		ds := f.checkEntry(v, e, el)
		for _, d := range ds {
			if d.Severity == diag.Error && e.Problem == "" {
				e.Problem = d.Message
			}
		}
		f.Diagnostics = append(f.Diagnostics, ds...)
		if e.Problem != "" || !validName(e.Name) {
			continue
		}
		if first, dup := firstByName[e.Name]; dup {
			d := rules.RemoteNameDuplicate.At(e.NamePos,
				fmt.Sprintf("server %q is defined again (first at line %d); names must be unique, and only the first entry is used", e.Name, first.NamePos.Line),
				fmt.Sprintf("delete one of the two entries, or run mcpc remote add %s … to replace both with one", e.Name))
			e.Problem = d.Message
			f.Diagnostics = append(f.Diagnostics, d)
			continue
		}
		firstByName[e.Name] = e
	}
	return f
}

// topLevel reports whether pos is a top-level member of root (version,
// servers) rather than inside an element of servers.
func topLevel(root *node.Node, pos diag.Pos) bool {
	for _, m := range root.Members {
		if m.KeyPos() == pos || m.Value.Pos() == pos {
			return true
		}
	}
	return false
}

// indentOf returns the blanks that start the line holding offset off.
func indentOf(data []byte, off int) string {
	start := off
	for start > 0 && data[start-1] != '\n' {
		start--
	}
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// shallow returns root with each object element of servers emptied: the
// file-level check looks at the list, the entries are checked one by one.
func shallow(root *node.Node) *node.Node {
	out := &node.Node{Kind: node.Object, Loc: root.Loc}
	for _, m := range root.Members {
		if m.Key == "servers" && m.Value.Kind == node.Array {
			list := &node.Node{Kind: node.Array, Loc: m.Value.Loc}
			for _, el := range m.Value.Elems {
				if el.Kind == node.Object {
					el = &node.Node{Kind: node.Object, Loc: el.Loc}
				}
				list.Elems = append(list.Elems, el)
			}
			m.Value = list
		}
		out.Members = append(out.Members, m)
	}
	return out
}

// duplicateKeys reports every key that repeats in an object of n (deep: at
// any depth): the host's JSON reader and mcpc could disagree on which one
// counts.
func duplicateKeys(n *node.Node, deep bool) []diag.Diagnostic {
	var out []diag.Diagnostic
	var walk func(*node.Node)
	walk = func(n *node.Node) {
		switch n.Kind {
		case node.Object:
			seen := map[string]diag.Pos{}
			for _, m := range n.Members {
				if first, dup := seen[m.Key]; dup {
					out = append(out, rules.DuplicateKey.At(m.KeyPos(),
						fmt.Sprintf("key %q appears twice in this object (first at line %d, column %d)", m.Key, first.Line, first.Column),
						"keep one of them"))
				} else {
					seen[m.Key] = m.KeyPos()
				}
				if deep {
					walk(m.Value)
				}
			}
		case node.Array:
			for _, e := range n.Elems {
				walk(e)
			}
		}
	}
	walk(n)
	return out
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// checkEntry checks one element of servers and fills e from it.
func (f *File) checkEntry(v *schema.Validator, e *Entry, el *node.Node) []diag.Diagnostic {
	if el.Kind != node.Object {
		// The file-level schema check has reported it.
		e.Problem = "an entry of servers must be an object, not " + node.Describe(el)
		return nil
	}
	ds := duplicateKeys(el, true)
	if n := el.Get("name"); n != nil {
		e.NamePos = n.Pos()
		if n.Kind == node.String {
			e.Name = n.Text
		}
	}
	subject := e.Label()
	ds = append(ds, v.Check(defServer, firstKeys(el), subject, schema.DefaultNaming)...)
	str := func(key string) (string, *node.Node) {
		n := el.Get(key)
		if n == nil || n.Kind != node.String {
			return "", n
		}
		return n.Text, n
	}
	var urlNode, sealedNode *node.Node
	e.URL, urlNode = str("url")
	e.Transport, _ = str("transport")
	e.Auth, _ = str("auth")
	e.Sealed, sealedNode = str("sealed")
	if sealedNode != nil {
		e.SealedPos = sealedNode.Pos()
	}
	if urlNode != nil && urlNode.Kind == node.String {
		ds = append(ds, f.checkURL(subject, e.URL, urlNode.Pos())...)
	}
	if tn := el.Get("tools"); tn != nil && tn.Kind == node.Array {
		e.Tools = []string{}
		seen := map[string]bool{}
		if len(tn.Elems) == 0 {
			ds = append(ds, rules.RemoteTools.At(tn.Pos(),
				subject+": tools is an empty list, so no tool of the server would be used",
				fmt.Sprintf("write null to allow every tool, list the tools to allow, or remove the server (mcpc remote remove %s)", e.Name)))
		}
		for i, t := range tn.Elems {
			if t.Kind != node.String {
				ds = append(ds, rules.TypeMismatch.At(t.Pos(), fmt.Sprintf("%s: tools[%d] must be a string, not %s", subject, i, node.Describe(t)), ""))
				continue
			}
			switch {
			case t.Text == "":
				ds = append(ds, rules.RemoteTools.At(t.Pos(), fmt.Sprintf("%s: tools[%d] is empty; a tool name is never empty", subject, i), "remove it"))
			case seen[t.Text]:
				ds = append(ds, rules.RemoteTools.At(t.Pos(), fmt.Sprintf("%s: tools[%d] repeats %q", subject, i, t.Text), "list each tool once"))
			}
			seen[t.Text] = true
			e.Tools = append(e.Tools, t.Text)
		}
	}
	if sealedNode != nil && sealedNode.Kind == node.String {
		if _, err := decodeSealed(e.Sealed); err != nil {
			ds = append(ds, rules.RemoteSealed.At(sealedNode.Pos(),
				fmt.Sprintf("%s: %v; the entry cannot be opened and is skipped", subject, err),
				"sealed is written by mcpc remote add: add the server again"))
		}
	}
	return ds
}

// firstKeys returns el without repeated keys (the first one stays), for the
// schema check: repeated keys are reported once, as duplicate-key.
func firstKeys(el *node.Node) *node.Node {
	seen := map[string]bool{}
	out := &node.Node{Kind: node.Object, Loc: el.Loc}
	for _, m := range el.Members {
		if !seen[m.Key] {
			seen[m.Key] = true
			out.Members = append(out.Members, m)
		}
	}
	return out
}

// CheckURL checks a server URL: absolute http or https, with a host and no
// user info. The messages never quote the URL (its user info or query may
// hold credentials). It returns the problem ("" when fine) and whether the
// URL is plain http to a host that is not loopback (remotehttp.Insecure,
// the rule of every remote url).
func CheckURL(raw string) (problem, suggestion string, insecure bool) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || raw == "":
		return "is not a valid URL", `write an absolute URL such as "https://mcp.example.com/mcp"`, false
	case u.Scheme != "http" && u.Scheme != "https":
		if u.Scheme == "" {
			return "must be an absolute http:// or https:// URL", `write the scheme, as in "https://mcp.example.com/mcp"`, false
		}
		return fmt.Sprintf("must be an http:// or https:// URL, not %s://", u.Scheme), `write "https://…"`, false
	case u.User != nil:
		return "must not contain user info (user:password@)", "remove it from the url and send the credentials as a header instead (mcpc remote add --header \"Authorization: …\")", false
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "has no host", `write an absolute URL such as "https://mcp.example.com/mcp"`, false
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "has a port outside 1–65535", "", false
		}
	}
	insecure, _ = remotehttp.Insecure(raw)
	return "", "", insecure
}

func (f *File) checkURL(subject, raw string, pos diag.Pos) []diag.Diagnostic {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		f.userinfo = append(f.userinfo, u.User.String())
	}
	problem, sugg, insecure := CheckURL(raw)
	if problem != "" {
		return []diag.Diagnostic{rules.RemoteURL.At(pos, subject+": url "+problem, sugg)}
	}
	if insecure {
		u, _ := url.Parse(raw)
		return []diag.Diagnostic{rules.RemoteURLInsecure.At(pos,
			fmt.Sprintf("%s: url uses plain http to %s, which is not a loopback address: its headers, and the key in them, travel unencrypted", subject, u.Hostname()),
			"use https://")}
	}
	return nil
}

// Find returns the entries named name, in file order.
func (f *File) Find(name string) []*Entry {
	var out []*Entry
	for _, e := range f.Entries {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// Names returns the names of the entries, in file order (invalid names
// included, as written).
func (f *File) Names() []string {
	var out []string
	for _, e := range f.Entries {
		if e.Name != "" {
			out = append(out, e.Name)
		}
	}
	return out
}

// Sources returns the lines of servers.json for excerpts under its
// diagnostics, with user info of URLs and the values redact replaces taken
// out (redact may be nil). The column is moved with the text.
func (f *File) Sources(redact func(string) string) diag.Sources {
	return fileSources{f: f, redact: redact}
}

type fileSources struct {
	f      *File
	redact func(string) string
}

func (s fileSources) Line(file string, line, col int) (string, int, bool) {
	if s.f.lines == nil || file != s.f.Path {
		return "", 0, false
	}
	text, ok := s.f.lines.Line(line)
	if !ok {
		return "", 0, false
	}
	text, col = hideQueries(text, col)
	if len(s.f.userinfo) > 0 {
		pairs := make([]string, 0, 2*len(s.f.userinfo))
		for _, u := range s.f.userinfo {
			pairs = append(pairs, u, "[REDACTED]")
		}
		text, col = redactAt(strings.NewReplacer(pairs...).Replace, text, col)
	}
	if s.redact != nil {
		text, col = redactAt(s.redact, text, col)
	}
	return text, col, true
}

// hideQueries replaces the query and fragment of every URL that a JSON
// string of line s holds with [REDACTED] (every output shows URLs without
// their query: it may hold a key), and maps the 1-based character column
// col of s to the same place in the result (a column inside a hidden part
// maps to its [REDACTED]). A string holds a URL when it contains "://"; its
// query starts at the first '?' or '#', escaped or not. The string may be
// unterminated (a file with a syntax error): it then ends with the line.
func hideQueries(s string, col int) (string, int) {
	var b strings.Builder
	newCol, n := 0, 0 // the result's column for col; characters written so far
	seen, seenRunes := 0, 0
	at := func(i int) { // byte offset i of s is about to be written (i never decreases)
		seenRunes += utf8.RuneCountInString(s[seen:i])
		seen = i
		if newCol == 0 && seenRunes+1 >= col {
			newCol = n + 1
		}
	}
	write := func(t string) {
		b.WriteString(t)
		n += utf8.RuneCountInString(t)
	}
	i := 0
	for i < len(s) {
		if s[i] != '"' {
			_, size := utf8.DecodeRuneInString(s[i:])
			at(i)
			write(s[i : i+size])
			i += size
			continue
		}
		// A string: find its end, and its decoded text with the offset in
		// s of each decoded character.
		end := len(s)
		var text []rune
		var offs []int
		for j := i + 1; j < len(s); {
			switch {
			case s[j] == '"':
				end = j
				j = len(s)
			case s[j] == '\\' && j+1 < len(s):
				r, size := jsonEscape(s[j:])
				text, offs = append(text, r), append(offs, j)
				j += size
			default:
				r, size := utf8.DecodeRuneInString(s[j:])
				text, offs = append(text, r), append(offs, j)
				j += size
			}
		}
		hideFrom := -1 // offset in s of the first character to hide
		if strings.Contains(string(text), "://") {
			for k, r := range text {
				if (r == '?' || r == '#') && k+1 < len(text) {
					hideFrom = offs[k+1]
					break
				}
			}
		}
		stop := end
		if hideFrom >= 0 {
			stop = hideFrom
		}
		for k := i; k < stop; {
			_, size := utf8.DecodeRuneInString(s[k:])
			at(k)
			write(s[k : k+size])
			k += size
		}
		if hideFrom >= 0 {
			for k := hideFrom; k < end; {
				at(k) // a column inside the hidden part: its [REDACTED]
				_, size := utf8.DecodeRuneInString(s[k:])
				k += size
			}
			write("[REDACTED]")
		}
		if end < len(s) {
			at(end)
			write(`"`)
		}
		i = end + 1
	}
	at(len(s))
	return b.String(), newCol
}

// jsonEscape decodes the JSON escape sequence at the start of s (which
// starts with a backslash) and returns the character and the length of the
// sequence. A surrogate pair counts as one character; anything invalid as
// the character after the backslash.
func jsonEscape(s string) (rune, int) {
	switch s[1] {
	case 'u':
		if len(s) >= 6 {
			if v, err := strconv.ParseUint(s[2:6], 16, 16); err == nil {
				r := rune(v)
				if utf16.IsSurrogate(r) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
					if w, err := strconv.ParseUint(s[8:12], 16, 16); err == nil {
						if p := utf16.DecodeRune(r, rune(w)); p != utf8.RuneError {
							return p, 12
						}
					}
				}
				return r, 6
			}
		}
		return 'u', 2
	case 'n':
		return '\n', 2
	case 't':
		return '\t', 2
	case 'r':
		return '\r', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	default:
		r, size := utf8.DecodeRuneInString(s[1:])
		return r, 1 + size
	}
}

// redactAt applies redact to s and maps the 1-based character column col of
// s to the same place in the result (a column inside a replaced value maps
// to its replacement).
func redactAt(redact func(string) string, s string, col int) (string, int) {
	off := len(s)
	n := col - 1
	for i := range s {
		if n <= 0 {
			off = i
			break
		}
		n--
	}
	out := redact(s)
	before := redact(s[:off])
	for len(before) > 0 && !strings.HasPrefix(out, before) {
		before = before[:len(before)-1]
	}
	return out, utf8.RuneCountInString(before) + 1
}
