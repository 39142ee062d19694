package craftbot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
)

// Edits are the verbs of CraftBot's /mcp command that change the file
// (mcpc config, and later the Settings page of mcpc ui). Apply takes the
// file's bytes and an edit and returns the new bytes: only the edited entry
// changes (and, for an entry added or removed, the separator beside it);
// every other byte stays, a byte order mark included. The result is checked
// with Check before it is returned, and refused when the host would not
// load it as asked.

// Op is an edit's verb.
type Op string

// The verbs of /mcp that change the file.
const (
	OpAdd     Op = "add"
	OpAddJSON Op = "add-json"
	OpRemove  Op = "remove"
	OpEnable  Op = "enable"
	OpDisable Op = "disable"
	OpEnv     Op = "env"
)

// Edit is one change to mcp_config.json.
type Edit struct {
	Op   Op
	Name string
	// Command is the launch command of OpAdd followed by its arguments.
	Command []string
	// JSON is the entry of OpAddJSON, a JSON object; a name in it must be
	// Name (without one, Name is written first).
	JSON string
	// Key and Value are the variable OpEnv sets in the entry's env. Value
	// may be a secret: it appears in no message of this package.
	Key, Value string
}

// ArgFile names the JSON of an add-json edit in diagnostics about it.
const ArgFile = "<add-json JSON>"

// Change is the outcome of Apply.
type Change struct {
	// Data is the file after the edit: the content to write, or, when the
	// edit is refused, what it would have been (to show excerpts from). For
	// a refused add-json whose JSON is unusable it is that JSON.
	Data []byte
	// File names Data in Diagnostics: the file's path, or for a refused
	// edit the path followed by AfterEdit (or ArgFile).
	File string
	// Refused says why the edit is refused ("" when it is not); nothing
	// must be written then. It holds no value of the file or the edit.
	Refused string
	// Diagnostics are, for a refused edit, the problems that refuse it; for
	// an accepted one, what Check reports about the edited entry in the new
	// file (an empty credential, a target-OS mark).
	Diagnostics []diag.Diagnostic
	// Unchanged: the file already says what the edit asks (enable of an
	// enabled server); Data is the input.
	Unchanged bool
	// Entry is the edited entry as the host loads it from Data (nil for a
	// removal and for a refused edit without a file to check).
	Entry *Entry
	// Removed counts the entries a removal took out.
	Removed int
}

// AfterEdit follows the path in the file name of diagnostics about the
// content a refused edit would have written.
const AfterEdit = " (after the edit)"

// EditError is an edit that cannot be made at all: no server of that name,
// a variable name no process can have, no command. It holds no value.
type EditError struct{ Msg string }

func (e *EditError) Error() string { return e.Msg }

