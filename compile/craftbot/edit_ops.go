package craftbot

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// style is how the file writes an entry, copied from one of its entries so
// that a new entry looks like its neighbours: "{" open member (sep
// member)* close "}", each member key colon value. Values inside an entry
// (args, env) are written on one line, items separated by comma, as the
// seed and CraftBot's catalog write them.
type style struct {
	open, sep, close string
	colon, comma     string
}

// offset is the byte offset in body of position p.
func (e *editor) offset(p diag.Pos) int {
	start, _ := e.ix.LineStart(p.Line)
	off, _ := e.ix.LineOffset(p.Line, p.Column)
	return start + off
}

// stringEnd returns the offset just after the JSON string that starts at
// body[k] (a quote).
func (e *editor) stringEnd(k int) int {
	j := k + 1
	for j < len(e.body) && e.body[j] != '"' {
		if e.body[j] == '\\' {
			j++
		}
		j++
	}
	return min(j+1, len(e.body))
}

func blank(s string) bool { return strings.Trim(s, " \t\r\n") == "" }

// colonOf returns what stands between m's key and its value (": ").
func (e *editor) colonOf(m node.Member) (string, bool) {
	k := e.offset(m.KeyPos())
	if k >= len(e.body) || e.body[k] != '"' {
		return "", false
	}
	end := e.stringEnd(k)
	if end > int(m.Value.Start) {
		return "", false
	}
	c := string(e.body[end:m.Value.Start])
	return c, strings.Trim(c, " \t\r\n") == ":"
}

// commaAfter is the separator of inline lists that goes with colon.
func commaAfter(colon string) string {
	if strings.HasSuffix(colon, " ") {
		return ", "
	}
	return ","
}

// entryStyle reads the style of el, an element of mcp_servers; false when
// el is not an object with members laid out plainly.
func (e *editor) entryStyle(el *node.Node) (style, bool) {
	if el.Kind != node.Object || len(el.Members) == 0 {
		return style{}, false
	}
	m0, last := el.Members[0], el.Members[len(el.Members)-1]
	colon, ok := e.colonOf(m0)
	open := string(e.body[el.Start+1 : e.offset(m0.KeyPos())])
	closing := string(e.body[last.Value.End : el.End-1])
	if !ok || !blank(open) || !blank(closing) {
		return style{}, false
	}
	st := style{open: open, sep: "," + open, close: closing, colon: colon, comma: commaAfter(colon)}
	if !strings.Contains(open, "\n") {
		st.sep = "," + strings.TrimLeft(st.comma, ",")
	}
	if len(el.Members) >= 2 {
		if s := string(e.body[m0.Value.End:e.offset(el.Members[1].KeyPos())]); strings.Trim(s, " \t\r\n") == "," {
			st.sep = s
		}
	}
	return st, true
}

// freshStyle is the style of a first entry: indented one level below the
// key at keyPos (mcp_servers, or the root's first key) in a file written
// over several lines, else on one line.
func (e *editor) freshStyle(keyPos diag.Pos) (st style, array func(entry string) string) {
	root := e.cfg.Root
	colon := ": "
	if len(root.Members) > 0 {
		if c, ok := e.colonOf(root.Members[0]); ok {
			colon = c
		}
	}
	comma := commaAfter(colon)
	if !bytes.ContainsRune(e.body[root.Start:root.End], '\n') {
		st = style{sep: comma, colon: colon, comma: comma}
		return st, func(entry string) string { return "[" + entry + "]" }
	}
	nl := "\n"
	if bytes.Contains(e.body, []byte("\r\n")) {
		nl = "\r\n"
	}
	keyIndent := ""
	if keyPos.Line > 0 {
		start, _ := e.ix.LineStart(keyPos.Line)
		if s := string(e.body[start:e.offset(keyPos)]); blank(s) {
			keyIndent = s
		}
	}
	unit := keyIndent
	if unit == "" {
		unit = "  "
	}
	elem, member := keyIndent+unit, keyIndent+unit+unit
	st = style{open: nl + member, sep: "," + nl + member, close: nl + elem, colon: colon, comma: comma}
	return st, func(entry string) string { return "[" + nl + elem + entry + nl + keyIndent + "]" }
}

// render writes an entry of members in style st.
func render(members []node.Member, st style) string {
	var b strings.Builder
	b.WriteString("{" + st.open)
	for i, m := range members {
		if i > 0 {
			b.WriteString(st.sep)
		}
		b.WriteString(jsonString(m.Key) + st.colon)
		inline(&b, m.Value, st)
	}
	b.WriteString(st.close + "}")
	return b.String()
}

// inline writes the value n on one line.
func inline(b *strings.Builder, n *node.Node, st style) {
	switch n.Kind {
	case node.String:
		b.WriteString(jsonString(n.Text))
	case node.Number:
		b.WriteString(n.Text)
	case node.Bool:
		b.WriteString(strconv.FormatBool(n.Bool))
	case node.Array:
		b.WriteByte('[')
		for i, el := range n.Elems {
			if i > 0 {
				b.WriteString(st.comma)
			}
			inline(b, el, st)
		}
		b.WriteByte(']')
	case node.Object:
		b.WriteByte('{')
		for i, m := range n.Members {
			if i > 0 {
				b.WriteString(st.comma)
			}
			b.WriteString(jsonString(m.Key) + st.colon)
			inline(b, m.Value, st)
		}
		b.WriteByte('}')
	default:
		b.WriteString("null")
	}
}

