package volcanic

import (
	"fmt"
	"strings"

	"github.com/google/shlex"
	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/policies/rules"
	"github.com/mcpc-dev/mcpc/schema"
)

// PresetName is the server the Playwright preset yields.
const PresetName = "playwright"

// playwrightBrowsers are the values @playwright/mcp's --browser accepts
// (a browser, or a Chrome/Edge channel).
var playwrightBrowsers = []string{
	"chromium", "chrome", "chrome-beta", "chrome-dev", "chrome-canary",
	"msedge", "msedge-beta", "msedge-dev", "msedge-canary", "firefox", "webkit",
}

// presetSetting is where one setting of the preset came from.
type presetSetting struct {
	name     string // Mcp:Playwright key
	variable string // PLAYWRIGHT_* variable, "" for Package
	source   string // "configured", "variable" or "default"
	pos      diag.Pos
	shown    string // for explain
}

func (s presetSetting) describe() string {
	switch s.source {
	case "configured":
		return fmt.Sprintf("Mcp:Playwright:%s at %s", s.name, s.pos)
	case "variable":
		return fmt.Sprintf("%s at %s", s.variable, s.pos)
	}
	return "default"
}

// preset resolves the Playwright preset (SPEC §2.3) from the bound
// Mcp:Playwright section and the host environment.
type preset struct {
	env      *compile.HostEnv
	cfg      *node.Node          // bound Mcp:Playwright, may be nil
	quote    func(string) string // a value in a message, redacted and cut short
	ds       []diag.Diagnostic
	settings map[string]presetSetting

	enabled, headless bool
	browser, command  string
	pkg               string
	extra             []string
	extraNodes        []*node.Node
}

func (p *preset) configured(name string) *node.Node {
	v := p.cfg.Get(name)
	if v == nil || v.Kind == node.Null {
		return nil
	}
	if v.Kind == node.String && v.Text == "" || v.Kind == node.Array && len(v.Elems) == 0 {
		return nil
	}
	return v
}

func (p *preset) variable(name string) *compile.EnvVar {
	if p.env == nil {
		return nil
	}
	v, ok := p.env.Lookup(name)
	if !ok || v.Value == "" {
		return nil
	}
	return v
}

// pick decides between the configured value and the variable: the
// configured value wins, and a variable that is set but loses is reported
// (SPEC §2.3), even when it agrees: the operator believes it decides.
func (p *preset) pick(name, variable string) (*node.Node, *compile.EnvVar) {
	cfg := p.configured(name)
	var v *compile.EnvVar
	if variable != "" {
		v = p.variable(variable)
	}
	if cfg != nil {
		p.settings[name] = presetSetting{name: name, variable: variable, source: "configured", pos: cfg.Pos()}
		if v != nil {
			p.ds = append(p.ds, rules.PlaywrightVarIgnored.At(v.ValuePos(),
				fmt.Sprintf("%s=%s is ignored: Mcp:Playwright:%s is configured at %s, and a configured value wins over its variable",
					variable, p.quote(v.Value), name, cfg.Pos()),
				fmt.Sprintf("remove %s from the configuration to let the variable decide, or remove the variable", name)))
		}
		return cfg, nil
	}
	if v != nil {
		p.settings[name] = presetSetting{name: name, variable: variable, source: "variable", pos: v.ValuePos()}
		return nil, v
	}
	p.settings[name] = presetSetting{name: name, variable: variable, source: "default"}
	return nil, nil
}

func (p *preset) boolSetting(name, variable string, def bool) bool {
	cfg, v := p.pick(name, variable)
	switch {
	case cfg != nil:
		return cfg.Bool
	case v != nil:
		b, ok := parseDotnetBool(v.Value)
		if !ok {
			p.ds = append(p.ds, rules.BoolValue.At(v.ValuePos(),
				fmt.Sprintf("%s=%s is not true or false; the host reads it as false", variable, p.quote(v.Value)),
				fmt.Sprintf("write %s=true or %s=false", variable, variable)))
			return false
		}
		return b
	}
	return def
}

func (p *preset) stringSetting(name, variable, def string) (string, diag.Pos) {
	cfg, v := p.pick(name, variable)
	switch {
	case cfg != nil:
		return cfg.Text, cfg.Pos()
	case v != nil:
		return v.Value, v.ValuePos()
	}
	return def, diag.Pos{}
}

