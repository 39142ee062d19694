package volcanic

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpc-dev/mcpc/schema"
)

// Field names of a server entry (settings.json spelling; the host's keys are
// the same in PascalCase, matched case-insensitively).
const (
	FieldCommand       = "command"
	FieldArgs          = "args"
	FieldCwd           = "cwd"
	FieldEnv           = "env"
	FieldToolPrefix    = "toolPrefix"
	FieldEnabled       = "enabled"
	FieldParallel      = "parallel"
	FieldStartup       = "startupTimeoutSeconds"
	FieldCall          = "callTimeoutSeconds"
	FieldIdle          = "idleTimeoutSeconds"
	FieldStderrLevel   = "stderrLevel"
	FieldPromptSection = "promptSection"
)

// serverFields lists the entry fields in the order explain shows them.
var serverFields = []string{
	FieldCommand, FieldArgs, FieldCwd, FieldEnv, FieldToolPrefix, FieldEnabled, FieldParallel,
	FieldStartup, FieldCall, FieldIdle, FieldStderrLevel, FieldPromptSection,
}

// Defaults of SPEC §2.2: one table, in package schema, which also writes
// them into the exported JSON Schemas.
const (
	DefaultCwd               = schema.DefaultCwd
	DefaultStartupTimeout    = schema.DefaultStartupTimeout
	DefaultPresetStartup     = schema.DefaultPresetStartup
	DefaultCallTimeout       = schema.DefaultCallTimeout
	DefaultIdleTimeout       = schema.DefaultIdleTimeout
	DefaultStderrLevel       = schema.DefaultStderrLevel
	DefaultPlaywrightPackage = schema.DefaultPlaywrightPackage
	DefaultPlaywrightBrowser = schema.DefaultPlaywrightBrowser
)

// defaultText shows a field's default in explain: a string as it is, other
// values as JSON.
func defaultText(field string, preset bool) string {
	if field == FieldStartup && preset {
		return strconv.Itoa(DefaultPresetStartup)
	}
	v, ok := schema.ServerDefault(field)
	if !ok {
		return ""
	}
	if s, isString := v.(string); isString && s != "" {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// stderrLevels are the .NET log levels, in their canonical spelling.
var stderrLevels = []string{"Trace", "Debug", "Information", "Warning", "Error", "Critical", "None"}

func canonicalLevel(s string) string {
	for _, l := range stderrLevels {
		if strings.EqualFold(l, s) {
			return l
		}
	}
	return s
}

// pascal shows a settings.json field name the way the host section spells it.
func pascal(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// hostNaming shows a path inside a host server entry in PascalCase; keys
// inside env are variable names and stay as they are.
func hostNaming(path []string) string {
	out := make([]string, len(path))
	for i, p := range path {
		if i > 0 && strings.EqualFold(path[0], FieldEnv) {
			out[i] = p
			continue
		}
		if isDigits(p) {
			out[i] = p
			continue
		}
		out[i] = pascal(p)
	}
	return schema.DefaultNaming(out)
}

// settingsNaming writes settings.json paths as they are: args[1], env.NAME.
func settingsNaming(path []string) string { return schema.DefaultNaming(path) }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