// add appends the entry of an add or add-json edit to mcp_servers in the
// file's style (creating the list when the file has none). A refusal is
// returned for an add-json whose JSON is unusable.
func (e *editor) add(ed Edit) (*Change, error) {
	var members []node.Member
	switch ed.Op {
	case OpAdd:
		if len(ed.Command) == 0 || blank(ed.Command[0]) {
			return nil, &EditError{Msg: "add needs the command that runs the server after --, as in: add fs --transport stdio -- npx -y @modelcontextprotocol/server-filesystem ."}
		}
		args := &node.Node{Kind: node.Array, Elems: []*node.Node{}}
		for _, a := range ed.Command[1:] {
			args.Elems = append(args.Elems, &node.Node{Kind: node.String, Text: a})
		}
		members = []node.Member{
			{Key: FieldName, Value: &node.Node{Kind: node.String, Text: ed.Name}},
			{Key: FieldTransport, Value: &node.Node{Kind: node.String, Text: plan.TransportStdio}},
			{Key: FieldCommand, Value: &node.Node{Kind: node.String, Text: ed.Command[0]}},
			{Key: FieldArgs, Value: args},
			{Key: FieldEnabled, Value: &node.Node{Kind: node.Bool, Bool: true}},
		}
	case OpAddJSON:
		var refusal *Change
		if members, refusal = jsonMembers(ed); refusal != nil {
			return refusal, nil
		}
	}
	root := e.cfg.Root
	servers := root.Member(FieldServers)
	switch {
	case servers == nil:
		keyPos := diag.Pos{}
		if len(root.Members) > 0 {
			keyPos = root.Members[0].KeyPos()
		}
		st, array := e.freshStyle(keyPos)
		e.insertMember(root, FieldServers, array(render(members, st)), st.colon)
	case len(servers.Value.Elems) == 0:
		st, array := e.freshStyle(servers.KeyPos())
		e.replace(int(servers.Value.Start), int(servers.Value.End), array(render(members, st)))
	default:
		list := servers.Value.Elems
		n := len(list)
		st, ok := style{}, false
		for i := n - 1; i >= 0 && !ok; i-- {
			st, ok = e.entryStyle(list[i])
		}
		if !ok {
			st, _ = e.freshStyle(servers.KeyPos())
		}
		sep := "," + string(e.body[servers.Value.Start+1:list[0].Start])
		if n >= 2 {
			sep = string(e.body[list[n-2].End:list[n-1].Start])
		}
		e.replace(int(list[n-1].End), int(list[n-1].End), sep+render(members, st))
		e.added = n
	}
	return nil, nil
}

// jsonMembers reads the JSON of an add-json edit: an object, whose name (if
// any) is the edit's. The entry is its members with the name first.
func jsonMembers(ed Edit) ([]node.Member, *Change) {
	arg := []byte(ed.JSON)
	refuse := func(d diag.Diagnostic) *Change {
		return &Change{Data: arg, File: ArgFile, Diagnostics: []diag.Diagnostic{d}, Refused: "the JSON is not a server entry"}
	}
	n, d := node.ParseJSONNesting(ArgFile, arg, false, node.PythonNesting)
	if d != nil {
		return nil, refuse(*d)
	}
	if n.Kind != node.Object {
		return nil, refuse(rules.CbEntryInvalid.ErrorAt(n.Pos(),
			"the JSON must be an object, not "+node.Describe(n),
			`write {"transport": "sse", "url": "https://…"}`))
	}
	members := []node.Member{{Key: FieldName, Value: &node.Node{Kind: node.String, Text: ed.Name}}}
	for _, m := range n.Members {
		if m.Key != FieldName {
			members = append(members, m)
			continue
		}
		if m.Value.Kind != node.String || m.Value.Text != ed.Name {
			return nil, refuse(rules.CbNameInvalid.ErrorAt(m.Value.Pos(),
				fmt.Sprintf("the JSON names the server %s, the command %q", describeName(m.Value), ed.Name),
				`leave "name" out of the JSON, or make it the NAME of the command`))
		}
	}
	return members, nil
}

func describeName(n *node.Node) string {
	if n.Kind == node.String {
		return strconv.Quote(n.Text)
	}
	return node.Describe(n)
}

