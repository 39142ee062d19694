// Package craftbot is the craftbot host profile: CraftBot's MCP
// configuration, app/config/mcp_config.json (SPEC §5), read as the host
// loads it (an entry that fails validation is skipped with a warning and
// the others load), compiled into a plan (Profile, registered with package
// compile), explained, and edited (EditFile, the one writer of the file).
// Check validates a whole file from its bytes (no disk) and returns each
// entry, typed, with its byte span in the file and whether the host loads
// it, and positioned diagnostics; an editor checks an edit with it before
// writing. How tools become actions, which a runtime needs without the
// compiler, is its subpackage actions.
package craftbot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/remotehttp"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// DefaultPath is where CraftBot looks for its MCP configuration, relative to
// the directory it runs in.
const DefaultPath = "app/config/mcp_config.json"

// Rule ids of the craftbot profile. Every one but cb-duplicate-key,
// cb-env-empty, cb-field-ignored and cb-target-os says that the host skips
// the entry.
// Each is declared in package rules.
var (
	RuleTransport      = rules.CbTransport.ID
	RuleMissingCommand = rules.CbMissingCommand.ID
	RuleMissingURL     = rules.CbMissingURL.ID
	RuleDuplicateName  = rules.CbDuplicateName.ID
	RuleNameInvalid    = rules.CbNameInvalid.ID
	RuleEntryInvalid   = rules.CbEntryInvalid.ID
	RuleFieldIgnored   = rules.CbFieldIgnored.ID
	RuleEnvEmpty       = rules.CbEnvEmpty.ID
	RuleTargetOS       = rules.CbTargetOS.ID
	RuleDuplicateKey   = rules.CbDuplicateKey.ID
)

// Field names of mcp_config.json.
const (
	FieldAutoConnect = "auto_connect"
	FieldServers     = "mcp_servers"
	FieldName        = "name"
	FieldDescription = "description"
	FieldTransport   = "transport"
	FieldCommand     = "command"
	FieldArgs        = "args"
	FieldEnv         = "env"
	FieldURL         = "url"
	FieldEnabled     = "enabled"
	FieldActionSet   = "action_set_name"
)

// EntryFields lists an entry's fields in the order the seed documents them.
var EntryFields = []string{FieldName, FieldDescription, FieldTransport, FieldCommand, FieldArgs, FieldEnv, FieldURL, FieldEnabled, FieldActionSet}

// Options change what Check reports.
type Options struct {
	// TargetOS (linux, darwin or windows) marks launch paths that are
	// invalid there (cb-target-os); "" checks none.
	TargetOS string
}

// Config is mcp_config.json as the host loads it.
type Config struct {
	File string
	// Root is the file's value; nil when it is not JSON.
	Root *node.Node
	// AutoConnect is auto_connect (default true: enabled servers connect
	// at startup).
	AutoConnect bool
	// Entries are the elements of mcp_servers in file order, each with
	// whether the host loads it.
	Entries []*Entry
}

// Entry is one element of mcp_servers.
type Entry struct {
	Index int
	// Node is the element as written (any kind: a non-object is skipped).
	Node *node.Node
	// Start and End are the element's byte span in the data given to
	// Check (End exclusive), byte order mark included.
	Start, End int
	Name       string
	// NamePos is the position of the name's value, else of the element.
	NamePos     diag.Pos
	Description string
	Transport   string
	Command     string
	Args        []string
	Env         []EnvVar
	URL         string
	// Enabled defaults to true.
	Enabled bool
	// ActionSet is action_set_name, else mcp_<name>.
	ActionSet string
	// Skip is the rule id of the first reason the host skips this entry;
	// "" when it loads.
	Skip string
	// Winner is the earlier entry that took this entry's name
	// (Skip is cb-duplicate-name).
	Winner *Entry
	// OSProblem says why the server cannot start on the target OS; "" when
	// it can (or no target OS was given).
	OSProblem string
}

// EnvVar is one variable of an entry's env, in file order.
type EnvVar struct {
	Key    string
	KeyPos diag.Pos
	// Value is the value as written: the host passes it literally, and it
	// may be a secret. Node is where it stands (its Start and End span the
	// quoted text in the file, without a byte order mark).
	Value string
	Node  *node.Node
}

