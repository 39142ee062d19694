// Package toollock writes and checks the tool lock: for each server its
// launch identity, for each tool its name, its agent-visible name and the
// sha256 of its description and of its canonical input schema. A changed
// description is how a compromised server smuggles new instructions to the
// agent, so `mcpc tools --lock FILE --check` reports every added, removed or
// changed tool, positioned in the lock file.
//
// It serves mcpc's own commands, not embedders: its API may change
// (docs/decisions/0002-package-layout-and-import-direction.md).
package toollock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// Version is the lock format this mcpc writes and reads.
const Version = 1

// Lock is the lock file. The fields of its types are declared in sorted
// JSON-key order, so encoding/json writes it canonically.
type Lock struct {
	LockVersion int      `json:"lockVersion"`
	Servers     []Server `json:"servers"`
}

// Server is one server's launch identity and tools.
type Server struct {
	Args          []string `json:"args"`
	Command       string   `json:"command"`
	Name          string   `json:"name"`
	Package       string   `json:"package,omitempty"`
	ServerName    string   `json:"serverName"`
	ServerVersion string   `json:"serverVersion"`
	Tools         []Tool   `json:"tools"`
	// URL (a craftbot sse or websocket server, without its query) is where
	// the server was connected to; absent for a launched server.
	URL string `json:"url,omitempty"`
}

// Tool is one tool as the server listed it.
type Tool struct {
	DescriptionSha256 string  `json:"descriptionSha256"`
	InputSchemaSha256 string  `json:"inputSchemaSha256"`
	Name              string  `json:"name"`
	VisibleName       *string `json:"visibleName"`
}

// Observed is what discovery saw of one server.
type Observed struct {
	Server        string
	Command       string // as in the plan (templates unresolved)
	Args          []string
	ServerName    string
	ServerVersion string
	Tools         []ObservedTool
	// URL is the endpoint of a server connected to, without its query.
	URL string
}

// ObservedTool is one listed tool; VisibleName is "" when it is not
// registered. For a craftbot plan, Description and InputSchema are what
// the agent gets: the action's description and the input map CraftBot's
// adapter builds (the server's own schema for a tool it does not
// register), so that the lock hashes those.
type ObservedTool struct {
	Name        string
	VisibleName string
	Description string
	InputSchema any
}

// Build makes the lock of what discovery saw, servers in the given order.
func Build(observed []Observed) (*Lock, error) {
	l := &Lock{LockVersion: Version, Servers: []Server{}}
	for _, o := range observed {
		s := Server{Args: append([]string{}, o.Args...), Command: o.Command, Name: o.Server,
			Package: PackageOf(o.Command, o.Args), ServerName: o.ServerName, ServerVersion: o.ServerVersion, Tools: []Tool{}, URL: o.URL}
		for _, t := range o.Tools {
			schemaSum, err := SchemaSum(t.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("server %s, tool %s: input schema: %w", o.Server, t.Name, err)
			}
			var visible *string
			if t.VisibleName != "" {
				v := t.VisibleName
				visible = &v
			}
			s.Tools = append(s.Tools, Tool{DescriptionSha256: Sum(t.Description), InputSchemaSha256: schemaSum, Name: t.Name, VisibleName: visible})
		}
		l.Servers = append(l.Servers, s)
	}
	return l, nil
}

// Sum is the hex sha256 of s.
func Sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// SchemaSum is the sha256 of the canonical JSON (sorted keys, no
// insignificant space) of an input schema.
func SchemaSum(schema any) (string, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return Sum(strings.TrimSuffix(buf.String(), "\n")), nil
}

