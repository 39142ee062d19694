package importer

import (
	"github.com/mcpc-dev/mcpc/diag"
	"github.com/mcpc-dev/mcpc/rules"
)

// The ids of the import report's diagnostics. They describe changes made
// while converting, not problems of a deployment, so they are not lint
// rules of the registry (mcpc rules); Lookup describes them for printers.
// A syntax error of the source is rules.JSONSyntax.
const (
	CodeRenamed             = "import-renamed"
	CodeTemplate            = "import-template"
	CodeTemplateUnsupported = "import-template-unsupported"
	CodeEnvToFill           = "import-env-to-fill"
	CodeDefaultLost         = "import-default-lost"
	CodeRemote              = "import-remote"
	CodeFieldMapped         = "import-field-mapped"
	CodeFieldDropped        = "import-field-dropped"
	CodeSecret              = "import-secret"
	CodeShape               = "import-shape"
	CodeEnvName             = "import-env-name"
	CodeDuplicate           = "import-duplicate"
	CodeNoServers           = "import-no-servers"
)

// Codes describes every id the import report uses besides json-syntax.
var Codes = []rules.Rule{
	{ID: CodeRenamed, Severity: diag.Info, Description: "A server name was changed: characters the target does not allow became _, or the name was taken.",
		Example: `"my server" → "my_server"`},
	{ID: CodeTemplate, Severity: diag.Info, Description: "A ${…} was rewritten into the target's syntax.",
		Example: `"${GITHUB_TOKEN}" → "${env:GITHUB_TOKEN}"; "${workspaceFolder}" → "${workspace}"`},
	{ID: CodeTemplateUnsupported, Severity: diag.Error, Description: "A ${…} the target cannot express where it stands (volcanic reads host variables in env values only; craftbot expands nothing).",
		Example: `"args": ["--token", "${GITHUB_TOKEN}"]`},
	{ID: CodeEnvToFill, Severity: diag.Warning, Description: "A value the source client asked for or read from its environment must now be supplied: a host variable (volcanic) or an env value (craftbot).",
		Example: `"env": {"API_KEY": "${input:api-key}"}`},
	{ID: CodeDefaultLost, Severity: diag.Warning, Description: "${VAR:-default}: the target has no default for a host variable.",
		Example: `"env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"}`},
	{ID: CodeRemote, Severity: diag.Warning, Description: "A remote (HTTP or SSE) server: volcanic adds these per chat with mcpc remote add; craftbot connects over sse or websocket only.",
		Example: `"notes": {"type": "http", "url": "https://mcp.example.com/mcp"}`},
	{ID: CodeFieldMapped, Severity: diag.Info, Description: "A field was mapped to the target's equivalent.",
		Example: `"disabled": true → "enabled": false; "timeout": 30 → "callTimeoutSeconds": 30`},
	{ID: CodeFieldDropped, Severity: diag.Warning, Description: "A field has no equivalent in the target and was left out.",
		Example: `"autoApprove": ["read_file"]`},
	{ID: CodeSecret, Severity: diag.Warning, Description: "A literal credential in the source: volcanic reads it from a host variable instead; craftbot keeps it in the file.",
		Example: `"env": {"GITHUB_TOKEN": "ghp_…"}`},
	{ID: CodeShape, Severity: diag.Error, Description: "The source does not have the shape its client documents (a server that is not an object, a command that is not a string, no command and no url).",
		Example: `"github": {"args": ["-y", "server-github"]}`},
	{ID: CodeEnvName, Severity: diag.Error, Description: "An env key is not a valid variable name for the target ([A-Za-z_][A-Za-z0-9_]*).",
		Example: `"env": {"MY-VAR": "1"}`},
	{ID: CodeDuplicate, Severity: diag.Warning, Description: "A server name appears twice in the source; as the client's JSON reader does, the last one counts.",
		Example: `"github": {…}, "github": {…}`},
	{ID: CodeNoServers, Severity: diag.Warning, Description: "The source defines no server.",
		Example: `{"mcpServers": {}}`},
}

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