// Loads reports whether the host loads the entry.
func (e *Entry) Loads() bool { return e.Skip == "" }

// Subject names the entry in messages: server "name", or mcp_servers[i]
// when it has no usable name.
func (e *Entry) Subject() string {
	if e.Name != "" {
		return fmt.Sprintf("server %q", e.Name)
	}
	return fmt.Sprintf("%s[%d]", FieldServers, e.Index)
}

// Lookup returns the entry the host loads under name, or nil.
func (c *Config) Lookup(name string) *Entry {
	for _, e := range c.Entries {
		if e.Name == name && e.Loads() {
			return e
		}
	}
	return nil
}

// Text is the JSON text of data, mcp_config.json as read from the disk:
// without its byte order mark. One mark is dropped (a second one is text,
// and a syntax error), as for every input of mcpc; positions count from
// the character after it. Check calls it: every reader of the file (mcpc
// validate, config, ui, run) passes Check the bytes as read, never bytes
// it dropped a mark from already, so that they all say the same of it.
func Text(data []byte) []byte { return inputfile.TrimBOM(data) }

// Check reads data, the content of file mcp_config.json as read from the
// disk (a byte order mark and all), as the host would and returns what
// loads, what is skipped and why. The diagnostics are
// sorted; errors concern the whole file (not JSON, not an object,
// mcp_servers not a list: no server loads), everything about one entry is
// a warning or info, since the host skips the entry and loads the rest.
// An error is returned only when the embedded schemas fail to compile.
func Check(file string, data []byte, opts Options) (*Config, []diag.Diagnostic, error) {
	text := Text(data)
	data, shift := text, len(data)-len(text)
	cfg := &Config{File: file, AutoConnect: schema.DefaultCraftbotAutoConnect}
	root, d := node.ParseJSONNesting(file, data, false, node.PythonNesting)
	if d != nil {
		return cfg, []diag.Diagnostic{*d}, nil
	}
	cfg.Root = root
	r := &reader{cfg: cfg, opts: opts}
	if root.Kind != node.Object {
		r.ds = append(r.ds, rules.TypeMismatch.At(root.Pos(),
			"mcp_config.json must hold a JSON object, not "+node.Describe(root),
			`write {"auto_connect": true, "mcp_servers": [ … ]}`))
		return cfg, r.ds, nil
	}
	r.dropDuplicateKeys(root, "", nil)
	v, err := schema.Acquire()
	if err != nil {
		return nil, nil, err
	}
	r.ds = append(r.ds, v.Check(schema.CraftbotConfig, shallow(root), "mcp_config.json", nil)...)
	schema.Release(v)
	if a := root.Get(FieldAutoConnect); a != nil && a.Kind == node.Bool {
		cfg.AutoConnect = a.Bool
	}
	if servers := root.Get(FieldServers); servers != nil && servers.Kind == node.Array {
		if err := r.readEntries(servers, shift); err != nil {
			return nil, nil, err
		}
	}
	diag.Sort(r.ds)
	return cfg, r.ds, nil
}

type reader struct {
	cfg  *Config
	opts Options
	ds   []diag.Diagnostic
}

func (r *reader) add(d diag.Diagnostic) {
	r.ds = append(r.ds, d)
}

// shallow keeps the top level of the file and replaces each element of
// mcp_servers by null, so that the #CraftbotConfig check does not walk the
// entries (each is checked on its own, against #CraftbotServer).
func shallow(root *node.Node) *node.Node {
	out := &node.Node{Kind: node.Object, Loc: root.Loc}
	for _, m := range root.Members {
		if m.Key == FieldServers && m.Value.Kind == node.Array {
			list := &node.Node{Kind: node.Array, Loc: m.Value.Loc}
			for _, e := range m.Value.Elems {
				list.Elems = append(list.Elems, &node.Node{Kind: node.Null, Loc: e.Loc})
			}
			m.Value = list
		}
		out.Members = append(out.Members, m)
	}
	return out
}