// resolve computes every setting and reports problems.
func (p *preset) resolve() {
	p.settings = map[string]presetSetting{}
	p.enabled = p.boolSetting("Enabled", "PLAYWRIGHT_ENABLED", schema.DefaultPlaywrightEnabled)
	p.headless = p.boolSetting("Headless", "PLAYWRIGHT_HEADLESS", schema.DefaultPlaywrightHeadless)
	var bpos diag.Pos
	p.browser, bpos = p.stringSetting("Browser", "PLAYWRIGHT_BROWSER", DefaultPlaywrightBrowser)
	p.command, _ = p.stringSetting("Command", "PLAYWRIGHT_COMMAND", "")
	p.pkg, _ = p.stringSetting("Package", "", DefaultPlaywrightPackage)

	cfg, v := p.pick("ExtraArgs", "PLAYWRIGHT_EXTRA_ARGS")
	switch {
	case cfg != nil:
		for _, e := range cfg.Elems {
			p.extra = append(p.extra, e.Text)
			p.extraNodes = append(p.extraNodes, e)
		}
	case v != nil:
		words, err := shlex.Split(v.Value)
		if err != nil {
			pos, sugg := v.ValuePos(), `balance the quotes: --device "iPhone 15" is two arguments`
			if off, q, ok := openQuote(v.Value); ok {
				pos = textPos(valueNode(v), off)
				sugg = fmt.Sprintf("close the %c opened here, or escape it as \\%c", q, q)
			}
			p.ds = append(p.ds, rules.PlaywrightExtraArgs.At(pos,
				fmt.Sprintf("PLAYWRIGHT_EXTRA_ARGS does not split into arguments shell-style: %v; the host refuses it", err), sugg))
		}
		for _, w := range words {
			p.extra = append(p.extra, w)
			p.extraNodes = append(p.extraNodes, node.Str(w, v.ValuePos()))
		}
	}

	p.checkTemplates()

	known := false
	for _, b := range playwrightBrowsers {
		if p.browser == b {
			known = true
		}
	}
	if !known {
		sugg := "use one of " + strings.Join(playwrightBrowsers, ", ")
		for _, b := range playwrightBrowsers {
			if strings.EqualFold(b, p.browser) {
				sugg = fmt.Sprintf("did you mean %q? browser names are lower case", b)
			}
		}
		p.ds = append(p.ds, rules.PlaywrightBrowser.At(bpos,
			fmt.Sprintf("the Playwright browser %s is not one @playwright/mcp knows; the first browser_* call would fail", p.quote(p.browser)), sugg))
	}
}

// checkTemplates checks the ${…} of the settings that become the preset's
// command line (Command, ExtraArgs), configured or from their variables, as
// for any server's command and args: ${env:…} there is passed on literally.
func (p *preset) checkTemplates() {
	subject := fmt.Sprintf("server %q", PresetName)
	check := func(n *node.Node, field string) {
		if n == nil || n.Kind != node.String {
			return
		}
		for _, t := range plan.Templates(n.Text) {
			switch {
			case unknownTemplate(t):
				p.ds = append(p.ds, rules.UnknownVariable.At(unknownVariableAt(n, t, subject, field)))
			case t.Kind == plan.TemplateEnv:
				p.ds = append(p.ds, rules.EnvRefOutsideEnv.At(envRefOutsideEnvAt(n, t, subject, field,
					"write the value itself: the host does not expand ${env:…} in the Playwright command line")))
			}
		}
	}
	for _, name := range []string{"Command", "ExtraArgs"} {
		s := p.settings[name]
		switch s.source {
		case "configured":
			n := p.cfg.Get(name)
			if n.Kind == node.Array {
				for i, e := range n.Elems {
					check(e, fmt.Sprintf("Mcp:Playwright:%s:%d", name, i))
				}
			} else {
				check(n, "Mcp:Playwright:"+name)
			}
		case "variable":
			check(valueNode(p.variable(s.variable)), s.variable)
		}
	}
}

