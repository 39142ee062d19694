package compile

import (
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

// Defaults of SPEC §2.2, the one table they are filled in from (the schema
// keeps none, so that one bad value gives one plain message).
const (
	DefaultCwd               = "${workspace}"
	DefaultStartupTimeout    = 60
	DefaultPresetStartup     = 120
	DefaultCallTimeout       = 120
	DefaultIdleTimeout       = 1800
	DefaultStderrLevel       = "Warning"
	DefaultPlaywrightPackage = "@playwright/mcp@0.0.82"
	DefaultPlaywrightBrowser = "chromium"
)

// defaultText shows a field's default in explain.
func defaultText(field string, preset bool) string {
	switch field {
	case FieldArgs:
		return "[]"
	case FieldCwd:
		return DefaultCwd
	case FieldEnv:
		return "{}"
	case FieldToolPrefix:
		return `""`
	case FieldEnabled:
		return "true"
	case FieldParallel:
		return "false"
	case FieldStartup:
		if preset {
			return "120"
		}
		return "60"
	case FieldCall:
		return "120"
	case FieldIdle:
		return "1800"
	case FieldStderrLevel:
		return DefaultStderrLevel
	case FieldPromptSection:
		return "null"
	}
	return ""
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