// dropDuplicateKeys keeps the last of the keys an object repeats, as the
// host's JSON reader (Python's json, JavaScript's JSON.parse) does, and
// reports each earlier one.
//
// key is the nearest key above n, indices the array indices below it: a
// message names the place as key[i][j], written only for a message
// (written at each level, it cost a value nested 800 levels 800² bytes).
func (r *reader) dropDuplicateKeys(n *node.Node, key string, indices []int) {
	switch n.Kind {
	case node.Array:
		indices = append(indices, 0)
		for i, e := range n.Elems {
			indices[len(indices)-1] = i
			r.dropDuplicateKeys(e, key, indices)
		}
	case node.Object:
		last := map[string]int{}
		for i, m := range n.Members {
			last[m.Key] = i
		}
		if len(last) < len(n.Members) {
			kept := make([]node.Member, 0, len(last))
			for i, m := range n.Members {
				if j := last[m.Key]; j != i {
					what := fmt.Sprintf("the key %q", m.Key)
					if where := placeName(key, indices); where != "" {
						what += " of " + where
					}
					r.add(rules.CbDuplicateKey.At(m.KeyPos(),
						fmt.Sprintf("%s appears again later in this object; the host keeps the last one and ignores this one", what),
						"remove one of them; the one that counts is at "+n.Members[j].KeyPos().String()))
					continue
				}
				kept = append(kept, m)
			}
			n.Members = kept
		}
		for _, m := range n.Members {
			r.dropDuplicateKeys(m.Value, m.Key, nil)
		}
	}
}

// placeName writes key[i][j] for dropDuplicateKeys' messages.
func placeName(key string, indices []int) string {
	var b strings.Builder
	b.WriteString(key)
	for _, i := range indices {
		fmt.Fprintf(&b, "[%d]", i)
	}
	return b.String()
}

// readEntries reads every element of mcp_servers, checks it against the
// schema (in parallel), then in file order decides which entries load.
func (r *reader) readEntries(servers *node.Node, shift int) error {
	var jobs []job
	for i, el := range servers.Elems {
		e := &Entry{Index: i, Node: el, Start: int(el.Start) + shift, End: int(el.End) + shift, NamePos: el.Pos(), Enabled: schema.DefaultCraftbotEnabled}
		r.cfg.Entries = append(r.cfg.Entries, e)
		if el.Kind != node.Object {
			continue
		}
		e.read()
		jobs = append(jobs, job{entry: e})
	}
	if err := checkAll(jobs); err != nil {
		return err
	}
	claimed := map[string]*Entry{}
	next := 0
	for _, e := range r.cfg.Entries {
		if e.Node.Kind != node.Object {
			r.skip(e, e.Node.Pos(), RuleEntryInvalid,
				fmt.Sprintf("%s is %s, not an object; the host skips it", e.Subject(), node.Describe(e.Node)),
				`write {"name": "…", "transport": "stdio", "command": "…"}`)
			continue
		}
		for _, d := range jobs[next].ds {
			r.schemaProblem(e, d)
		}
		next++
		r.checkFields(e)
		if e.Loads() {
			if w := claimed[e.Name]; w != nil {
				r.skip(e, e.NamePos, RuleDuplicateName,
					fmt.Sprintf("server %q is defined again; the host keeps the first definition (%s) and skips this one", e.Name, w.NamePos),
					"rename this server, or remove the definition you do not want")
				e.Winner = w
			} else {
				claimed[e.Name] = e
			}
		}
		if e.Loads() {
			r.checkLoaded(e)
		}
	}
	return nil
}

// skip records that the host skips e, and why.
func (r *reader) skip(e *Entry, pos diag.Pos, rule, msg, sugg string) {
	if e.Skip == "" {
		e.Skip = rule
	}
	r.add(rules.Of(rule).At(pos, msg, sugg))
}

// schemaProblem turns a schema diagnostic of an entry into what the host
// does with it: an unknown field is ignored, anything else makes the host
// skip the entry.
func (r *reader) schemaProblem(e *Entry, d diag.Diagnostic) {
	if d.Rule == rules.UnknownField.ID {
		r.ds = append(r.ds, d)
		return
	}
	switch {
	case d.Rule == rules.TypeMismatch.ID:
		d.Rule = RuleEntryInvalid
	case d.Rule == RuleTransport && d.Suggestion == "":
		d.Suggestion = `write "stdio" (a local command), "sse" or "websocket" (a url); CraftBot has no other transport`
	}
	r.skip(e, d.Pos(), d.Rule, d.Message+"; the host skips this server", d.Suggestion)
}