// insertMember adds "key": valueText after the last member of obj, in the
// object's own layout; an empty object is written anew on one line with
// colon.
func (e *editor) insertMember(obj *node.Node, key, valueText, colon string) {
	if len(obj.Members) == 0 {
		e.replace(int(obj.Start), int(obj.End), "{"+jsonString(key)+colon+valueText+"}")
		return
	}
	n := len(obj.Members)
	last := obj.Members[n-1]
	if c, ok := e.colonOf(last); ok {
		colon = c
	}
	open := string(e.body[obj.Start+1 : e.offset(obj.Members[0].KeyPos())])
	sep := "," + open
	if !blank(open) || !strings.Contains(open, "\n") {
		sep = "," + strings.TrimLeft(commaAfter(colon), ",")
	}
	if n >= 2 {
		if s := string(e.body[obj.Members[n-2].Value.End:e.offset(last.KeyPos())]); strings.Trim(s, " \t\r\n") == "," {
			sep = s
		}
	}
	e.replace(int(last.Value.End), int(last.Value.End), sep+jsonString(key)+colon+valueText)
}

// remove takes every entry named name out of mcp_servers; the separators
// of the others stay, and the list keeps what surrounds it.
func (e *editor) remove(name string) error {
	list := e.cfg.Root.Get(FieldServers)
	var keep []int
	for i, t := range e.cfg.Entries {
		if t.NameNode != nil && t.Name == name {
			e.removed++
			continue
		}
		keep = append(keep, i)
	}
	if e.removed == 0 {
		return e.noServer(name)
	}
	if len(keep) == 0 {
		e.replace(int(list.Start)+1, int(list.End)-1, "")
		return nil
	}
	els := list.Elems
	var b bytes.Buffer
	b.Write(e.body[:els[0].Start])
	for k, i := range keep {
		if k > 0 {
			b.Write(e.body[els[i-1].End:els[i].Start])
		}
		b.Write(e.body[els[i].Start:els[i].End])
	}
	b.Write(e.body[els[len(els)-1].End:])
	e.out = b.Bytes()
	return nil
}

// disableAll writes enabled: false into t and every later loaded entry of
// its name. The seed's promise is that a disabled server stops connecting;
// the host launches the first entry of a name for each enabled entry of
// it, so one later enabled entry keeps the name running (cb-duplicate-name).
// The entries are edited from the last up, so that the spans of the
// earlier ones stay where they are.
func (e *editor) disableAll(t *Entry) {
	named := []*Entry{t}
	for _, o := range e.cfg.Entries {
		if o.Index > t.Index && o.Loads() && o.NameNode != nil && o.Name == t.Name {
			named = append(named, o)
		}
	}
	body := e.body
	for i := len(named) - 1; i >= 0; i-- {
		e.setEnabled(named[i], false)
		e.body = e.out
	}
	e.body = body
}

// setEnabled writes enabled: want into t (an absent enabled is true).
func (e *editor) setEnabled(t *Entry, want bool) error {
	m := t.Node.Member(FieldEnabled)
	switch {
	case m == nil && want, m != nil && m.Value.Kind == node.Bool && m.Value.Bool == want:
		e.out = e.body
	case m == nil:
		e.insertMember(t.Node, FieldEnabled, "false", ": ")
	default:
		e.replace(int(m.Value.Start), int(m.Value.End), strconv.FormatBool(want))
	}
	return nil
}

// envKeyRE is a variable name every OS and shell accepts.
var envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// setEnv writes env[key] = value into t; env on a remote server is
// refused, since the host would ignore it.
func (e *editor) setEnv(t *Entry, key, value string) (*Change, error) {
	if !envKeyRE.MatchString(key) {
		return nil, &EditError{Msg: fmt.Sprintf("%q is not a variable name: use letters, digits and _, not starting with a digit (as GITHUB_PERSONAL_ACCESS_TOKEN)", key)}
	}
	if strings.ContainsRune(value, 0) {
		return nil, &EditError{Msg: "the value holds a NUL character, which no environment variable can hold"}
	}
	if t.Transport == plan.TransportSSE || t.Transport == plan.TransportWebsocket {
		d := rules.CbFieldIgnored.At(fieldPos(t, FieldTransport),
			fmt.Sprintf("server %q is %s server: the host connects to its url and passes env only to the stdio servers it launches", t.Name, map[string]string{plan.TransportSSE: "an sse", plan.TransportWebsocket: "a websocket"}[t.Transport]),
			"give the credential in the url or a header the server documents, or use a stdio server")
		return &Change{Data: e.body, File: e.file, Diagnostics: []diag.Diagnostic{d}, Refused: fmt.Sprintf("the host would ignore env of server %q", t.Name)}, nil
	}
	colon := ": "
	if len(t.Node.Members) > 0 {
		if c, ok := e.colonOf(t.Node.Members[0]); ok {
			colon = c
		}
	}
	m := t.Node.Member(FieldEnv)
	switch {
	case m == nil:
		e.insertMember(t.Node, FieldEnv, "{"+jsonString(key)+colon+jsonString(value)+"}", colon)
	case m.Value.Kind != node.Object:
		// The host skips the entry; the check after the edit says why.
		e.out = e.body
	default:
		v := m.Value.Get(key)
		switch {
		case v == nil:
			e.insertMember(m.Value, key, jsonString(value), colon)
		case v.Kind == node.String && v.Text == value:
			e.out = e.body
		default:
			e.replace(int(v.Start), int(v.End), jsonString(value))
		}
	}
	return nil, nil
}
