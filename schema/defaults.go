package schema

// The defaults of SPEC §2.2 and of the other inputs: the one table mcpc
// fills them in from after validation (package compile, package craftbot)
// and writes into the exported JSON Schemas as "default" (jsonschema.go).
// The CUE schemas keep none, so that one bad value gives one plain message.
const (
	DefaultCwd                = "${workspace}"
	DefaultStartupTimeout     = 60
	DefaultPresetStartup      = 120
	DefaultCallTimeout        = 120
	DefaultIdleTimeout        = 1800
	DefaultStderrLevel        = "Warning"
	DefaultPlaywrightPackage  = "@playwright/mcp@0.0.82"
	DefaultPlaywrightBrowser  = "chromium"
	DefaultPlaywrightEnabled  = false
	DefaultPlaywrightHeadless = true
	// CraftBot connects the enabled servers at start-up, and an entry
	// without "enabled" is enabled.
	DefaultCraftbotAutoConnect = true
	DefaultCraftbotEnabled     = true
)

// serverDefaults are the defaults of a server entry's fields
// (settings.json spelling), as JSON values; command has none.
var serverDefaults = map[string]any{
	"args":                  []any{},
	"cwd":                   DefaultCwd,
	"env":                   map[string]any{},
	"toolPrefix":            "",
	"enabled":               true,
	"parallel":              false,
	"startupTimeoutSeconds": DefaultStartupTimeout,
	"callTimeoutSeconds":    DefaultCallTimeout,
	"idleTimeoutSeconds":    DefaultIdleTimeout,
	"stderrLevel":           DefaultStderrLevel,
	"promptSection":         nil,
}

// playwrightDefaults are the defaults of Mcp:Playwright's settings when
// neither the file nor a PLAYWRIGHT_* variable sets them.
var playwrightDefaults = map[string]any{
	"Enabled":  DefaultPlaywrightEnabled,
	"Headless": DefaultPlaywrightHeadless,
	"Browser":  DefaultPlaywrightBrowser,
	"Package":  DefaultPlaywrightPackage,
}

// craftbotDefaults are the defaults of mcp_config.json, by definition.
var craftbotDefaults = map[string]map[string]any{
	CraftbotConfig: {"auto_connect": DefaultCraftbotAutoConnect},
	CraftbotServer: {"enabled": DefaultCraftbotEnabled},
}

// ServerDefault returns the default of a server entry field (settings.json
// spelling) as a JSON value, and whether it has one.
func ServerDefault(field string) (any, bool) {
	v, ok := serverDefaults[field]
	return v, ok
}