// read fills in the typed fields of an object entry; values of the wrong
// type (reported by the schema) count as absent.
func (e *Entry) read() {
	n := e.Node
	str := func(f string) string {
		if v := n.Get(f); v != nil && v.Kind == node.String {
			return v.Text
		}
		return ""
	}
	if v := n.Get(FieldName); v != nil && v.Kind == node.String {
		e.Name, e.NamePos = v.Text, v.Pos()
	}
	e.Description = str(FieldDescription)
	e.Transport = str(FieldTransport)
	e.Command = str(FieldCommand)
	e.URL = str(FieldURL)
	if v := n.Get(FieldArgs); v != nil && v.Kind == node.Array {
		for _, a := range v.Elems {
			if a.Kind == node.String {
				e.Args = append(e.Args, a.Text)
			}
		}
	}
	if v := n.Get(FieldEnv); v != nil && v.Kind == node.Object {
		for _, m := range v.Members {
			if m.Value.Kind == node.String {
				e.Env = append(e.Env, EnvVar{Key: m.Key, KeyPos: m.KeyPos(), Value: m.Value.Text, Node: m.Value})
			}
		}
	}
	if v := n.Get(FieldEnabled); v != nil && v.Kind == node.Bool {
		e.Enabled = v.Bool
	}
	e.ActionSet = "mcp_" + e.Name
	if s := str(FieldActionSet); s != "" {
		e.ActionSet = s
	}
}

// checkFields makes the checks of one object entry that the schema does not
// express: the fields its transport needs, and those it ignores.
func (r *reader) checkFields(e *Entry) {
	n := e.Node
	subject := e.Subject()
	if n.Get(FieldName) == nil {
		r.skip(e, n.Pos(), RuleNameInvalid,
			fmt.Sprintf("%s has no name; the host skips it", subject),
			`add "name": "…" (1 to 58 characters of A-Z a-z 0-9 _ -)`)
	}
	t := n.Get(FieldTransport)
	if t == nil {
		sugg := `add "transport": "stdio" (a local command), "sse" or "websocket" (a url)`
		switch {
		case n.Get(FieldCommand) != nil:
			sugg = `add "transport": "stdio"`
		case n.Get(FieldURL) != nil:
			sugg = `add "transport": "sse" (or "websocket")`
		}
		r.skip(e, n.Pos(), RuleTransport, fmt.Sprintf("%s has no transport; the host skips it", subject), sugg)
		return
	}
	switch e.Transport {
	case plan.TransportStdio:
		r.needText(e, FieldCommand, RuleMissingCommand, "a stdio server", `"command": "npx" (the program that runs the server)`)
		r.ignored(e, FieldURL, "the host launches command for a stdio server and never connects to a url")
	case plan.TransportSSE, plan.TransportWebsocket:
		example := map[string]string{plan.TransportSSE: "https://mcp.example.com/sse", plan.TransportWebsocket: "wss://mcp.example.com/ws"}[e.Transport]
		r.needText(e, FieldURL, RuleMissingURL, map[string]string{plan.TransportSSE: "an sse server", plan.TransportWebsocket: "a websocket server"}[e.Transport],
			`"url": "`+example+`" (the server's endpoint)`)
		r.insecureURL(e)
		why := fmt.Sprintf("the host connects to url for this %s server and launches nothing", e.Transport)
		r.ignored(e, FieldCommand, why)
		r.ignored(e, FieldArgs, why)
		r.ignored(e, FieldEnv, why)
	}
}

// RuleURLInsecure is the rule of servers.json's plain-http urls, which
// applies to a CraftBot entry's url as well.
var RuleURLInsecure = rules.RemoteURLInsecure.ID

