package volcanic

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// loadSettings reads <agentDir>/settings.json, before anything is bound, so
// that the variables it references are known secrets from the start. A
// missing file means no servers.
func (c *compiler) loadSettings() error {
	dir := c.agentDir()
	c.res.AgentDir = dir
	path := filepath.Join(dir, "settings.json")
	data, err := c.read(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return &compile.InputError{Path: path, Err: err}
	}
	c.settingsPath, c.settingsData = path, data
	c.res.Files.Add(path, data)
	c.texts = append(c.texts, data)
	return nil
}

// readSettings reads mcpServers of settings.json, in file order. The trees
// of the servers are not built yet: each entry holds a leaf with the
// position and span of its object, which settleSettings builds from src
// (nil when the tree is whole).
func (c *compiler) readSettings() ([]*compile.Entry, *node.Source, error) {
	if c.settingsPath == "" {
		return nil, nil, nil
	}
	path, data := c.settingsPath, c.settingsData
	root, src, d := node.ParseJSONShallow(path, data, false, []string{"mcpServers"}, false, node.DotNetNesting)
	if d != nil {
		c.ds = append(c.ds, *d)
		return nil, nil, nil
	}
	if root.Kind != node.Object {
		c.ds = append(c.ds, rules.TypeMismatch.At(root.Pos(), "settings.json must hold a JSON object, not "+node.Describe(root), ""))
		return nil, nil, nil
	}
	c.dropDuplicateKeys(root, "") // a server's own keys: when it is built
	c.check(checkJob{def: schema.Settings, data: shallow(root), subject: "settings.json", naming: settingsNaming})
	servers := root.Get("mcpServers")
	if servers == nil {
		// Other top-level keys belong to others, but one that looks like
		// mcpServers is most likely a typo that loses every server.
		for _, m := range root.Members {
			if m.Key != "mcpServers" && looksLike(m.Key, "mcpServers") {
				c.ds = append(c.ds, rules.UnknownField.At(m.KeyPos(),
					fmt.Sprintf("settings.json: %q is ignored; the extension reads its servers from mcpServers only", m.Key),
					`did you mean "mcpServers"?`))
			}
		}
	}
	if servers == nil || servers.Kind != node.Object {
		return nil, nil, nil
	}
	var entries []*compile.Entry
	for _, m := range servers.Members {
		if m.Value.Kind != node.Object {
			continue // the #Settings check reports it
		}
		e := compile.NewEntry(m.Key, "settings", m.KeyPos(), plan.Origin{Source: "settings", Path: path, Line: m.KeyPos().Line, Column: m.KeyPos().Column}, m.Value)
		e.Naming = settingsNaming
		entries = append(entries, e)
	}
	return entries, src, nil
}

// settleSettings builds the tree of each entry of settings.json from src
// (its keys that appear twice dropped, as for the rest of the file), then
// settles it: the trees of every server of a large settings.json are
// never whole at once.
func (c *compiler) settleSettings(entries []*compile.Entry, src *node.Source) {
	for _, e := range entries {
		if src != nil {
			tree := src.Build(e.Node().Start)
			e.SetNode(tree)
			c.dropDuplicateKeys(tree, e.Name)
		}
		c.settle(e, checkJob{def: schema.Server, data: e.Node(), subject: fmt.Sprintf("server %q", e.Name), naming: settingsNaming})
	}
}

// shallow keeps the top level of settings.json and mcpServers' keys, so that
// the #Settings check does not walk server entries (checked on their own).
func shallow(root *node.Node) *node.Node {
	out := &node.Node{Kind: node.Object, Loc: root.Loc}
	for _, m := range root.Members {
		if m.Key == "mcpServers" && m.Value.Kind == node.Object {
			inner := &node.Node{Kind: node.Object, Loc: m.Value.Loc}
			for _, s := range m.Value.Members {
				v := s.Value
				if v.Kind == node.Object {
					v = &node.Node{Kind: node.Object, Loc: v.Loc}
				}
				inner.Members = append(inner.Members, node.Member{Key: s.Key, KeyLoc: s.KeyLoc, Value: v})
			}
			m.Value = inner
		}
		out.Members = append(out.Members, m)
	}
	return out
}

func (c *compiler) agentDir() string { return agentDir(c.opts, c.res.Env) }

// agentDir is the agent dir the host reads: --agent-dir, else
// $VOLCANIC_AGENT_DIR of the host environment, else ~/.volcanic/agent.
func agentDir(opts compile.Options, env *compile.HostEnv) string {
	if opts.AgentDir != "" {
		return opts.AgentDir
	}
	if v, ok := env.Lookup("VOLCANIC_AGENT_DIR"); ok && v.Value != "" {
		return v.Value
	}
	home := opts.HomeDir
	if home == "" {
		home = env.Value("HOME")
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".volcanic", "agent")
}

// dropDuplicateKeys reports every key that an object of settings.json
// repeats and keeps only its first occurrence, so that later checks see one
// value per key.
func (c *compiler) dropDuplicateKeys(n *node.Node, where string) {
	switch n.Kind {
	case node.Array:
		for _, e := range n.Elems {
			c.dropDuplicateKeys(e, where)
		}
	case node.Object:
		// A map of the keys seen only for a large object: most objects
		// have a handful of keys, and a map per object was most of what
		// this check cost.
		var seen map[string]diag.Pos
		if len(n.Members) > 16 {
			seen = make(map[string]diag.Pos, len(n.Members))
		}
		kept := n.Members[:0]
		for _, m := range n.Members {
			if first, dup := firstKey(seen, kept, m.Key); dup {
				what := fmt.Sprintf("the key %q", m.Key)
				if where != "" {
					what += " of " + where
				}
				c.ds = append(c.ds, rules.DuplicateKey.At(m.KeyPos(),
					fmt.Sprintf("%s appears twice in this object; this one is ignored", what),
					"remove one of them; the first is at "+first.String()))
				continue
			}
			if seen != nil {
				seen[m.Key] = m.KeyPos()
			}
			kept = append(kept, m)
			c.dropDuplicateKeys(m.Value, m.Key)
		}
		n.Members = kept
	}
}

// firstKey finds key among the members kept so far (in seen, when there is
// a map) and returns where it stands.
func firstKey(seen map[string]diag.Pos, kept []node.Member, key string) (diag.Pos, bool) {
	if seen != nil {
		pos, ok := seen[key]
		return pos, ok
	}
	for i := range kept {
		if kept[i].Key == key {
			return kept[i].KeyPos(), true
		}
	}
	return diag.Pos{}, false
}

// looksLike reports whether key is a plausible misspelling of want.
func looksLike(key, want string) bool {
	if strings.EqualFold(key, want) {
		return true
	}
	lk, lw := strings.ToLower(key), strings.ToLower(want)
	if d := utf8.RuneCountInString(lk) - utf8.RuneCountInString(lw); d > 2 || d < -2 {
		return false // more than 2 edits apart, without comparing a long key
	}
	return levenshtein.ComputeDistance(lk, lw) <= 2
}
