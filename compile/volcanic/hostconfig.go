package volcanic

import (
	"fmt"
	"strings"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/schema"
)

// readAppSettings layers the appsettings files, then the environment layers,
// into one .NET configuration.
func (c *compiler) readAppSettings() error {
	c.cfg = newConfig()
	var fileSources []plan.SourceRef
	for _, f := range c.opts.AppSettings {
		data, err := c.read(f)
		if err != nil {
			return &compile.InputError{Path: f, Err: err}
		}
		c.res.Files.Add(f, data)
		c.texts = append(c.texts, data)
		fileSources = append(fileSources, plan.SourceRef{Kind: "appsettings", Path: f})
		layer := len(c.layers)
		c.layers = append(c.layers, layerInfo{kind: "appsettings", path: f})
		// The servers' objects are not built here: each is built from
		// the file when its server is bound (config.expand).
		root, src, d := node.ParseJSONShallow(f, data, true, []string{"Mcp", "Servers"}, true, node.DotNetNesting)
		if d != nil {
			c.ds = append(c.ds, *d)
			continue
		}
		c.checkHostFile(root)
		c.cfg.addJSON(root, src, layer)
	}
	// Files first: the environment overrides them (SPEC §2.1).
	c.res.Sources = append(fileSources, c.res.Sources...)
	for i, vars := range c.res.Env.Layers() {
		layer := len(c.layers)
		info := layerInfo{kind: "environment"}
		if len(vars) > 0 {
			info = layerInfo{kind: vars[0].Source, path: vars[0].Pos().File}
		} else if !c.opts.CleanEnv && i == 0 {
			info = layerInfo{kind: "environment"}
		}
		c.layers = append(c.layers, info)
		c.cfg.addEnv(vars, layer)
	}
	c.ds = append(c.ds, c.cfg.ds...)
	c.cfg.ds = nil // bindHost adds those of the servers' parts
	return nil
}

// bindHost binds Mcp:Servers (sorted by .NET key order) and Mcp:Playwright.
func (c *compiler) bindHost() ([]*compile.Entry, *node.Node) {
	mcp := c.cfg.lookup("Mcp")
	if mcp == nil {
		return nil, nil
	}
	b := &binder{v: c.v, layers: c.layers, quote: c.quote}
	// The section itself: Servers and Playwright, nothing else.
	top := &node.Node{Kind: node.Object, Loc: mcp.pos}
	var pw *node.Node
	var servers *cfgNode
	for _, ch := range mcp.order {
		switch foldKey(ch.key) {
		case "SERVERS":
			servers = ch
			top.Members = append(top.Members, node.Member{Key: "Servers", KeyLoc: ch.keyPos, Value: &node.Node{Kind: node.Object, Loc: ch.pos}})
		case "PLAYWRIGHT":
			pw = b.bindEntry(ch, schema.Playwright, []string{"Mcp", "Playwright"}, "Mcp:Playwright")
			top.Members = append(top.Members, node.Member{Key: "Playwright", KeyLoc: ch.keyPos, Value: pw})
		default:
			top.Members = append(top.Members, node.Member{Key: ch.key, KeyLoc: ch.keyPos, Value: genericNode(ch)})
		}
	}
	c.check(checkJob{def: schema.Mcp, data: top, subject: "Mcp", naming: func(p []string) string { return strings.Join(p, ":") }})
	var entries []*compile.Entry
	if servers != nil {
		for _, sn := range servers.sortedChildren() {
			c.cfg.expand(sn)
			subject := fmt.Sprintf("server %q", sn.key)
			n := b.bindEntry(sn, schema.Server, []string{"Mcp", "Servers", sn.key}, subject)
			e := compile.NewEntry(sn.key, "host", sn.keyPos.Pos(), plan.Origin{}, n)
			e.Naming = hostNaming
			e.Origin = c.hostOrigin(sn)
			sn.release()
			entries = append(entries, e)
			// Checked and packed as it is bound: the bound trees of every
			// server were never needed at once.
			c.settle(e, checkJob{def: schema.Server, data: n, subject: subject, naming: hostNaming})
		}
	}
	c.ds = append(c.ds, b.ds...)
	c.ds = append(c.ds, c.cfg.ds...)
	return entries, pw
}

// hostOrigin is the plan origin of a host server: the layer that first
// mentions it.
func (c *compiler) hostOrigin(sn *cfgNode) plan.Origin {
	info := layerInfo{kind: "appsettings"}
	if sn.firstLayer >= 0 && int(sn.firstLayer) < len(c.layers) {
		info = c.layers[sn.firstLayer]
	}
	at := sn.keyPos.Pos()
	o := plan.Origin{Source: info.kind, Path: at.File, Line: at.Line, Column: at.Column}
	if info.kind != "appsettings" {
		o.Key = c.varAtLine(at) // the variable that first defined the server
	}
	return o
}
