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
	"math"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
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
	// AutoConnect is auto_connect as Python reads it (truthy; default
	// true: enabled servers connect at startup).
	AutoConnect bool
	// Entries are the elements of mcp_servers in file order, each with
	// whether the host loads it.
	Entries []*Entry
	// LoadsNothing says why the host loads no server at all from the file
	// (a byte order mark, a syntax error, a top level that is not an
	// object, mcp_servers that is not a list); "" when it loads its
	// entries. Entries are still read when the text allows, for the views
	// of the file, but none of them runs.
	LoadsNothing string
}

// Entry is one element of mcp_servers.
type Entry struct {
	Index int
	// Node is the element as written (any kind: a non-object is skipped).
	Node *node.Node
	// Start and End are the element's byte span in the data given to
	// Check (End exclusive), byte order mark included.
	Start, End int
	// Name is the name as the host writes it in f"mcp_{name}": the string,
	// or Python's str() of another value (42, None, True, 1.0).
	Name string
	// NameNode is the name's value as written; nil when there is none.
	NameNode *node.Node
	// NamePos is the position of the name's value, else of the element.
	NamePos diag.Pos
	// Description is what the host uses as the server's description: ""
	// when Python reads it as false, else its text.
	Description string
	// Transport is the transport ("stdio" when absent).
	Transport string
	// Command is the command when it is a string (a list or another value
	// cannot start: CannotStart says so).
	Command string
	// Args are the arguments the host passes: the strings of a list, each
	// character of a string, the keys of an object.
	Args []string
	// Env are the entry's variables whose values are strings.
	Env []EnvVar
	URL string
	// Enabled is enabled as Python reads it (truthy; default true).
	Enabled bool
	// ActionSet is action_set_name when Python reads it as true, else
	// mcp_<name>.
	ActionSet string
	// Skip is the rule id of the first reason the host skips this entry;
	// "" when it loads.
	Skip string
	// Winner is the first loaded entry of this entry's name, when this one
	// loads after it: the host launches Winner for either (the plan lists
	// this entry under shadowed).
	Winner *Entry
	// CannotStart says why the host loads this entry but its start always
	// fails; "" when it can start.
	CannotStart string
	// OSProblem says why the server cannot start on the target OS; "" when
	// it can (or no target OS was given).
	OSProblem string
	// starts: the host starts this entry (it is enabled, or it is the
	// first loaded entry of a name another enabled entry has).
	starts bool
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

// Shadowed reports whether the entry loads after an earlier entry of its
// name, which the host launches in its place.
func (e *Entry) Shadowed() bool { return e.Winner != nil }

// Subject names the entry in messages: server "name", or mcp_servers[i]
// when it has no name.
func (e *Entry) Subject() string {
	if e.NameNode != nil {
		return fmt.Sprintf("server %q", e.Name)
	}
	return fmt.Sprintf("%s[%d]", FieldServers, e.Index)
}

// Lookup returns the entry the host loads first under name (the one it
// launches and edits), or nil.
func (c *Config) Lookup(name string) *Entry {
	for _, e := range c.Entries {
		if e.NameNode != nil && e.Name == name && e.Loads() {
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
// CraftBot itself refuses a file with a mark (Check says so).
func Text(data []byte) []byte { return inputfile.TrimBOM(data) }

// loadsNothing is what follows for a file the host loads nothing from: the
// host's /mcp and Settings edits load the file, get an empty configuration
// when it fails, and save what they hold.
const loadsNothing = "CraftBot starts with no MCP server, and its next /mcp add, add-json or Settings edit saves a file that holds only the new server: every other entry, with its credentials, is lost"

// Check reads data, the content of file mcp_config.json as read from the
// disk (a byte order mark and all), as CraftBot's loader (read at commit
// 605efb4) reads it and returns what loads, what is skipped and why, and
// what cannot start. The diagnostics are sorted. A problem of the whole
// file (Config.LoadsNothing) is an error; an entry the host skips or
// cannot start is an error when it is enabled, a warning when it is not.
// An error is returned only when the embedded schemas fail to compile.
func Check(file string, data []byte, opts Options) (*Config, []diag.Diagnostic, error) {
	text := Text(data)
	data, shift := text, len(data)-len(text)
	cfg := &Config{File: file, AutoConnect: schema.DefaultCraftbotAutoConnect}
	root, d := node.ParseJSONNesting(file, data, false, node.PythonNesting)
	if d != nil {
		d.Message += ": " + loadsNothing
		cfg.LoadsNothing = "the file is not JSON CraftBot reads"
		return cfg, []diag.Diagnostic{*d}, nil
	}
	cfg.Root = root
	r := &reader{cfg: cfg, opts: opts}
	if shift > 0 {
		cfg.LoadsNothing = "the file starts with a byte order mark"
		r.add(rules.JSONSyntax.ErrorAt(diag.Pos{File: file, Line: 1, Column: 1},
			"the file starts with a byte order mark (U+FEFF), which CraftBot's json.load refuses: "+loadsNothing,
			"save the file as UTF-8 without a byte order mark"))
	}
	if root.Kind != node.Object {
		cfg.LoadsNothing = "the file is not a JSON object"
		r.ds = append(r.ds, rules.TypeMismatch.ErrorAt(root.Pos(),
			"mcp_config.json must hold a JSON object, not "+node.Describe(root)+": "+loadsNothing,
			`write {"auto_connect": true, "mcp_servers": [ … ]}`))
		diag.Sort(r.ds)
		return cfg, r.ds, nil
	}
	r.dropDuplicateKeys(root, "", nil)
	v, err := schema.Acquire()
	if err != nil {
		return nil, nil, err
	}
	for _, d := range v.Check(schema.CraftbotConfig, shallow(root), "mcp_config.json", nil) {
		r.unknownField(d, nil)
	}
	schema.Release(v)
	if m := root.Member(FieldAutoConnect); m != nil {
		cfg.AutoConnect = truthy(m.Value)
		r.boolField(m, "mcp_config.json", cfg.AutoConnect, true, "every enabled server connects at startup", "no server connects")
	}
	if !cfg.AutoConnect {
		pos := root.Pos()
		if m := root.Member(FieldAutoConnect); m != nil {
			pos = m.Value.Pos()
		}
		r.add(rules.CbAutoConnectOff.At(pos,
			"auto_connect is false: CraftBot connects its servers only at startup when auto_connect is true, so in this run no server connects and the agent has no MCP tool (mcpc run connects an enabled server when it is first used)",
			`write "auto_connect": true, and disable the servers you do not want`))
	}
	if servers := root.Get(FieldServers); servers != nil {
		switch {
		case servers.Kind == node.Array:
			if err := r.readEntries(servers, shift); err != nil {
				return nil, nil, err
			}
		case !truthy(servers) && (servers.Kind == node.String || servers.Kind == node.Object):
			// Python iterates "" and {} as nothing.
			r.add(rules.CbFieldType.At(servers.Pos(),
				fmt.Sprintf("mcp_servers is %s, not a list: the host reads it as no server", describe(servers)),
				`write "mcp_servers": []`))
		default:
			cfg.LoadsNothing = "mcp_servers is not a list"
			r.add(rules.TypeMismatch.ErrorAt(servers.Pos(),
				fmt.Sprintf("mcp_servers must be a list, not %s: %s", describe(servers), loadsNothing),
				`write "mcp_servers": [{"name": "…", "command": "…"}]`))
		}
	}
	diag.Sort(r.ds)
	return cfg, r.ds, nil
}

// describe names the kind of n for a message, with the text of a short
// string or number.
func describe(n *node.Node) string {
	switch {
	case n.Kind == node.String && n.Text == "":
		return "an empty string"
	case n.Kind == node.Object && len(n.Members) == 0:
		return "an empty object"
	case n.Kind == node.Array && len(n.Elems) == 0:
		return "an empty list"
	case n.Kind == node.String && len(n.Text) <= 40:
		return "the string " + quote(n.Text)
	case n.Kind == node.Number:
		return "the number " + n.Text
	case n.Kind == node.Bool:
		return strconv.FormatBool(n.Bool)
	}
	return node.Describe(n)
}

type reader struct {
	cfg  *Config
	opts Options
	ds   []diag.Diagnostic
}

func (r *reader) add(d diag.Diagnostic) {
	r.ds = append(r.ds, d)
}

// report adds a finding of rule about an entry: an error when the host
// starts the entry (it does not do what the file says), else a warning.
func (r *reader) report(e *Entry, rule rules.Rule, pos diag.Pos, msg, sugg string) {
	if e.Enabled || e.starts {
		r.add(rule.ErrorAt(pos, msg, sugg))
		return
	}
	r.add(rule.At(pos, msg, sugg))
}

// unknownField turns the schema's finding of a field CraftBot does not
// read into what the host does with it: it ignores it on load, and its
// next edit deletes it. e is the entry (nil at the top level). Other
// findings of the schema are dropped: the host checks no type, and the
// reader says what it makes of each value.
func (r *reader) unknownField(d diag.Diagnostic, e *Entry) {
	if d.Rule != rules.UnknownField.ID {
		return
	}
	d.Rule = RuleEditDrops
	d.Message += ", and the host's next /mcp or Settings edit deletes it"
	if e != nil && !e.Loads() {
		return // the entry's own cb-edit-drops says the whole entry goes
	}
	r.add(d)
}

// shallow keeps the top level of the file and replaces each element of
// mcp_servers by null, so that the #CraftbotConfig check does not walk the
// entries (each is checked on its own, against #CraftbotServer).
func shallow(root *node.Node) *node.Node {
	out := &node.Node{Kind: node.Object, Loc: root.Loc}
	for _, m := range root.Members {
		if m.Key == FieldServers {
			list := &node.Node{Kind: node.Array, Loc: m.Value.Loc}
			for _, e := range m.Value.Elems {
				list.Elems = append(list.Elems, &node.Node{Kind: node.Null, Loc: e.Loc})
			}
			m.Value = list
		}
		if m.Key == FieldAutoConnect {
			m.Value = &node.Node{Kind: node.Bool, Loc: m.Value.Loc}
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

// readEntries reads every element of mcp_servers as the host does, checks
// it against the schema (in parallel) for fields the host does not read,
// then in file order decides which entries load, which cannot start, and
// which entry of a repeated name the host launches.
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
	first := map[string]*Entry{}
	next := 0
	for _, e := range r.cfg.Entries {
		if e.Node.Kind != node.Object {
			r.skip(e, e.Node.Pos(), rules.CbEntryInvalid,
				fmt.Sprintf("%s is %s, not an object; the host skips it", e.Subject(), node.Describe(e.Node)),
				`write {"name": "…", "transport": "stdio", "command": "…"}`)
			r.dropped(e)
			continue
		}
		r.checkFields(e)
		for _, d := range jobs[next].ds {
			r.unknownField(d, e)
		}
		next++
		if !e.Loads() {
			r.dropped(e)
			continue
		}
		e.starts = e.Enabled
		if w := first[e.Name]; w != nil {
			e.Winner = w
			w.starts = w.starts || e.Enabled // the host starts w for e
		} else {
			first[e.Name] = e
		}
	}
	// What the host starts of each name is its first entry: what would
	// make it fail is an error when any entry of the name is enabled.
	for _, e := range r.cfg.Entries {
		if !e.Loads() || e.Node.Kind != node.Object {
			continue
		}
		r.checkReadings(e)
		if e.Winner != nil {
			continue
		}
		r.checkName(e)
		r.checkStart(e)
		r.checkLoaded(e)
	}
	r.checkDuplicates()
	return nil
}

// skip records that the host skips e, and why.
func (r *reader) skip(e *Entry, pos diag.Pos, rule rules.Rule, msg, sugg string) {
	if e.Skip == "" {
		e.Skip = rule.ID
	}
	if rule.ID == RuleEntryInvalid {
		r.add(rule.At(pos, msg, sugg)) // not an object: nothing says it is disabled
		return
	}
	r.report(e, rule, pos, msg, sugg)
}

// cannotStart records that the host loads e but its start fails, and why.
func (r *reader) cannotStart(e *Entry, pos diag.Pos, reason, sugg string) {
	if e.CannotStart == "" {
		e.CannotStart = reason
	} else {
		e.CannotStart += "; " + reason
	}
	r.report(e, rules.CbCannotStart, pos, fmt.Sprintf("%s: %s; the host loads it, but it never starts", e.Subject(), reason), sugg)
}

// dropped warns that the host's next edit deletes e, which it skips.
func (r *reader) dropped(e *Entry) {
	msg := fmt.Sprintf("the host's next /mcp or Settings edit deletes %s: it saves only the entries it loaded", e.Subject())
	if n := len(e.Env); n > 0 {
		msg += fmt.Sprintf(", and %s of its env (credentials, most likely) with it", compile.Plural(n, "value"))
	}
	r.add(rules.CbEditDrops.At(e.Node.Pos(), msg, "fix the entry so that the host loads it, or keep a copy of it elsewhere"))
}

// read fills in the typed fields of an object entry as the host's loader
// reads them: no type is checked, a value is used as Python holds it.
func (e *Entry) read() {
	n := e.Node
	if v := n.Get(FieldName); v != nil {
		e.NameNode, e.Name, e.NamePos = v, pyStr(v), v.Pos()
	}
	if v := n.Get(FieldDescription); truthy(v) {
		e.Description = pyStr(v)
	}
	e.Transport = plan.TransportStdio // what a missing transport means
	if v := n.Get(FieldTransport); v != nil {
		e.Transport = ""
		if v.Kind == node.String {
			e.Transport = v.Text
		}
	}
	if v := n.Get(FieldCommand); v != nil && v.Kind == node.String {
		e.Command = v.Text
	}
	if v := n.Get(FieldURL); v != nil && v.Kind == node.String {
		e.URL = v.Text
	}
	if v := n.Get(FieldArgs); v != nil {
		switch v.Kind {
		case node.Array:
			for _, a := range v.Elems {
				if a.Kind == node.String {
					e.Args = append(e.Args, a.Text)
				}
			}
		case node.String: // Python iterates a string character by character
			for _, c := range v.Text {
				e.Args = append(e.Args, string(c))
			}
		case node.Object: // and a dict by its keys
			for _, m := range v.Members {
				e.Args = append(e.Args, m.Key)
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
	if v := n.Member(FieldEnabled); v != nil {
		e.Enabled = truthy(v.Value)
	}
	e.ActionSet = "mcp_" + e.Name
	if v := n.Get(FieldActionSet); truthy(v) {
		e.ActionSet = pyStr(v)
	}
}

// checkFields makes the checks of the host's loader, in its order: a name,
// a known transport, and the field that transport needs; then the fields
// the transport ignores.
func (r *reader) checkFields(e *Entry) {
	n := e.Node
	if n.Get(FieldName) == nil {
		r.skip(e, n.Pos(), rules.CbNameInvalid,
			fmt.Sprintf("%s has no name; the host skips it", e.Subject()),
			`add "name": "…"`)
		return
	}
	t := n.Get(FieldTransport)
	switch e.Transport {
	case plan.TransportStdio:
		r.need(e, FieldCommand, rules.CbMissingCommand, "a stdio server", `"command": "npx" (the program that runs the server)`)
		r.ignored(e, FieldURL, "the host launches command for a stdio server and never connects to a url")
	case plan.TransportSSE, plan.TransportWebsocket:
		example := map[string]string{plan.TransportSSE: "https://mcp.example.com/sse", plan.TransportWebsocket: "wss://mcp.example.com/ws"}[e.Transport]
		r.need(e, FieldURL, rules.CbMissingURL, map[string]string{plan.TransportSSE: "an sse server", plan.TransportWebsocket: "a websocket server"}[e.Transport],
			`"url": "`+example+`" (the server's endpoint)`)
		if !e.Loads() {
			return
		}
		r.insecureURL(e)
		why := fmt.Sprintf("the host connects to url for this %s server and launches nothing", e.Transport)
		r.ignored(e, FieldCommand, why)
		r.ignored(e, FieldArgs, why)
		r.ignored(e, FieldEnv, why)
	default:
		what := describe(t)
		if t.Kind == node.Array || t.Kind == node.Object {
			what = node.Describe(t)
		}
		r.skip(e, t.Pos(), rules.CbTransport,
			fmt.Sprintf("%s: transport must be one of stdio, sse, websocket, not %s; the host skips this server", e.Subject(), what),
			`write "stdio" (a local command, also what a missing transport means), "sse" or "websocket" (a url); CraftBot has no other transport`)
	}
}

// RuleURLInsecure is the rule of servers.json's plain-http urls, which
// applies to a CraftBot entry's url as well.
var RuleURLInsecure = rules.RemoteURLInsecure.ID

// Rule ids of the loader's findings about what the host does with a file
// it loads (docs/decisions/0052-craftbot-as-it-runs.md).
var (
	RuleCannotStart    = rules.CbCannotStart.ID
	RuleFieldType      = rules.CbFieldType.ID
	RuleAutoConnectOff = rules.CbAutoConnectOff.ID
	RuleEditDrops      = rules.CbEditDrops.ID
	RuleActionSetCore  = rules.CbActionSetCore.ID
)

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

// need makes the host skip e when field is missing or Python reads it as
// false ("", null, [], {}, 0, false), as the host's loader does.
func (r *reader) need(e *Entry, field string, rule rules.Rule, what, sugg string) {
	v := e.Node.Get(field)
	switch {
	case v == nil || v.Kind == node.Null:
		r.skip(e, e.NamePos, rule, fmt.Sprintf("%s is %s without %s; the host skips it", e.Subject(), what, field), "add "+sugg)
	case !truthy(v):
		r.skip(e, v.Pos(), rule, fmt.Sprintf("%s is %s with %s %s, which the host reads as none; the host skips it", e.Subject(), what, field, describe(v)), "write "+sugg)
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

// checkName reports what the host does with a name it loads: its actions
// are generated Python source with the name in a string literal, and call
// the server by the text of that literal.
func (r *reader) checkName(e *Entry) {
	v := e.NameNode
	switch {
	case v.Kind == node.Array || v.Kind == node.Object:
		r.cannotStart(e, v.Pos(), fmt.Sprintf("the name is %s, which the host cannot look a connection up by (Python: unhashable)", node.Describe(v)),
			`write the name as a string: "name": "…"`)
	case v.Kind == node.Number && math.IsNaN(pyNumber(v.Text)):
		r.cannotStart(e, v.Pos(), "the name is NaN, which is equal to no name, so the host never finds the server to start it",
			`write the name as a string: "name": "…"`)
	case v.Kind != node.String:
		r.report(e, rules.CbNameInvalid, v.Pos(),
			fmt.Sprintf("%s: the name is %s, not a string: the server starts, but each of its actions calls the server %q, a string, which the host does not find, so every call fails", e.Subject(), describe(v), e.Name),
			fmt.Sprintf(`write the name as a string: "name": %s`, jsonString(e.Name)))
	case strings.ContainsAny(v.Text, "\"\n\r\x00"):
		r.report(e, rules.CbNameInvalid, v.Pos(),
			fmt.Sprintf("%s: the name holds a quote, a line break or a NUL: the host writes each action's handler as Python source with the name in a string literal, which then does not compile, so none of the server's tools is registered", e.Subject()),
			"rename the server with letters, digits, _ and -")
	case strings.ContainsRune(v.Text, '\\'):
		r.report(e, rules.CbNameInvalid, v.Pos(),
			fmt.Sprintf("%s: the name holds a backslash: the host writes each action's handler as Python source with the name in a string literal, where the backslash starts an escape, so every action calls a server of another name, which the host does not find", e.Subject()),
			"rename the server with letters, digits, _ and -")
	}
}

// checkStart reports what makes the start of a loaded stdio server fail
// always: the host passes command, args and env to a Python subprocess
// call, which refuses any value that is not a string.
func (r *reader) checkStart(e *Entry) {
	switch e.Transport {
	case plan.TransportSSE, plan.TransportWebsocket:
		v := e.Node.Get(FieldURL)
		switch {
		case v.Kind != node.String:
			r.cannotStart(e, v.Pos(), fmt.Sprintf("url is %s, not a string", node.Describe(v)), `write "url": "https://…"`)
		case strings.TrimSpace(v.Text) == "":
			r.cannotStart(e, v.Pos(), "url is blank", `write "url": "https://…"`)
		}
		return
	}
	n := e.Node
	nul := "a NUL character, which no process can be given"
	if v := n.Get(FieldEnv); v != nil {
		switch {
		case v.Kind == node.Object:
			for _, m := range v.Members {
				switch {
				case m.Value.Kind != node.String:
					r.cannotStart(e, m.Value.Pos(), fmt.Sprintf("env %s is %s, not a string", m.Key, node.Describe(m.Value)),
						fmt.Sprintf(`write the value as a string: "%s": "…"`, m.Key))
				case strings.ContainsRune(m.Value.Text, 0):
					r.cannotStart(e, m.Value.Pos(), fmt.Sprintf("env %s holds %s", m.Key, nul), "remove the NUL character")
				}
				if strings.ContainsAny(m.Key, "=\x00") {
					r.cannotStart(e, m.KeyPos(), fmt.Sprintf("the env name %q holds = or NUL, which no variable name can", m.Key), "rename the variable")
				}
			}
		case !truthy(v) && (v.Kind == node.Array || v.Kind == node.String):
			// Python updates a dict with "" or [] and adds nothing.
		default:
			r.cannotStart(e, v.Pos(), fmt.Sprintf("env is %s, not an object", node.Describe(v)), `write "env": {"NAME": "value"}`)
		}
	}
	if v := n.Get(FieldArgs); v != nil {
		switch v.Kind {
		case node.Array:
			for i, a := range v.Elems {
				switch {
				case a.Kind != node.String:
					r.cannotStart(e, a.Pos(), fmt.Sprintf("args[%d] is %s, not a string", i, node.Describe(a)), "write every argument as a string")
				case strings.ContainsRune(a.Text, 0):
					r.cannotStart(e, a.Pos(), fmt.Sprintf("args[%d] holds %s", i, nul), "remove the NUL character")
				}
			}
		case node.String, node.Object:
			// read as characters or keys: checkReadings says so.
			for _, a := range e.Args {
				if strings.ContainsRune(a, 0) {
					r.cannotStart(e, v.Pos(), "args holds "+nul, "remove the NUL character")
					break
				}
			}
		default:
			r.cannotStart(e, v.Pos(), fmt.Sprintf("args is %s, not a list", node.Describe(v)), `write "args": ["…"]`)
		}
	}
	v := n.Get(FieldCommand)
	switch {
	case v.Kind == node.Array:
		r.cannotStart(e, v.Pos(), "command is a list, what the host's /mcp add writes (the host runs command as one program name)",
			commandSuggestion(v))
	case v.Kind != node.String:
		r.cannotStart(e, v.Pos(), fmt.Sprintf("command is %s, not a string", describe(v)), `write "command": "npx" (the program that runs the server)`)
	case strings.TrimSpace(v.Text) == "":
		r.cannotStart(e, v.Pos(), "command is blank, and no program has that name", `write "command": "npx" (the program that runs the server)`)
	case strings.ContainsRune(v.Text, 0):
		r.cannotStart(e, v.Pos(), "command holds "+nul, "remove the NUL character")
	}
}

// commandSuggestion says how to write a list command as command and args.
func commandSuggestion(v *node.Node) string {
	if len(v.Elems) > 0 && v.Elems[0].Kind == node.String {
		rest := make([]string, 0, len(v.Elems)-1)
		for _, a := range v.Elems[1:] {
			if a.Kind != node.String {
				return `write the program as "command": "…" and its arguments as "args": [ … ]`
			}
			rest = append(rest, jsonString(a.Text))
		}
		return fmt.Sprintf(`write "command": %s, "args": [%s]`, jsonString(v.Elems[0].Text), strings.Join(rest, ", "))
	}
	return `write the program as "command": "…" and its arguments as "args": [ … ]`
}

// checkReadings reports the values of a loaded entry that the host reads
// its own way, since it checks no type.
func (r *reader) checkReadings(e *Entry) {
	n := e.Node
	if m := n.Member(FieldEnabled); m != nil {
		r.boolField(m, e.Subject(), e.Enabled, e.Enabled, "the server starts", "the server does not start")
	}
	if v := n.Get(FieldArgs); v != nil && e.Transport == plan.TransportStdio && (v.Kind == node.String && v.Text != "" || v.Kind == node.Object && len(v.Members) > 0) {
		what := "each of its characters"
		if v.Kind == node.Object {
			what = "each of its keys"
		}
		shown := make([]string, 0, min(len(e.Args), 6))
		for _, a := range e.Args[:min(len(e.Args), 6)] {
			shown = append(shown, jsonString(a))
		}
		if len(e.Args) > 6 {
			shown = append(shown, "…")
		}
		r.report(e, rules.CbFieldType, v.Pos(),
			fmt.Sprintf("%s: args is %s, not a list: the host passes %s as an argument: %s", e.Subject(), node.Describe(v), what, strings.Join(shown, ", ")),
			`write each argument as an element of a list: "args": ["-y", "…"]`)
	}
	if v := n.Get(FieldDescription); v != nil && v.Kind != node.String && v.Kind != node.Null {
		r.add(rules.CbFieldType.At(v.Pos(),
			fmt.Sprintf("%s: description is %s, not a string: the host describes the server's tools with %q", e.Subject(), node.Describe(v), e.Description),
			`write "description": "…"`))
	}
	if v := n.Get(FieldActionSet); v != nil {
		switch {
		case v.Kind == node.String && v.Text == "core":
			r.add(rules.CbActionSetCore.At(v.Pos(),
				fmt.Sprintf("%s: action_set_name is core, the set the host includes in every task: the server's tools join every task's prompt", e.Subject()),
				fmt.Sprintf(`remove action_set_name (the set is then mcp_%s), unless every task should see these tools`, e.Name)))
		case truthy(v) && v.Kind != node.String:
			r.add(rules.CbFieldType.At(v.Pos(),
				fmt.Sprintf("%s: action_set_name is %s, not a string: no task selects the set by name", e.Subject(), node.Describe(v)),
				`write "action_set_name": "…", or remove it (the set is then mcp_<name>)`))
		}
	}
}

// boolField reports a boolean field written as another value, which the
// host reads by Python truthiness (as): an error when the text says the
// opposite (the string "false" reads true), else a warning.
func (r *reader) boolField(m *node.Member, subject string, as, enabled bool, ifTrue, ifFalse string) {
	v := m.Value
	if v.Kind == node.Bool {
		return
	}
	means := map[bool]string{true: "true: " + ifTrue, false: "false: " + ifFalse}[as]
	msg := fmt.Sprintf("%s: %s is %s, not true or false; the host reads it as %s", subject, m.Key, describe(v), means)
	sugg := fmt.Sprintf(`write "%s": %t`, m.Key, as)
	says, known := saysBool(v)
	if known && says != as {
		msg += fmt.Sprintf(", although the text says %t", says)
		sugg = fmt.Sprintf(`write "%s": %t`, m.Key, says)
		r.add(rules.CbFieldType.ErrorAt(v.Pos(), msg, sugg))
		return
	}
	r.add(rules.CbFieldType.At(v.Pos(), msg, sugg))
}

// saysBool is what a string or number's text says as a boolean ("false",
// "no", "off", "0", "disabled" say false); known is false when the text
// says neither.
func saysBool(v *node.Node) (says, known bool) {
	if v.Kind != node.String {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(v.Text)) {
	case "false", "no", "off", "0", "disabled", "n", "f":
		return false, true
	case "true", "yes", "on", "1", "enabled", "y", "t":
		return true, true
	}
	return false, false
}

// checkDuplicates reports each later loaded entry of a name: the host
// launches the first entry of the name for every enabled one.
func (r *reader) checkDuplicates() {
	for _, e := range r.cfg.Entries {
		w := e.Winner
		if w == nil {
			continue
		}
		var msg string
		switch {
		case e.Enabled && w.Enabled:
			msg = fmt.Sprintf("server %q is defined again, and both are enabled: the host starts the first definition (%s) twice, once for each, and keeps one connection (the other process is orphaned); this entry's own command never runs", e.Name, w.NamePos)
		case e.Enabled:
			msg = fmt.Sprintf("server %q is defined again: the host starts this enabled entry by its name, which finds the first definition (%s), so that disabled entry's command runs and this one's never does; /mcp disable and remove act on the first only", e.Name, w.NamePos)
		default:
			msg = fmt.Sprintf("server %q is defined again: the host loads this disabled entry but acts on the first definition (%s) for the name (/mcp enable, disable, remove); this one never runs", e.Name, w.NamePos)
		}
		r.report(e, rules.CbDuplicateName, e.NamePos, msg, "rename this server, or remove the definition you do not want")
	}
}

// checkLoaded checks an entry the host loads: empty credentials and launch
// paths that do not exist on the target OS.
func (r *reader) checkLoaded(e *Entry) {
	if e.Transport != plan.TransportStdio {
		return
	}
	if e.starts {
		for _, v := range e.Env {
			if strings.TrimSpace(v.Value) == "" {
				r.add(rules.CbEnvEmpty.At(v.Node.Pos(),
					fmt.Sprintf("server %q is enabled but its env %s is empty: the server starts without it and its calls fail (catalog entries ship credential keys empty)", e.Name, v.Key),
					fmt.Sprintf("fill it in: mcpc config env %s %s (the value is read without echo), or disable the server", e.Name, v.Key)))
			}
		}
	}
	if r.opts.TargetOS == "" || e.CannotStart != "" {
		return
	}
	where, problem := launchProblem(r.opts.TargetOS, e)
	if problem == "" {
		return
	}
	e.OSProblem = problem
	report, verb := rules.CbTargetOS.At, "will not start"
	if !e.starts {
		report, verb = rules.CbTargetOS.InfoAt, "would not start if enabled"
	}
	r.add(report(where,
		fmt.Sprintf("server %q %s on %s: %s", e.Name, verb, r.opts.TargetOS, problem),
		"keep it disabled on "+r.opts.TargetOS+", or use a launch command that exists there"))
}

// argPos is the position of args[i] of e (of args itself when the host
// reads it from a string or an object).
func argPos(e *Entry, i int) diag.Pos {
	if v := e.Node.Get(FieldArgs); v != nil {
		if v.Kind != node.Array {
			return v.Pos()
		}
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