// LogLine is the line the host logs at startup about the preset.
func (p *preset) LogLine() string {
	if !p.enabled {
		return "MCP: playwright disabled (set PLAYWRIGHT_ENABLED=true)"
	}
	mode := "headless"
	if !p.headless {
		mode = "headed"
	}
	return fmt.Sprintf("MCP: playwright enabled (%s, %s)", mode, p.browser)
}

// isolated reports whether the extra arguments ask for an in-memory profile.
func (p *preset) isolated() bool {
	for _, a := range p.extra {
		if a == "--isolated" || strings.HasPrefix(a, "--isolated=") && a != "--isolated=false" {
			return true
		}
	}
	return false
}

// entry builds the preset's server entry; explain shows notes for its fields.
func (p *preset) entry() *compile.Entry {
	enabledPos := p.settings["Enabled"].pos
	at := func(setting string) diag.Pos {
		if s := p.settings[setting]; s.source != "default" {
			return s.pos
		}
		return enabledPos
	}
	str := func(s string, pos diag.Pos) *node.Node { return node.Str(s, pos) }
	notes := map[string]string{}
	var command string
	var args []*node.Node
	arg := func(text, why string, pos diag.Pos) {
		notes[fmt.Sprintf("%s[%d]", FieldArgs, len(args))] = "preset: " + why
		args = append(args, str(text, pos))
	}
	if p.command != "" {
		command = p.command
		notes[FieldCommand] = "preset: Command, from " + p.settings["Command"].describe()
	} else {
		command = "npx"
		notes[FieldCommand] = "preset: npx -y <Package>, as no Command is set"
		arg("-y", "npx -y <Package>", at("Package"))
		arg(p.pkg, "Package, from "+p.settings["Package"].describe(), at("Package"))
	}
	cmdPos := at("Command")
	if p.headless {
		arg("--headless", "Headless, from "+p.settings["Headless"].describe(), at("Headless"))
	}
	arg("--browser", "always", at("Browser"))
	arg(p.browser, "Browser, from "+p.settings["Browser"].describe(), at("Browser"))
	arg("--output-dir", "always", enabledPos)
	arg("${workspace}/browser", "always", enabledPos)
	if !p.isolated() {
		arg("--user-data-dir", "unless ExtraArgs contain --isolated", enabledPos)
		arg("${workspace}/.volcanic/browser-profile", "unless ExtraArgs contain --isolated", enabledPos)
	}
	for _, e := range p.extraNodes {
		arg(e.Text, "ExtraArgs, from "+p.settings["ExtraArgs"].describe(), e.Pos())
	}
	notes[FieldStartup] = fmt.Sprintf("preset: %d (the first npx run downloads the package)", DefaultPresetStartup)
	n := &node.Node{Kind: node.Object, Loc: node.LocOf(enabledPos), Members: []node.Member{
		{Key: FieldCommand, KeyLoc: node.LocOf(cmdPos), Value: str(command, cmdPos)},
		{Key: FieldArgs, KeyLoc: node.LocOf(enabledPos), Value: &node.Node{Kind: node.Array, Loc: node.LocOf(enabledPos), Elems: args}},
		{Key: FieldStartup, KeyLoc: node.LocOf(enabledPos), Value: &node.Node{Kind: node.Number, Loc: node.LocOf(enabledPos), Text: fmt.Sprint(DefaultPresetStartup)}},
	}}
	s := p.settings["Enabled"]
	origin := plan.Origin{Source: "preset", Path: enabledPos.File, Line: enabledPos.Line, Column: enabledPos.Column}
	if s.source == "variable" {
		origin.Key = "PLAYWRIGHT_ENABLED"
	}
	e := compile.NewEntry(PresetName, "preset", enabledPos, origin, n)
	e.Notes, e.Naming = notes, settingsNaming
	return e
}

// openQuote finds the quote that a shell-style split leaves open: its rune
// offset and the quote character.
func openQuote(s string) (int, rune, bool) {
	var quote rune
	start := -1
	escaped := false
	for i, r := range []rune(s) {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && quote != '\'':
			escaped = true
		case quote != 0:
			if r == quote {
				quote, start = 0, -1
			}
		case r == '"' || r == '\'':
			quote, start = r, i
		}
	}
	return start, quote, quote != 0
}
