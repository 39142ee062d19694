package importer

import (
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// The import report's codes. They describe changes made while converting,
// not problems of a deployment, so they are not lint rules of the registry
// (mcpc rules); each is declared once here with its severity, and the
// converter reports through it (Rule.At). Lookup describes them for
// printers. A syntax error of the source is rules.JSONSyntax.
var (
	Renamed = rules.Rule{ID: "import-renamed", Severity: diag.Info, Description: "A server name was changed: characters the target does not allow became _, or the name was taken.",
		Example: `"my server" → "my_server"`}
	Template = rules.Rule{ID: "import-template", Severity: diag.Info, Description: "A ${…} was rewritten into the target's syntax.",
		Example: `"${GITHUB_TOKEN}" → "${env:GITHUB_TOKEN}"; "${workspaceFolder}" → "${workspace}"`}
	TemplateUnsupported = rules.Rule{ID: "import-template-unsupported", Severity: diag.Error, Description: "A ${…} the target cannot express where it stands (volcanic reads host variables in env values only; craftbot expands nothing).",
		Example: `"args": ["--token", "${GITHUB_TOKEN}"]`}
	EnvToFill = rules.Rule{ID: "import-env-to-fill", Severity: diag.Warning, Description: "A value the source client asked for or read from its environment must now be supplied: a host variable (volcanic) or an env value (craftbot).",
		Example: `"env": {"API_KEY": "${input:api-key}"}`}
	DefaultLost = rules.Rule{ID: "import-default-lost", Severity: diag.Warning, Description: "${VAR:-default}: the target has no default for a host variable.",
		Example: `"env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"}`}
	Remote = rules.Rule{ID: "import-remote", Severity: diag.Warning, Description: "A remote (HTTP or SSE) server: volcanic adds these per chat with mcpc remote add; craftbot connects over sse or websocket only.",
		Example: `"notes": {"type": "http", "url": "https://mcp.example.com/mcp"}`}
	FieldMapped = rules.Rule{ID: "import-field-mapped", Severity: diag.Info, Description: "A field was mapped to the target's equivalent.",
		Example: `"disabled": true → "enabled": false; "timeout": 30 → "callTimeoutSeconds": 30`}
	FieldDropped = rules.Rule{ID: "import-field-dropped", Severity: diag.Warning, Description: "A field has no equivalent in the target and was left out.",
		Example: `"autoApprove": ["read_file"]`}
	Secret = rules.Rule{ID: "import-secret", Severity: diag.Warning, Description: "A literal credential in the source: volcanic reads it from a host variable instead; craftbot keeps it in the file.",
		Example: `"env": {"GITHUB_TOKEN": "ghp_…"}`}
	Shape = rules.Rule{ID: "import-shape", Severity: diag.Error, Description: "The source does not have the shape its client documents (a server that is not an object, a command that is not a string, no command and no url).",
		Example: `"github": {"args": ["-y", "server-github"]}`}
	InputIgnored = rules.Rule{ID: "import-input-ignored", Severity: diag.Warning, Description: "VS Code's \"inputs\" are not a list, or an entry has no string \"id\": VS Code would not prompt for it, and the import ignores it.",
		Example: `"inputs": [{"type": "promptString", "description": "API key"}]`}
	EnvName = rules.Rule{ID: "import-env-name", Severity: diag.Error, Description: "An env key is not a valid variable name for the target ([A-Za-z_][A-Za-z0-9_]*).",
		Example: `"env": {"MY-VAR": "1"}`}
	Duplicate = rules.Rule{ID: "import-duplicate", Severity: diag.Warning, Description: "A server name appears twice in the source; as the client's JSON reader does, the last one counts.",
		Example: `"github": {…}, "github": {…}`}
	NoServers = rules.Rule{ID: "import-no-servers", Severity: diag.Warning, Description: "The source defines no server.",
		Example: `{"mcpServers": {}}`}
)

// Codes describes every id the import report uses besides json-syntax.
var Codes = []rules.Rule{Renamed, Template, TemplateUnsupported, EnvToFill, DefaultLost, Remote, FieldMapped, FieldDropped, Secret, Shape, InputIgnored, EnvName, Duplicate, NoServers}

// Lookup describes an id of the import report: one of Codes, else a rule
// of the registry (json-syntax).
func Lookup(id string) (rules.Rule, bool) {
	for _, r := range Codes {
		if r.ID == id {
			return r, true
		}
	}
	return rules.Lookup(id)
}