// Apply makes edit ed on data, the content of file, and checks the result.
// A refusal is a Change with Refused set; an *EditError is an edit that
// names something the file does not have or asks the impossible; another
// error means the embedded schemas do not compile.
func Apply(file string, data []byte, ed Edit, opts Options) (*Change, error) {
	body := Text(data)
	mark := data[:len(data)-len(body)]
	cfg, ds, err := Check(file, data, opts)
	if err != nil {
		return nil, err
	}
	if cfg.LoadsNothing != "" {
		return &Change{Data: data, File: file, Diagnostics: diag.Errors(ds),
			Refused: file + " has errors, so no server of it loads and mcpc does not edit it: fix them first"}, nil
	}
	if ed.Name == "" {
		return nil, &EditError{Msg: "the edit needs a server NAME"}
	}
	// The file is UTF-8: text that is not would be written as U+FFFD,
	// another name or value than the one asked for.
	for _, s := range append([]string{ed.Name, ed.Key, ed.Value}, ed.Command...) {
		if !utf8.ValidString(s) {
			return nil, &EditError{Msg: "the edit holds text that is not valid UTF-8, which mcp_config.json cannot hold"}
		}
	}
	e := &editor{file: file, body: body, cfg: cfg, ix: node.NewLineIndex(file, body)}
	var target *Entry
	switch ed.Op {
	case OpAdd, OpAddJSON:
		var refusal *Change
		if refusal, err = e.add(ed); refusal != nil || err != nil {
			return refusal, err
		}
	case OpRemove:
		if err = e.remove(ed.Name); err != nil {
			return nil, err
		}
	case OpEnable:
		if target, err = e.find(ed.Name); err == nil {
			err = e.setEnabled(target, true)
		}
	case OpDisable:
		if target, err = e.find(ed.Name); err == nil {
			e.disableAll(target)
		}
	case OpEnv:
		if target, err = e.find(ed.Name); err == nil {
			var refusal *Change
			if refusal, err = e.setEnv(target, ed.Key, ed.Value); refusal != nil {
				refusal.Data = data
				return refusal, nil
			}
		}
	default:
		err = &EditError{Msg: fmt.Sprintf("unknown edit %q", ed.Op)}
	}
	if err != nil {
		return nil, err
	}
	newData := append(append([]byte(nil), mark...), e.out...)
	if bytes.Equal(newData, data) {
		if target != nil && !target.Loads() && ed.Op != OpDisable {
			// enable of a skipped entry that says enabled already.
			return &Change{Data: data, File: file, Diagnostics: entryDiagnostics(e.ix, target.Node, ds),
				Refused: fmt.Sprintf("the host skips %s", target.Subject())}, nil
		}
		return &Change{Data: data, File: file, Unchanged: true, Entry: target}, nil
	}
	return e.verify(ed, target, ds, newData, opts)
}

// editor makes one edit: out is body with the edit made.
type editor struct {
	file string
	body []byte
	cfg  *Config
	ix   *node.LineIndex
	out  []byte
	// added is the index of an added entry in the new file.
	added int
	// removed counts the entries a removal took out.
	removed int
}

// replace sets out to body with [start, end) replaced by text.
func (e *editor) replace(start, end int, text string) {
	var b bytes.Buffer
	b.Grow(len(e.body) + len(text))
	b.Write(e.body[:start])
	b.WriteString(text)
	b.Write(e.body[end:])
	e.out = b.Bytes()
}

// find returns the entry name: the one the host loads, else the first of
// that name (which the host skips).
func (e *editor) find(name string) (*Entry, error) {
	if t := e.cfg.Lookup(name); t != nil {
		return t, nil
	}
	for _, t := range e.cfg.Entries {
		if t.NameNode != nil && t.Name == name {
			return t, nil
		}
	}
	return nil, e.noServer(name)
}

func (e *editor) noServer(name string) error {
	var names []string
	for _, t := range e.cfg.Entries {
		if t.NameNode != nil {
			names = append(names, t.Name)
		}
	}
	known := "it has none"
	if len(names) > 0 {
		known = "servers: " + strings.Join(names, ", ")
	}
	return &EditError{Msg: fmt.Sprintf("no server %q in %s (%s)", name, e.file, known)}
}

