package rules

import "github.com/mcpc-dev/mcpc/internal/diag"

// The rules mcpc declares in Go, each one value: its id, default severity,
// description and example, and (its methods) the only way to report it.
// docs/rules.md documents the same list; a test checks that the two agree
// and that every rule has golden cases. The rules of the policy packs are
// declared in CUE (policies/).
var (
	// Reading the sources.
	JSONSyntax = declare(Rule{ID: "json-syntax", Home: "internal/node/json.go", Severity: diag.Error, Description: "An input file is not valid JSON (appsettings files may have comments and trailing commas; settings.json may not), or nests objects and arrays deeper than its reader does (64 levels for the files the volcanic host reads, 900 for mcp_config.json).",
		Example: `{"Mcp": {"Servers": {"github": {"Command": "npx",}}` + "\n" + `  (missing closing brace)`})
	EnvFileSyntax = declare(Rule{ID: "env-file-syntax", Home: "compile/dotenv.go", Severity: diag.Error, Description: "A line of an --env-file is not NAME=VALUE, its name is not a variable name, or a quoted value is not closed; the line is never quoted, since it may be part of a secret.",
		Example: `GITHUB_TOKEN "abc"`})
	DuplicateKey = declare(Rule{ID: "duplicate-key", Home: "compile/volcanic/settings.go", Severity: diag.Error, Description: "A JSON object has the same key twice (in appsettings compared case-insensitively); the .NET host refuses to start. In appsettings an object written twice is merged key by key: one finding, at the later one, names the keys both set.",
		Example: `{"Command": "npx", "command": "node"}`})
	// Shape and types (CUE schema).
	UnknownField = declare(Rule{ID: "unknown-field", Home: "schema/schema.go", Severity: diag.Warning, Description: "A field that the host does not know; it is ignored, so a typo silently loses the setting.",
		Example: `"github": {"comand": "npx"}`})
	TypeMismatch = declare(Rule{ID: "type-mismatch", Home: "compile/volcanic/bind.go", Severity: diag.Error, Description: "A value of the wrong type, or a host value that does not convert as the .NET binder converts it (integers: decimal, or hexadecimal after #, 0x or &h; booleans: true or false in any case).",
		Example: `"StartupTimeoutSeconds": "sixty"`})
	// Entry values.
	MissingCommand = declare(Rule{ID: "missing-command", Home: "compile/volcanic/missing_command.go", Severity: diag.Error, Description: "A server entry has no command, or an empty one (checked on disabled entries too).",
		Example: `"github": {"args": ["-y", "server-github"]}`})
	ServerNameEmpty = declare(Rule{ID: "server-name-empty", Home: "compile/volcanic/server_name_empty.go", Severity: diag.Error, Description: "A server has an empty name (for example from the environment key Mcp__Servers____Command).",
		Example: `Mcp__Servers____Command=npx`})
	ToolPrefixChars = declare(Rule{ID: "tool-prefix-chars", Home: "schema/server.cue", Severity: diag.Error, Description: "toolPrefix may only contain A-Z a-z 0-9 _ and -.",
		Example: `"toolPrefix": "gh."`})
	ToolPrefixReserved = declare(Rule{ID: "tool-prefix-reserved", Home: "compile/volcanic/tool_prefix_reserved.go", Severity: diag.Error, Description: "toolPrefix must not start with mcp__, which is the provider's own namespace.",
		Example: `"toolPrefix": "mcp__gh_"`})
	TimeoutNotPositive = declare(Rule{ID: "timeout-not-positive", Home: "schema/server.cue", Severity: diag.Error, Description: "startupTimeoutSeconds and callTimeoutSeconds must be > 0; idleTimeoutSeconds must be >= 0 (0 never stops an idle process).",
		Example: `"callTimeoutSeconds": 0`})
	StderrLevel = declare(Rule{ID: "stderr-level", Home: "schema/server.cue", Severity: diag.Error, Description: "stderrLevel must be a .NET log level: Trace, Debug, Information, Warning, Error, Critical or None (any case).",
		Example: `"stderrLevel": "Warn"`})
	NULCharacter = declare(Rule{ID: "nul-character", Home: "compile/volcanic/nul_character.go", Severity: diag.Error, Description: "A NUL character (\\u0000 in JSON, a NUL byte in an env file) in a command, an argument, the cwd, an env name or value, or a host variable an env value copies with ${env:NAME}; no process can be started with it.",
		Example: `"args": ["--name", "a\\u0000b"]`})
	// Host configuration binding.
	ArrayPartialOverride = declare(Rule{ID: "array-partial-override", Home: "compile/volcanic/bind.go", Severity: diag.Warning, Description: "A later layer (the environment or a later appsettings file) sets only some indices of an array defined earlier; the other elements stay.",
		Example: `Mcp__Servers__github__Args__1=server-github  (file has ["-y", "pkg", "--verbose"])`})
	HostNullEnv = declare(Rule{ID: "host-null-env", Home: "compile/volcanic/bind.go", Severity: diag.Warning, Description: "A null env value in a host file binds to the empty string; it does not remove the variable (only settings.json can).",
		Example: `"Env": {"DEBUG": null}`})
	// Mistakes the host accepts silently.
	McpServersInAppSettings = declare(Rule{ID: "mcpservers-in-appsettings", Home: "compile/volcanic/mistakes.go", Severity: diag.Error, Description: "An appsettings file has an mcpServers block (Claude Desktop's shape), at the top or under Mcp; the host reads only Mcp:Servers, so none of its servers starts.",
		Example: `{"mcpServers": {"github": {"command": "npx"}}}  (in appsettings.json)`})
	EnvKeySingleUnderscore = declare(Rule{ID: "env-key-single-underscore", Home: "compile/volcanic/mistakes.go", Severity: diag.Error, Description: "A host variable such as Mcp_Servers_x_Command uses single underscores; .NET reads only __ as the section separator, so the host ignores it.",
		Example: `Mcp_Servers_github_Command=npx`})
	ServersArray = declare(Rule{ID: "servers-array", Home: "compile/volcanic/mistakes.go", Severity: diag.Error, Description: "Mcp:Servers is a JSON list: .NET binds it to servers named 0, 1, …, so names, tool prefixes and precedence use the index.",
		Example: `"Servers": [{"Command": "npx"}]`})
	NameCaseCollision = declare(Rule{ID: "name-case-collision", Home: "compile/volcanic/mistakes.go", Severity: diag.Warning, Description: "Two sources define server names that differ only in case (github in the host, GITHUB in settings.json): the host runs both, as two servers, instead of one overriding the other.",
		Example: `"github" in appsettings.json and "GITHUB" in settings.json`})
	ForeignField = declare(Rule{ID: "foreign-field", Home: "compile/volcanic/mistakes.go", Severity: diag.Warning, Description: "An entry has a field of another MCP client (disabled, timeout, autoApprove, alwaysAllow, type, transport, url, headers, envFile); the host ignores it. The suggestion says what to write instead.",
		Example: `"disabled": true  (write "enabled": false)`})
	WorkspaceInPrompt = declare(Rule{ID: "workspace-in-prompt", Home: "compile/volcanic/workspace_in_prompt.go", Severity: diag.Warning, Description: "${workspace} in promptSection: the host puts the text into the system prompt as written, without templates.",
		Example: `"promptSection": "Notes live in ${workspace}/notes."`})
	// Merge.
	NameShadowed = declare(Rule{ID: "name-shadowed", Home: "compile/volcanic/merge.go", Severity: diag.Warning, Description: "A server name defined again by a later source is dropped; the first definition wins.",
		Example: `"github" in settings.json while the host section also defines "github"`})
	// Playwright preset.
	BoolValue = declare(Rule{ID: "bool-value", Home: "compile/volcanic/preset.go", Severity: diag.Error, Description: "A PLAYWRIGHT_* boolean variable is not true or false; the host would read it as false.",
		Example: `PLAYWRIGHT_ENABLED=1`})
	PlaywrightExtraArgs = declare(Rule{ID: "playwright-extra-args", Home: "compile/volcanic/preset.go", Severity: diag.Error, Description: "PLAYWRIGHT_EXTRA_ARGS does not split shell-style (unbalanced quotes).",
		Example: `PLAYWRIGHT_EXTRA_ARGS=--device "iPhone 15`})
	PlaywrightBrowser = declare(Rule{ID: "playwright-browser", Home: "compile/volcanic/preset.go", Severity: diag.Error, Description: "The Playwright browser is not one @playwright/mcp knows (chromium, chrome, firefox, webkit, msedge and their channels).",
		Example: `PLAYWRIGHT_BROWSER=safari`})
	PlaywrightVarIgnored = declare(Rule{ID: "playwright-var-ignored", Home: "compile/volcanic/preset.go", Severity: diag.Warning, Description: "A PLAYWRIGHT_* variable is set but a configured Mcp:Playwright value wins over it.",
		Example: `PLAYWRIGHT_ENABLED=true with "Playwright": {"Enabled": false}`})
	// Templates.
	UnknownVariable = declare(Rule{ID: "unknown-variable", Home: "compile/volcanic/unknown_variable.go", Severity: diag.Error, Description: "A ${...} other than ${workspace} and ${env:NAME}; the host passes it on literally.",
		Example: `"cwd": "${home}/repo"`})
	EnvRefOutsideEnv = declare(Rule{ID: "env-ref-outside-env", Home: "compile/volcanic/env_ref_outside_env.go", Severity: diag.Error, Description: "${env:NAME} stands outside an env value (in command, args, cwd, promptSection, or the Playwright preset's Command and ExtraArgs or their PLAYWRIGHT_* variables), where the host passes it on literally.",
		Example: `"args": ["--token", "${env:GITHUB_TOKEN}"]`})
	EnvNameInvalid = declare(Rule{ID: "env-name-invalid", Home: "compile/volcanic/env_name_invalid.go", Severity: diag.Error, Description: "An environment variable name (an env key or the NAME of ${env:NAME}) is not [A-Za-z_][A-Za-z0-9_]*.",
		Example: `"env": {"MY-VAR": "1"}`})
	EnvRefUnset = declare(Rule{ID: "env-ref-unset", Home: "compile/volcanic/env_ref_unset.go", Severity: diag.Warning, Description: "${env:NAME} names a variable that is not set in the host environment; the server gets an empty value.",
		Example: `"GITHUB_TOKEN": "${env:GITHUB_TOKEN}" with GITHUB_TOKEN unset`})
	// Secrets (SPEC §2.4).
	SecretLiteral = declare(Rule{ID: "secret-literal", Home: "compile/volcanic/secret_literal.go", Severity: diag.Error, Description: "A command, argument, cwd, env value, toolPrefix or promptSection holds the value of a deny-listed host variable (or is set by one outside env), or a credential written into the file (a GitHub, sk-, Slack or AWS key, a JWT, a PEM private key, a high-entropy value under a key-like env name). A plan cannot carry a secret, and a command line shows in ps; pass it through env with ${env:NAME}. Printed redacted.",
		Example: `"args": ["--token", "ghp_…"] with GITHUB_TOKEN=ghp_… in the host environment`})
	SecretWeak = declare(Rule{ID: "secret-weak", Home: "compile/volcanic/secrets.go", Severity: diag.Warning, Description: "A deny-listed host variable's value is too weak to redact (shorter than 4 characters, or only letters and shorter than 12): it is ordinary text, so output keeps it as it is.",
		Example: `DB_PASSWORD=python`})
	// Tool discovery and naming (mcpc tools).
	ServerStartFailed = declare(Rule{ID: "server-start-failed", Home: "runtime/toolreport/toolreport.go", Severity: diag.Error, Description: "A server did not list its tools: it exited, did not answer within startupTimeoutSeconds, spoke something other than MCP on stdout, or could not be started. It contributes no tools.",
		Example: `"db": {"command": "db-mcp"}  →  exited (1): cannot open /data/db.sqlite`})
	ToolBuiltinConflict = declare(Rule{ID: "tool-builtin-conflict", Home: "compile/naming/naming.go", Severity: diag.Warning, Description: "A tool's visible name equals a built-in tool (read write edit bash grep find ls send, or --builtin-tools); it is not registered.",
		Example: `a server without toolPrefix lists a tool named "read"`})
	ToolNameCollision = declare(Rule{ID: "tool-name-collision", Home: "compile/naming/naming.go", Severity: diag.Warning, Description: "Another server registered the same visible name first (source order); this tool is dropped.",
		Example: `"github" and "jira" both list "search", neither has a toolPrefix`})
	ToolNameDeduplicated = declare(Rule{ID: "tool-name-deduplicated", Home: "compile/naming/naming.go", Severity: diag.Warning, Description: "A tool's visible name was already taken by an earlier tool of the same server, so _2, _3 … was added; the name depends on the server's listing order.",
		Example: `tools "db.query" and "db query" both become db_query; the second is db_query_2`})
	ToolNameEmpty = declare(Rule{ID: "tool-name-empty", Home: "compile/naming/naming.go", Severity: diag.Warning, Description: "A server lists a tool with an empty name and has no toolPrefix; the tool has no name and is not registered.",
		Example: `tools/list returns {"name": ""}`})
	ToolNameSanitized = declare(Rule{ID: "tool-name-sanitized", Home: "compile/naming/naming.go", Severity: diag.Warning, Description: "Characters outside A-Z a-z 0-9 _ - in the tool name became _ (one per character); the agent sees another name than the server's.",
		Example: `tool "get.forecast" is registered as get_forecast`})
	ToolNameTruncated = declare(Rule{ID: "tool-name-truncated", Home: "compile/naming/naming.go", Severity: diag.Warning, Description: "toolPrefix + tool name is longer than 48 characters and was cut (mcp__volcanic__ + 48 = 63 fits a provider's 64).",
		Example: `"toolPrefix": "quarterly_fin_" with tool generate_consolidated_statement_by_region`})
	ToolChanged = declare(Rule{ID: "tool-changed", Home: "policies/toollock/toollock.go", Severity: diag.Error, Description: "mcpc tools --lock FILE --check: a tool was added or removed, or its description, input schema or visible name, or the server's launch command or version, differs from the lock.",
		Example: `the description of tool "search" changed since the lock was written`})
	LockInvalid = declare(Rule{ID: "lock-invalid", Home: "policies/toollock/toollock.go", Severity: diag.Error, Description: "The tool lock file is not a valid lock of this mcpc (missing fields, wrong types, another lockVersion).",
		Example: `"descriptionSha256": "94e8c97f"`})
	PlanInvalid = declare(Rule{ID: "plan-invalid", Home: "compile/plan/file.go", Severity: diag.Error, Description: "A plan file is not a valid plan of this mcpc: another planVersion, missing or mistyped fields, or a digest that does not match (edited after compiling).",
		Example: `{"planVersion": 2, …}`})
	// The craftbot profile (app/config/mcp_config.json; --profile craftbot).
	CbTransport = declare(Rule{ID: "cb-transport", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A craftbot server's transport is not stdio, sse or websocket (a missing transport is stdio); the host skips the entry and loads the rest. An error when the entry is enabled.",
		Example: `{"name": "notes", "transport": "http", "url": "https://mcp.example.com/mcp"}`})
	CbMissingCommand = declare(Rule{ID: "cb-missing-command", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A craftbot stdio server has no command, or one Python reads as false (\"\", null, [], 0); the host skips it. An error when the entry is enabled.",
		Example: `{"name": "fs", "transport": "stdio", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}`})
	CbMissingURL = declare(Rule{ID: "cb-missing-url", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A craftbot sse or websocket server has no url, or one Python reads as false; the host skips it. An error when the entry is enabled.",
		Example: `{"name": "sentry", "transport": "sse"}`})
	CbDuplicateName = declare(Rule{ID: "cb-duplicate-name", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A craftbot server name is defined again. The host loads every entry, but for each enabled one it launches the first entry of the name (a disabled first entry's command runs; two enabled entries start the first twice, one process orphaned), and /mcp disable and remove act on the first only. An error when this later entry is enabled.",
		Example: `two entries named "filesystem"`})
	CbNameInvalid = declare(Rule{ID: "cb-name-invalid", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A craftbot server has no name (the host skips it), or a name that breaks every action of the server: a \", \\ or line break in it (the host's generated handler does not compile, or calls another tool), or a name that is not a string (its actions call the server by the name's text, which the host does not find). An error when the entry is enabled.",
		Example: `{"transport": "stdio", "command": "uvx", "args": ["mcp-server-time"]}`})
	CbEntryInvalid = declare(Rule{ID: "cb-entry-invalid", Home: "compile/craftbot/craftbot.go", Severity: diag.Error, Description: "An element of mcp_servers is not an object; the host skips it (what CraftBot 605efb4 does instead is the craftbot-605efb4 pack's).",
		Example: `"mcp_servers": ["filesystem", …]`})
	CbFieldIgnored = declare(Rule{ID: "cb-field-ignored", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A craftbot server sets a field its transport does not use (url on stdio; command, args or env on sse and websocket); the host ignores it.",
		Example: `{"name": "sentry", "transport": "sse", "url": "https://…/sse", "command": "npx"}`})
	CbEnvEmpty = declare(Rule{ID: "cb-env-empty", Home: "compile/craftbot/craftbot.go", Severity: diag.Info, Description: "An enabled craftbot stdio server has an empty env value: catalog entries ship their credential keys empty, and the server starts without it until the credential is filled on the machine that runs it (mcpc config env NAME KEY, or the host's /mcp env), never in a committed file. Info: a committed catalog is expected to hold them empty.",
		Example: `{"name": "github", "enabled": true, "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": ""}, …}`})
	CbTargetOS = declare(Rule{ID: "cb-target-os", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A craftbot stdio server does not run on the target OS (--target-os, default this machine's): its launch path is a macOS path or application bundle, open -a, osascript or shortcuts, a Windows path or program, a Unix path on Windows, or its description says it works on one other OS only (macOS ONLY, Windows-only, only runs on Linux, requires macOS). A placeholder path (C:/path/to/…) is no OS signal. Info for a disabled server.",
		Example: `"command": "/Applications/Things3.app/Contents/MacOS/things-mcp" with --target-os linux`})
	CbDuplicateKey = declare(Rule{ID: "cb-duplicate-key", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "An object of mcp_config.json has the same key twice; the host's JSON reader keeps the last one, so the earlier one is lost.",
		Example: `{"name": "fs", "name": "files", …}`})
	// The craftbot loader as CraftBot runs it (docs/decisions/0052-craftbot-as-it-runs.md).
	CbCannotStart = declare(Rule{ID: "cb-cannot-start", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "The host loads a craftbot server but its start always fails: a list command (what the host's /mcp add writes), a command that is not a string or is blank, args or env of a type the host cannot pass (null, a number, a value that is not a string), a name that is a list or an object. mcpc's runtime and mcpc tools report it as failed without starting it. An error when the entry is enabled.",
		Example: `{"name": "fs", "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem"]}`})
	CbFieldType = declare(Rule{ID: "cb-field-type", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A field of mcp_config.json has a type the host does not check and reads its own way: enabled or auto_connect by Python truthiness (\"false\" is true), args a string (each character is an argument), a description or action_set_name that is not a string. An error when the text says the opposite of what the host does (\"enabled\": \"false\" starts the server) or when an enabled server is launched with other arguments than written.",
		Example: `{"name": "fs", "command": "npx", "enabled": "false"}`})
	CbAutoConnectOff = declare(Rule{ID: "cb-auto-connect-off", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "auto_connect is false: the host connects its servers only at startup and only when auto_connect is true, so in that run no server connects and the agent has no MCP tool (mcpc's own runtime connects an enabled server on first use).",
		Example: `{"auto_connect": false, "mcp_servers": [ … ]}`})
	CbEditDrops = declare(Rule{ID: "cb-edit-drops", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "Every /mcp or Settings edit of the host rewrites the whole file from what it loaded: an entry it skips, and a field it does not know, are deleted by its next edit (with any credential in them).",
		Example: `{"name": "notes", "transport": "http", "url": "…", "env": {"TOKEN": "…"}}`})
	CbActionSetCore = declare(Rule{ID: "cb-action-set-core", Home: "compile/craftbot/craftbot.go", Severity: diag.Warning, Description: "A craftbot server's action_set_name is core: the host includes the core set in every task, so the server's tools join every task's prompt.",
		Example: `{"name": "fs", "command": "npx", "action_set_name": "core"}`})
	// Craftbot actions (mcpc tools --profile craftbot).
	CbActionCollision = declare(Rule{ID: "cb-action-collision", Home: "compile/craftbot/actions/actions.go", Severity: diag.Warning, Description: "Two tools become the same action name mcp_<server>_<tool> (servers whose names and tool names run into each other, or a server listing a name twice); CraftBot's registry holds one action per name, so one of them is lost.",
		Example: `server "a_b" lists "c" and server "a" lists "b_c": both become mcp_a_b_c`})
	CbActionBuiltin = declare(Rule{ID: "cb-action-builtin", Home: "compile/craftbot/actions/actions.go", Severity: diag.Warning, Description: "A tool's action name mcp_<server>_<tool> is the name of one of the host's built-in or integration actions (--builtin-actions); one of them is lost.",
		Example: `--builtin-actions mcp_github_search and server "github" lists "search"`})
	CbActionName = declare(Rule{ID: "cb-action-name", Home: "compile/craftbot/actions/actions.go", Severity: diag.Warning, Description: "A tool or server name holds a double quote, a line break, a NUL or an escape Python refuses (\\x, \\u, \\U or \\N malformed, a trailing backslash): CraftBot pastes the names into the Python source of the action's handler, which then does not compile, so the action is never registered. An error for an enabled server (its tools), a warning for a disabled one (its name).",
		Example: `tool "say \"hi\"" of server "fs": the action mcp_fs_say "hi" is never registered`})
	// Craftbot actions as the adapter of 605efb4 builds them (mcpc tools --profile craftbot).
	CbActionEscape = declare(Rule{ID: "cb-action-escape", Home: "compile/craftbot/actions/actions.go", Severity: diag.Warning, Description: "A tool or server name holds a backslash escape (\\t, \\n, \\\\, \\101, \\x41, \\N{…}, …): the handler CraftBot writes decodes it as a Python string, so the action calls another tool (or server) name than the listed one. An error for an enabled server, a warning for a disabled one.",
		Example: `tool "a\\tb" of server "fs": mcp_fs_a\\tb calls the tool "a<TAB>b"`})
	CbActionSchema = declare(Rule{ID: "cb-action-schema", Home: "compile/craftbot/actions/actions.go", Severity: diag.Error, Description: "CraftBot's adapter fails on a tool's input schema (a property that is not an object, properties that are not an object, required that is not a list, a schema that is a list or a string), so the tool is never registered as an action.",
		Example: `"inputSchema": {"type": "object", "properties": {"path": true}}`})
	CbActionInternalArg = declare(Rule{ID: "cb-action-internal-arg", Home: "compile/craftbot/actions/actions.go", Severity: diag.Warning, Description: "A tool's input schema has a property whose name starts with _: CraftBot's handler removes such arguments before it calls the tool, so the tool never receives it (a required one: every call lacks it).",
		Example: `"properties": {"_session": {"type": "string"}}`})
	CbToolsPaged = declare(Rule{ID: "cb-tools-paged", Home: "runtime/toolreport/craftbot.go", Severity: diag.Warning, Description: "A server lists its tools in pages (tools/list answers with nextCursor): CraftBot reads only the first page, so the tools of the later pages never become actions; mcpc lists and serves the first page too.",
		Example: `a server with 120 tools in pages of 50: 70 never become actions`})
	// Remote servers (<workspace>/.volcanic/mcp/servers.json; validate --workspace).
	RemoteVersion = declare(Rule{ID: "remote-version", Home: "schema/remote.cue", Severity: diag.Error, Description: "servers.json has a version other than 1, or none; the file is not used and mcpc remote does not edit it.",
		Example: `{"version": 2, "servers": []}`})
	RemoteName = declare(Rule{ID: "remote-name", Home: "schema/remote.cue", Severity: diag.Error, Description: "A remote server's name is not 1 to 20 characters of a-z, 0-9 and -; the entry is skipped.",
		Example: `{"name": "My Notes", …}`})
	RemoteNameDuplicate = declare(Rule{ID: "remote-name-duplicate", Home: "runtime/remote/file.go", Severity: diag.Error, Description: "Two entries of servers.json have the same name; only the first is used.",
		Example: `two entries named "notes"`})
	RemoteURL = declare(Rule{ID: "remote-url", Home: "runtime/remote/file.go", Severity: diag.Error, Description: "A remote server's url is not an absolute http:// or https:// URL with a host, or carries user info (user:password@); the entry is skipped.",
		Example: `"url": "https://me:pw@mcp.example.com/mcp"`})
	RemoteURLInsecure = declare(Rule{ID: "remote-url-insecure", Home: "runtime/remote/file.go", Severity: diag.Warning, Description: "A remote server's url (servers.json, or a CraftBot sse or websocket entry) is plain http:// or ws:// to a host that is not loopback: its messages, headers and any key in them travel unencrypted.",
		Example: `"url": "http://mcp.example.com/mcp"`})
	RemoteTransport = declare(Rule{ID: "remote-transport", Home: "schema/remote.cue", Severity: diag.Error, Description: "A remote server's transport is not auto (Streamable HTTP, falling back to SSE), http or sse; the entry is skipped.",
		Example: `"transport": "websocket"`})
	RemoteTools = declare(Rule{ID: "remote-tools", Home: "runtime/remote/file.go", Severity: diag.Error, Description: "A remote server's tools allowlist is empty or holds an empty or repeated name (null allows every tool); the entry is skipped.",
		Example: `"tools": ["search", "search"]`})
	RemoteToolMissing = declare(Rule{ID: "remote-tool-missing", Home: "runtime/remoteset/set.go", Severity: diag.Warning, Description: "A tool of a remote server is not offered: the entry's tools allowlist names a tool the server does not list (mcpc tools, mcpc remote test, mcpc run), or the gateway could not check a tool's definition for secrets. The server's other tools are offered.",
		Example: `"tools": ["search", "serch"] while the server lists search and fetch`})
	RemoteAuth = declare(Rule{ID: "remote-auth", Home: "schema/remote.cue", Severity: diag.Error, Description: "A remote server's auth is not headers; the entry is skipped.",
		Example: `"auth": "oauth"`})
	RemoteSealed = declare(Rule{ID: "remote-sealed", Home: "runtime/remote/seal.go", Severity: diag.Error, Description: "A remote server's sealed part is not valid, or (with the host secret and --scope) does not open: the entry was written or edited without the secret, copied from another chat, or sealed with another secret. The host skips it.",
		Example: `an entry copied from the servers.json of another chat`})
	// Deployment rules written in Go (mcpc lint; their checks are policies.GoRules).
	RuntimeMissing = declare(Rule{ID: "runtime-missing", Home: "policies/runtime_missing.go", Severity: diag.Error,
		Description: "An enabled stdio server's command is not on the target's PATH (npx, node, uvx, python3, docker, …), or an absolute command path does not exist on this machine: the server cannot start.",
		Example:     `"command": "uvx"  (uv is not installed on the target)`})
	ToolBudget = declare(Rule{ID: "tool-budget", Home: "policies/tool_budget.go", Severity: diag.Error,
		Description: "The deployment registers more tools than a target client accepts (Cursor 40, Copilot and OpenAI 128); the client drops or refuses the rest. Counted from the tool lock.",
		Example:     `targets: ["cursor"] with 41 tools in mcpc.lock.json`})
	ToolNameLength = declare(Rule{ID: "tool-name-length", Home: "policies/tool_name_length.go", Severity: diag.Error,
		Description: "A tool name is longer than a target client accepts in the form it sends (64 for the Anthropic and OpenAI tool APIs, with the client's prefix), or a server lists a name longer than the MCP specification's 128. Checked from the tool lock.",
		Example:     `targets: ["openai"] with a craftbot action mcp_filesystem_list_directory_with_sizes_and_more (65 characters)`})
	PlaywrightBrowserMissing = declare(Rule{ID: "playwright-browser-missing", Home: "policies/playwright_browser_missing.go", Severity: diag.Warning,
		Description: "The Playwright preset is enabled but its browser is not on the target (no Playwright build of the revision the pinned @playwright/mcp runs, no --executable-path that exists, no system Chrome or Edge for those channels): the first browser call fails.",
		Example:     `PLAYWRIGHT_ENABLED=true on a machine without npx playwright install chromium`})
	// Servers that cannot start where the host starts them, and what the
	// host gives them (mcpc lint, both profiles where they apply; their
	// checks are policies.GoRules).
	NpxWithoutYes = declare(Rule{ID: "npx-without-yes", Home: "policies/npx_without_yes.go", Severity: diag.Error,
		Description: "A stdio server runs npx without -y (or --yes, or npm_config_yes=true in its env) before the package: the host starts it with standard input a pipe, and npx, which asks before installing a package it finds neither installed nor cached, then refuses and exits 1, so the server starts only where the package is cached already. Info for a disabled server.",
		Example:     `"command": "npx", "args": ["@playwright/mcp@latest"]`})
	PlaceholderValue = declare(Rule{ID: "placeholder-value", Home: "policies/placeholder_value.go", Severity: diag.Error,
		Description: "A server's command, argument, cwd, env value or url is a placeholder left to fill in (C:/path/to/…, /path/to/…, <your-key>, YOUR_API_KEY, your-…, REPLACE_ME): the server cannot start or connect on any machine. An env value is never shown, only its key. Info for a disabled server, so that a catalog of disabled templates passes --strict.",
		Example:     `"args": ["C:/path/to/gmail-mcp/build/index.js"]`})
	CbHostEnv = declare(Rule{ID: "cb-host-env", Home: "policies/cb_host_env.go", Severity: diag.Warning,
		Description: "An enabled craftbot stdio server receives deny-listed variables of the host environment the deployment describes (--env-file, --env, mcpc.cue's envFiles and env): CraftBot starts a stdio server with its whole environment plus the entry's env (mcpc run withholds them). Names only, never values.",
		Example:     `--env-file host.env with OPENAI_API_KEY=… and an enabled stdio server`})
	// The version pack craftbot-605efb4 (policies/versionpacks): what
	// CraftBot 605efb4 does where its code breaks its manual. On by default
	// in mcpc lint for craftbot deployments; mcpc.cue switches it off.
	Craftbot605efb4LoadFails = declare(Rule{ID: "craftbot-605efb4-load-fails", Home: "policies/versionpacks/craftbot_605efb4.go", Severity: diag.Error,
		Description: "An element of mcp_servers is not an object, or a named entry's transport is a list or an object: CraftBot 605efb4 loads no MCP server from the file (the manual promises the entry is skipped), and its next /mcp add or add-json saves a file holding only the new server, losing every other entry and its credentials.",
		Example:     `"mcp_servers": [{"name": "fs", "transport": "stdio", "command": "npx"}, "notes"]`})
	Craftbot605efb4SSE = declare(Rule{ID: "craftbot-605efb4-sse", Home: "policies/versionpacks/craftbot_605efb4.go", Severity: diag.Error,
		Description: "An enabled sse server: CraftBot 605efb4 posts to the url with every /sse replaced by /message (host names too), ignores the endpoint event and sends no notifications/initialized, so a standard MCP SSE server never answers and the server never connects. The message shows the url it posts to. Info for a disabled server.",
		Example:     `{"name": "sentry", "transport": "sse", "url": "https://sse.example.com/sse"}  (posts to https://message.example.com/message)`})
	Craftbot605efb4Websocket = declare(Rule{ID: "craftbot-605efb4-websocket", Home: "policies/versionpacks/craftbot_605efb4.go", Severity: diag.Error,
		Description: "An enabled websocket server: CraftBot 605efb4's websocket transport refuses to send initialize before the connection counts as connected, which it does only after initialize, so the server never connects. Info for a disabled server.",
		Example:     `{"name": "markets", "transport": "websocket", "url": "wss://markets.example.com/ws"}`})
	// mcpc lint's own inputs: mcpc.cue and policy packs.
	DeploymentInvalid = declare(Rule{ID: "deployment-invalid", Home: "policies/lint/deployment.go", Severity: diag.Error, Description: "mcpc.cue does not fit its schema (an unknown field, a wrong type, a severity other than off, info, warning, error), names a rule that does not exist, or has an ignore without a reason (at least 3 characters), with a broken glob or with neither path nor server; mcpc lint stops (exit 2). An inline ignore (// mcpc:ignore RULE -- reason in an appsettings file) without a rule, with an unknown rule or without a reason is reported the same way, as an error where it stands.",
		Example: `rules: "pakage-unpinned": "off"`})
	// Ignores that no longer apply (policies/lint/apply.go).
	IgnoreUnused = declare(Rule{ID: "ignore-unused", Home: "policies/lint/apply.go", Severity: diag.Warning, Description: "An ignore (in mcpc.cue, or an inline // mcpc:ignore comment) matched no finding of the run: it is stale, and would hide the next real finding of its rule in its place. Remove it.",
		Example: `ignores: [{path: "appsettings.json", rule: "package-unpinned", reason: "the image pins it"}]  (no package-unpinned finding in appsettings.json)`})
	CUESyntax = declare(Rule{ID: "cue-syntax", Home: "schema/fromcue.go", Severity: diag.Error, Description: "A CUE input (mcpc.cue) does not parse, or does not evaluate to data (a conflict, a value left open such as string).",
		Example: `profile: string`})
	PolicyInvalid = declare(Rule{ID: "policy-invalid", Home: "policies/policies.go", Severity: diag.Error, Description: "A policy pack cannot be used: its CUE does not compile, a rule lacks severity, description, example or deny, an id is taken twice, or a rule fails to evaluate on the plan. The message names the rule.",
		Example: `rules: "team-x": {severity: "fatal", …}`})
)
