package rules

import "github.com/mcpc-dev/mcpc/compile/diag"

// registry lists every rule. docs/rules.md documents the same list; a test
// checks that the two agree and that every rule has golden cases.
var registry = []Rule{
	// Reading the sources.
	{ID: "json-syntax", Severity: diag.Error, Description: "An input file is not valid JSON (appsettings files may have comments and trailing commas; settings.json may not).",
		Example: `{"Mcp": {"Servers": {"github": {"Command": "npx",}}` + "\n" + `  (missing closing brace)`},
	{ID: "env-file-syntax", Severity: diag.Error, Description: "A line of an --env-file is not KEY=VALUE, or a quoted value is not closed.",
		Example: `GITHUB_TOKEN "abc"`},
	{ID: "duplicate-key", Severity: diag.Error, Description: "A JSON object has the same key twice (in appsettings compared case-insensitively); the .NET host refuses to start.",
		Example: `{"Command": "npx", "command": "node"}`},
	// Shape and types (CUE schema).
	{ID: "unknown-field", Severity: diag.Warning, Description: "A field that the host does not know; it is ignored, so a typo silently loses the setting.",
		Example: `"github": {"comand": "npx"}`},
	{ID: "type-mismatch", Severity: diag.Error, Description: "A value of the wrong type, or a host value that does not convert (integers in invariant culture, booleans true/false).",
		Example: `"StartupTimeoutSeconds": "sixty"`},
	// Entry values.
	{ID: "missing-command", Severity: diag.Error, Description: "A server entry has no command, or an empty one (checked on disabled entries too).",
		Example: `"github": {"args": ["-y", "server-github"]}`},
	{ID: "server-name-empty", Severity: diag.Error, Description: "A server has an empty name (for example from the environment key Mcp__Servers____Command).",
		Example: `Mcp__Servers____Command=npx`},
	{ID: "tool-prefix-chars", Severity: diag.Error, Description: "toolPrefix may only contain A-Z a-z 0-9 _ and -.",
		Example: `"toolPrefix": "gh."`},
	{ID: "tool-prefix-reserved", Severity: diag.Error, Description: "toolPrefix must not start with mcp__, which is the provider's own namespace.",
		Example: `"toolPrefix": "mcp__gh_"`},
	{ID: "timeout-not-positive", Severity: diag.Error, Description: "startupTimeoutSeconds and callTimeoutSeconds must be > 0; idleTimeoutSeconds must be >= 0 (0 never stops an idle process).",
		Example: `"callTimeoutSeconds": 0`},
	{ID: "stderr-level", Severity: diag.Error, Description: "stderrLevel must be a .NET log level: Trace, Debug, Information, Warning, Error, Critical or None (any case).",
		Example: `"stderrLevel": "Warn"`},
	// Host configuration binding.
	{ID: "array-partial-override", Severity: diag.Warning, Description: "A later layer (the environment or a later appsettings file) sets only some indices of an array defined earlier; the other elements stay.",
		Example: `Mcp__Servers__github__Args__1=server-github  (file has ["-y", "pkg", "--verbose"])`},
	{ID: "host-null-env", Severity: diag.Warning, Description: "A null env value in a host file binds to the empty string; it does not remove the variable (only settings.json can).",
		Example: `"Env": {"DEBUG": null}`},
	// Merge.
	{ID: "name-shadowed", Severity: diag.Warning, Description: "A server name defined again by a later source is dropped; the first definition wins.",
		Example: `"github" in settings.json while the host section also defines "github"`},
	// Playwright preset.
	{ID: "bool-value", Severity: diag.Error, Description: "A PLAYWRIGHT_* boolean variable is not true or false; the host would read it as false.",
		Example: `PLAYWRIGHT_ENABLED=1`},
	{ID: "playwright-extra-args", Severity: diag.Error, Description: "PLAYWRIGHT_EXTRA_ARGS does not split shell-style (unbalanced quotes).",
		Example: `PLAYWRIGHT_EXTRA_ARGS=--device "iPhone 15`},
	{ID: "playwright-browser", Severity: diag.Error, Description: "The Playwright browser is not one @playwright/mcp knows (chromium, chrome, firefox, webkit, msedge and their channels).",
		Example: `PLAYWRIGHT_BROWSER=safari`},
	{ID: "playwright-var-ignored", Severity: diag.Warning, Description: "A PLAYWRIGHT_* variable is set but a configured Mcp:Playwright value wins over it.",
		Example: `PLAYWRIGHT_ENABLED=true with "Playwright": {"Enabled": false}`},
	// Templates.
	{ID: "unknown-variable", Severity: diag.Error, Description: "A ${...} other than ${workspace} and ${env:NAME}; the host passes it on literally.",
		Example: `"cwd": "${home}/repo"`},
	{ID: "env-ref-outside-env", Severity: diag.Error, Description: "${env:NAME} stands outside an env value (in command, args or cwd), where the host passes it on literally.",
		Example: `"args": ["--token", "${env:GITHUB_TOKEN}"]`},
	{ID: "env-name-invalid", Severity: diag.Error, Description: "An environment variable name (an env key or the NAME of ${env:NAME}) is not [A-Za-z_][A-Za-z0-9_]*.",
		Example: `"env": {"MY-VAR": "1"}`},
	{ID: "env-ref-unset", Severity: diag.Warning, Description: "${env:NAME} names a variable that is not set in the host environment; the server gets an empty value.",
		Example: `"GITHUB_TOKEN": "${env:GITHUB_TOKEN}" with GITHUB_TOKEN unset`},
	// Tool discovery and naming (mcpc tools).
	{ID: "server-start-failed", Severity: diag.Error, Description: "A server did not list its tools: it exited, did not answer within startupTimeoutSeconds, spoke something other than MCP on stdout, or could not be started. It contributes no tools.",
		Example: `"db": {"command": "db-mcp"}  →  exited (1): cannot open /data/db.sqlite`},
	{ID: "tool-builtin-conflict", Severity: diag.Warning, Description: "A tool's visible name equals a built-in tool (read write edit bash grep find ls send, or --builtin-tools); it is not registered.",
		Example: `a server without toolPrefix lists a tool named "read"`},
	{ID: "tool-name-collision", Severity: diag.Warning, Description: "Another server registered the same visible name first (source order); this tool is dropped.",
		Example: `"github" and "jira" both list "search", neither has a toolPrefix`},
	{ID: "tool-name-deduplicated", Severity: diag.Warning, Description: "A tool's visible name was already taken by an earlier tool of the same server, so _2, _3 … was added; the name depends on the server's listing order.",
		Example: `tools "db.query" and "db query" both become db_query; the second is db_query_2`},
	{ID: "tool-name-empty", Severity: diag.Warning, Description: "A server lists a tool with an empty name and has no toolPrefix; the tool has no name and is not registered.",
		Example: `tools/list returns {"name": ""}`},
	{ID: "tool-name-sanitized", Severity: diag.Warning, Description: "Characters outside A-Z a-z 0-9 _ - in the tool name became _ (one per character); the agent sees another name than the server's.",
		Example: `tool "get.forecast" is registered as get_forecast`},
	{ID: "tool-name-truncated", Severity: diag.Warning, Description: "toolPrefix + tool name is longer than 48 characters and was cut (mcp__volcanic__ + 48 = 63 fits a provider's 64).",
		Example: `"toolPrefix": "quarterly_fin_" with tool generate_consolidated_statement_by_region`},
	{ID: "tool-changed", Severity: diag.Error, Description: "mcpc tools --lock FILE --check: a tool was added or removed, or its description, input schema or visible name, or the server's launch command or version, differs from the lock.",
		Example: `the description of tool "search" changed since the lock was written`},
	{ID: "lock-invalid", Severity: diag.Error, Description: "The tool lock file is not a valid lock of this mcpc (missing fields, wrong types, another lockVersion).",
		Example: `"descriptionSha256": "94e8c97f"`},
	{ID: "plan-invalid", Severity: diag.Error, Description: "A plan file is not a valid plan of this mcpc: another planVersion, missing or mistyped fields, or a digest that does not match (edited after compiling).",
		Example: `{"planVersion": 2, …}`},
}