// verify checks the new file and refuses the edit when the host would load
// nothing from it, when the edited entry would be skipped or would not
// start (unless it is being disabled), or when the edit brings a new
// warning about the entry other than an empty credential, a target-OS
// mark, a clear-text url or the core action set (an unknown field, a field
// the transport ignores, a repeated key): the host would not do what the
// edit asks. Errors the file had already elsewhere do not refuse an edit:
// disabling or removing the entry they are about is how they are fixed.
func (e *editor) verify(ed Edit, target *Entry, before []diag.Diagnostic, newData []byte, opts Options) (*Change, error) {
	body := e.out
	cfg, ds, err := Check(e.file, newData, opts)
	if err != nil {
		return nil, err
	}
	ch := &Change{Data: newData, File: e.file}
	var edited *Entry
	switch ed.Op {
	case OpAdd, OpAddJSON:
		edited = cfg.Entries[e.added]
	case OpEnable, OpDisable, OpEnv:
		edited = cfg.Entries[target.Index]
	}
	var mine, old []diag.Diagnostic
	if edited != nil {
		mine = entryDiagnostics(node.NewLineIndex(e.file, body), edited.Node, ds)
		if target != nil {
			old = entryDiagnostics(e.ix, target.Node, before)
		}
	}
	freshErrors := fresh(old, diag.Errors(mine), func(diag.Diagnostic) bool { return true })
	freshWarnings := fresh(old, mine, func(d diag.Diagnostic) bool { return d.Severity != diag.Error && !unlessNew[d.Rule] })
	switch {
	case cfg.LoadsNothing != "":
		ch.Refused, ch.Diagnostics = "the edit would leave "+e.file+" with errors", diag.Errors(ds)
	case edited != nil && !edited.Loads() && ed.Op != OpDisable:
		ch.Refused, ch.Diagnostics = fmt.Sprintf("the host would skip %s", edited.Subject()), mine
	case len(freshErrors) > 0 && ed.Op != OpDisable:
		ch.Refused, ch.Diagnostics = fmt.Sprintf("the host would not run %s as the edit asks", edited.Subject()), freshErrors
	case len(freshWarnings) > 0 && ed.Op != OpDisable:
		ch.Refused, ch.Diagnostics = fmt.Sprintf("the host would ignore part of %s", edited.Subject()), freshWarnings
	default:
		ch.Diagnostics, ch.Entry = mine, edited
		ch.Removed = e.removed
		return ch, nil
	}
	ch.File = e.file + AfterEdit
	// Positions quoted in messages are in the new content too.
	quoted := strings.NewReplacer(e.file+":", ch.File+":")
	for i := range ch.Diagnostics {
		d := &ch.Diagnostics[i]
		if d.File == e.file {
			d.File = ch.File
		}
		d.Message, d.Suggestion = quoted.Replace(d.Message), quoted.Replace(d.Suggestion)
	}
	return ch, nil
}

// entryDiagnostics returns the diagnostics of ds (sorted) that stand inside
// el, an element of mcp_servers.
func entryDiagnostics(ix *node.LineIndex, el *node.Node, ds []diag.Diagnostic) []diag.Diagnostic {
	from, to := ix.Pos(int(el.Start)), ix.Pos(int(el.End))
	before := func(a, b diag.Diagnostic) bool {
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	}
	lo := diag.Diagnostic{Line: from.Line, Column: from.Column}
	hi := diag.Diagnostic{Line: to.Line, Column: to.Column}
	i := sort.Search(len(ds), func(i int) bool { return !before(ds[i], lo) })
	var out []diag.Diagnostic
	for ; i < len(ds) && before(ds[i], hi); i++ {
		out = append(out, ds[i])
	}
	return out
}

// unlessNew are the warnings an edit may bring: they describe the machine
// (target OS), the credentials still to fill in, a url the operator chose
// to reach in clear text (a LAN server), and an action set chosen for
// every task, not a mistake in the entry.
var unlessNew = map[string]bool{RuleEnvEmpty: true, RuleTargetOS: true, RuleURLInsecure: true, RuleActionSetCore: true}

// fresh returns the diagnostics of after that before does not have (by
// severity, rule and message) and that keep accepts.
func fresh(before, after []diag.Diagnostic, keep func(diag.Diagnostic) bool) []diag.Diagnostic {
	had := map[string]int{}
	key := func(d diag.Diagnostic) string { return string(d.Severity) + "\x00" + d.Rule + "\x00" + d.Message }
	for _, d := range before {
		had[key(d)]++
	}
	var out []diag.Diagnostic
	for _, d := range after {
		k := key(d)
		if had[k] > 0 {
			had[k]--
			continue
		}
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

// jsonString writes s as a JSON string, without escaping <, > and & (the
// file is not HTML).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