// insecureURL warns about an sse or websocket url in clear text (http://,
// ws://) to a host that is not loopback: whatever credentials the server
// asks for travel unencrypted. wss:// and https:// are the norm.
func (r *reader) insecureURL(e *Entry) {
	v := e.Node.Get(FieldURL)
	if v == nil || v.Kind != node.String || strings.TrimSpace(v.Text) == "" {
		return
	}
	if bad, reason := remotehttp.Insecure(v.Text); bad {
		secure := map[string]string{plan.TransportSSE: "https://", plan.TransportWebsocket: "wss://"}[e.Transport]
		report := rules.RemoteURLInsecure.At
		if !e.Enabled {
			report = rules.RemoteURLInsecure.InfoAt // a disabled catalog entry connects nowhere, as for cb-target-os
		}
		r.add(report(v.Pos(),
			fmt.Sprintf("%s: the url %s", e.Subject(), reason),
			"if the server offers no "+secure+", reach it through a tunnel that ends on 127.0.0.1"))
	}
}

// needText makes the host skip e when field is missing or blank.
func (r *reader) needText(e *Entry, field, rule, what, sugg string) {
	v := e.Node.Get(field)
	switch {
	case v == nil:
		r.skip(e, e.NamePos, rule, fmt.Sprintf("%s is %s without %s; the host skips it", e.Subject(), what, field), "add "+sugg)
	case v.Kind == node.String && strings.TrimSpace(v.Text) == "":
		r.skip(e, v.Pos(), rule, fmt.Sprintf("%s is %s with an empty %s; the host skips it", e.Subject(), what, field), "write "+sugg)
	}
}

// ignored warns about a field, with a value, that e's transport does not
// use. Empty values ("", [], {}) carry nothing and pass.
func (r *reader) ignored(e *Entry, field, why string) {
	m := e.Node.Member(field)
	if m == nil {
		return
	}
	v := m.Value
	empty := v.Kind == node.Null || v.Kind == node.String && v.Text == "" ||
		v.Kind == node.Array && len(v.Elems) == 0 || v.Kind == node.Object && len(v.Members) == 0
	if empty {
		return
	}
	r.add(rules.CbFieldIgnored.At(m.KeyPos(),
		fmt.Sprintf("%s: %s is ignored: %s", e.Subject(), field, why),
		fmt.Sprintf("remove %s, or change transport if it is wrong", field)))
}

// checkLoaded checks an entry the host loads: empty credentials and launch
// paths that do not exist on the target OS.
func (r *reader) checkLoaded(e *Entry) {
	if e.Transport != plan.TransportStdio {
		return
	}
	if e.Enabled {
		for _, v := range e.Env {
			if strings.TrimSpace(v.Value) == "" {
				r.add(rules.CbEnvEmpty.At(v.Node.Pos(),
					fmt.Sprintf("server %q is enabled but its env %s is empty: the server starts without it and its calls fail (catalog entries ship credential keys empty)", e.Name, v.Key),
					fmt.Sprintf("fill it in: mcpc config env %s %s (the value is read without echo), or disable the server", e.Name, v.Key)))
			}
		}
	}
	if r.opts.TargetOS == "" {
		return
	}
	where, problem := launchProblem(r.opts.TargetOS, e)
	if problem == "" {
		return
	}
	e.OSProblem = problem
	report, verb := rules.CbTargetOS.At, "will not start"
	if !e.Enabled {
		report, verb = rules.CbTargetOS.InfoAt, "would not start if enabled"
	}
	r.add(report(where,
		fmt.Sprintf("server %q %s on %s: %s", e.Name, verb, r.opts.TargetOS, problem),
		"keep it disabled on "+r.opts.TargetOS+", or use a launch command that exists there"))
}

// argPos is the position of args[i] of e.
func argPos(e *Entry, i int) diag.Pos {
	if v := e.Node.Get(FieldArgs); v != nil && v.Kind == node.Array {
		n := 0
		for _, a := range v.Elems {
			if a.Kind == node.String {
				if n == i {
					return a.Pos()
				}
				n++
			}
		}
	}
	return e.NamePos
}

func fieldPos(e *Entry, field string) diag.Pos {
	if v := e.Node.Get(field); v != nil {
		return v.Pos()
	}
	return e.NamePos
}

func quote(s string) string { return strconv.Quote(s) }

// EnvValue is the value of env key of the server the host loads under
// name, as the file holds it: what the server is launched with. ok is
// false when no such server or key is there.
func (c *Config) EnvValue(name, key string) (value string, ok bool) {
	e := c.Lookup(name)
	if e == nil {
		return "", false
	}
	for _, v := range e.Env {
		if v.Key == key {
			return v.Value, true
		}
	}
	return "", false
}