// PackageOf names the package a launcher command runs, with its version
// when the arguments pin one: the first non-flag argument of npx, bunx,
// pnpx and uvx (and of `pipx run`). "" when there is none.
func PackageOf(command string, args []string) string {
	base := filepath.Base(command)
	rest := args
	switch base {
	case "npx", "bunx", "pnpx", "uvx":
	case "pipx":
		if len(rest) == 0 || rest[0] != "run" {
			return ""
		}
		rest = rest[1:]
	default:
		return ""
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// Encode writes the lock canonically (two-space indent, trailing newline).
func Encode(l *Lock) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// File is a lock read from disk, with the positions of its values.
type File struct {
	Path string
	Lock *Lock
	root *node.Node
}

// Read parses a lock file. An invalid one comes back as positioned
// diagnostics (json-syntax or lock-invalid) and a nil File.
func Read(path string, data []byte, v *schema.Validator) (*File, []diag.Diagnostic) {
	root, d := node.ParseJSON(path, data, false)
	if d != nil {
		return nil, []diag.Diagnostic{*d}
	}
	if m := root.Member("lockVersion"); m != nil && m.Value.Kind == node.Number && m.Value.Text != fmt.Sprint(Version) {
		return nil, []diag.Diagnostic{rules.LockInvalid.At(m.Value.Pos(),
			fmt.Sprintf("lockVersion %s: this mcpc reads lockVersion %d", m.Value.Text, Version), "write the lock again: mcpc tools --lock FILE")}
	}
	ds := v.Check(schema.LockFile, root, "lock", nil)
	if len(ds) > 0 {
		for i := range ds {
			ds[i] = rules.LockInvalid.Claim(ds[i])
		}
		diag.Sort(ds)
		return nil, ds
	}
	var l Lock
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, []diag.Diagnostic{rules.LockInvalid.At(root.Pos(), "the lock does not decode: "+err.Error(), "")}
	}
	seen := map[string]bool{}
	for i, s := range l.Servers {
		if seen[s.Name] {
			_, n := root.Lookup([]string{"servers", fmt.Sprint(i), "name"})
			return nil, []diag.Diagnostic{rules.LockInvalid.At(n.Pos(), fmt.Sprintf("server %q is locked twice", s.Name), "write the lock again: mcpc tools --lock FILE")}
		}
		seen[s.Name] = true
	}
	return &File{Path: path, Lock: &l, root: root}, nil
}

// pos is the position of a path in the lock file (its parent's when the
// path is missing).
func (f *File) pos(path ...any) diag.Pos {
	p := make([]string, len(path))
	for i, x := range path {
		p[i] = fmt.Sprint(x)
	}
	for len(p) > 0 {
		if _, n := f.root.Lookup(p); n != nil {
			return n.Pos()
		}
		p = p[:len(p)-1]
	}
	return f.root.Pos()
}

// Check compares the lock with a new lock of what discovery saw now. Servers
// in skip (failed to start) are not compared: their tools are unknown.
func (f *File) Check(now *Lock, skip map[string]bool) []diag.Diagnostic {
	var ds []diag.Diagnostic
	report := func(pos diag.Pos, format string, args ...any) {
		ds = append(ds, rules.ToolChanged.At(pos, fmt.Sprintf(format, args...),
			"review the change; if it is expected, write the lock again: mcpc tools --lock "+f.Path))
	}
	old := map[string]int{}
	for i, s := range f.Lock.Servers {
		old[s.Name] = i
	}
	cur := map[string]bool{}
	for _, s := range now.Servers {
		cur[s.Name] = true
		if skip[s.Name] {
			continue
		}
		i, ok := old[s.Name]
		if !ok {
			for _, t := range s.Tools {
				report(f.pos("servers"), "server %q, tool %q is new: the lock has no server %q", s.Name, t.Name, s.Name)
			}
			if len(s.Tools) == 0 {
				report(f.pos("servers"), "server %q is new: the lock does not have it", s.Name)
			}
			continue
		}
		ls := f.Lock.Servers[i]
		if ls.Command != s.Command || strings.Join(ls.Args, "\x00") != strings.Join(s.Args, "\x00") {
			report(f.pos("servers", i, "command"), "server %q: the launch command changed from %s to %s", s.Name, cmdline(ls.Command, ls.Args), cmdline(s.Command, s.Args))
		}
		if ls.URL != s.URL {
			report(f.pos("servers", i, "name"), "server %q: the url changed from %s to %s", s.Name, shownURL(ls.URL), shownURL(s.URL))
		}
		if ls.ServerName != s.ServerName || ls.ServerVersion != s.ServerVersion {
			report(f.pos("servers", i, "serverVersion"), "server %q: the server now says it is %s %s, the lock has %s %s", s.Name, s.ServerName, s.ServerVersion, ls.ServerName, ls.ServerVersion)
		}
		oldTools := map[string]int{}
		for j, t := range ls.Tools {
			oldTools[t.Name] = j
		}
		nowTools := map[string]bool{}
		for _, t := range s.Tools {
			nowTools[t.Name] = true
			j, ok := oldTools[t.Name]
			if !ok {
				report(f.pos("servers", i, "tools"), "server %q: tool %q is new", s.Name, t.Name)
				continue
			}
			lt := ls.Tools[j]
			if lt.DescriptionSha256 != t.DescriptionSha256 {
				report(f.pos("servers", i, "tools", j, "descriptionSha256"), "server %q: the description of tool %q changed (a changed description can carry new instructions to the agent)", s.Name, t.Name)
			}
			if lt.InputSchemaSha256 != t.InputSchemaSha256 {
				report(f.pos("servers", i, "tools", j, "inputSchemaSha256"), "server %q: the input schema of tool %q changed", s.Name, t.Name)
			}
			if str(lt.VisibleName) != str(t.VisibleName) {
				report(f.pos("servers", i, "tools", j, "visibleName"), "server %q: tool %q is now visible as %s, the lock has %s", s.Name, t.Name, shown(t.VisibleName), shown(lt.VisibleName))
			}
		}
		for j, t := range ls.Tools {
			if !nowTools[t.Name] {
				report(f.pos("servers", i, "tools", j, "name"), "server %q: tool %q was removed", s.Name, t.Name)
			}
		}
	}
	for i, s := range f.Lock.Servers {
		if !cur[s.Name] && !skip[s.Name] {
			report(f.pos("servers", i, "name"), "server %q is locked but no longer in the plan (or disabled): its %d tools are gone", s.Name, len(s.Tools))
		}
	}
	diag.Sort(ds)
	return ds
}

func shownURL(u string) string {
	if u == "" {
		return "none (a launched server)"
	}
	return u
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func shown(p *string) string {
	if p == nil {
		return "not registered"
	}
	return fmt.Sprintf("%q", *p)
}

func cmdline(c string, args []string) string {
	return strings.TrimSpace(fmt.Sprintf("%q %s", c, strings.Join(quoteAll(args), " ")))
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = fmt.Sprintf("%q", a)
	}
	return out
}

// ObservedFrom makes the Observed of a plan server.
func ObservedFrom(s *plan.Server, serverName, serverVersion string, tools []ObservedTool) Observed {
	return Observed{Server: s.Name, Command: s.Command, Args: s.Args, ServerName: serverName, ServerVersion: serverVersion, Tools: tools}
}
