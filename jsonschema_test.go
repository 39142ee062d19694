package mcpc_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/craftbot"
	"github.com/mcpc-dev/mcpc/compile/plan"
	_ "github.com/mcpc-dev/mcpc/compile/profiles"
	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/lint"
	"github.com/mcpc-dev/mcpc/runtime/remote"
	"github.com/mcpc-dev/mcpc/schema"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tailscale/hujson"
)

// The exported JSON Schemas (schema/json) are checked against mcpc itself:
// every example and fixture input of a kind, and a table of good and bad
// inputs where each row says what mcpc and the schema must answer.

// compiledSchema compiles a committed schema with a JSON Schema validator
// that is not CUE (santhosh-tekuri/jsonschema, draft 2020-12).
func compiledSchema(t *testing.T, kind string) *jsonschema.Schema {
	t.Helper()
	k, ok := schema.LookupFileKind(kind)
	if !ok {
		t.Fatalf("no kind %s", kind)
	}
	path := filepath.Join("schema", "json", k.SchemaFile)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// instance reads a file as the schema sees it: JSONC made JSON (an editor
// opens appsettings as JSON with comments), mcpc.cue evaluated to JSON.
// ok is false when the file is not data at all (a syntax error, which is
// the parser's business, not the schema's).
func instance(kind, file string, data []byte) (any, bool) {
	switch kind {
	case "appsettings":
		std, err := hujson.Standardize(append([]byte(nil), data...))
		if err != nil {
			return nil, false
		}
		data = std
	case "deployment":
		v := cuecontext.New().CompileBytes(data, cue.Filename(file))
		if v.Err() != nil {
			return nil, false
		}
		b, err := v.MarshalJSON()
		if err != nil {
			return nil, false
		}
		data = b
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, false
	}
	return inst, true
}

// verdict is what mcpc says of one file: "ok" (no diagnostic), "warning"
// (warnings only) or "error".
func mcpcVerdict(t *testing.T, kind, file string, data []byte) (string, []diag.Diagnostic) {
	t.Helper()
	var ds []diag.Diagnostic
	switch kind {
	case "settings", "appsettings":
		dir := t.TempDir()
		opts := compile.Options{CleanEnv: true, AgentDir: dir, HomeDir: dir}
		if kind == "settings" {
			opts.AgentDir = filepath.Dir(file)
		} else {
			opts.AppSettings = []string{file}
		}
		res, err := compile.Compile(opts)
		if err != nil {
			return "error", nil
		}
		for _, d := range res.Diagnostics {
			if d.File == file { // only this file's findings
				ds = append(ds, d)
			}
		}
	case "servers":
		ds = remote.Parse(file, data).Diagnostics
	case "mcp-config":
		_, got, err := craftbot.Check(file, data, craftbot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ds = got
	case "deployment":
		_, ds = lint.Parse(file, data)
	case "plan":
		_, ds = plan.Read(file, data)
	}
	v := "ok"
	for _, d := range ds {
		if d.Severity == diag.Error {
			return "error", ds
		}
		v = "warning"
	}
	return v, ds
}

// kindOf is the schema kind of an example or fixture file by its name.
func kindOf(path string) string {
	base := filepath.Base(path)
	switch {
	case base == "settings.json":
		return "settings"
	case base == "servers.json":
		return "servers"
	case base == "mcp_config.json":
		return "mcp-config"
	case base == "mcpc.cue":
		return "deployment"
	case base == "plan.json", base == "old.json" && strings.Contains(path, "diff-"), base == "new.json" && strings.Contains(path, "diff-"):
		return "plan"
	case strings.HasPrefix(base, "appsettings") && strings.HasSuffix(base, ".json"):
		return "appsettings"
	}
	return ""
}

// TestJSONSchemaAgreesOnExamplesAndFixtures: every example and fixture
// input of a kind is checked by the schema and by mcpc. The schema may
// reject a file only when mcpc reports something about it (a fixture that
// mcpc finds clean must pass the schema: no false alarm in an editor), and
// the examples must pass both.
func TestJSONSchemaAgreesOnExamplesAndFixtures(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{}
	checked := map[string]int{}
	for _, root := range []string{"examples", "fixtures"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			kind := kindOf(path)
			if kind == "" {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			inst, ok := instance(kind, path, data)
			if !ok {
				return nil
			}
			if schemas[kind] == nil {
				schemas[kind] = compiledSchema(t, kind)
			}
			checked[kind]++
			schemaErr := schemas[kind].Validate(inst)
			verdict, ds := mcpcVerdict(t, kind, path, data)
			if root == "examples" && (schemaErr != nil || verdict == "error") {
				t.Errorf("%s: an example must pass: schema %v; mcpc %s %v", path, schemaErr, verdict, ds)
			}
			if schemaErr != nil && verdict == "ok" {
				t.Errorf("%s: the %s schema rejects what mcpc finds clean: %v", path, kind, schemaErr)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range schema.FileKinds() {
		if checked[k.Name] == 0 {
			t.Errorf("no example or fixture of kind %s was checked", k.Name)
		}
	}
	t.Logf("files checked per kind: %v", checked)
}

// agreement is one input with what mcpc and the schema answer. differ
// says why they may not agree (empty: they must).
type agreement struct {
	kind, name, text string
	mcpc             string // ok, warning, error
	schemaOK         bool
	differ           string
}

var agreements = []agreement{
	{"settings", "minimal", `{"mcpServers": {"a": {"command": "npx"}}}`, "ok", true, ""},
	{"settings", "every field", `{"theme": "dark", "mcpServers": {"a": {"command": "npx", "args": ["-y", "x"], "cwd": "${workspace}/a",
		"env": {"A": "1", "B": null}, "toolPrefix": "a_", "enabled": false, "parallel": true, "startupTimeoutSeconds": 5,
		"callTimeoutSeconds": 9, "idleTimeoutSeconds": 0, "stderrLevel": "debug", "promptSection": null}}}`, "ok", true, ""},
	{"settings", "a $schema line", `{"$schema": "./schema/json/settings.schema.json", "mcpServers": {}}`, "ok", true, ""},
	{"settings", "timeout 0", `{"mcpServers": {"a": {"command": "x", "startupTimeoutSeconds": 0}}}`, "error", false, ""},
	{"settings", "timeout as a string", `{"mcpServers": {"a": {"command": "x", "callTimeoutSeconds": "60"}}}`, "error", false, ""},
	{"settings", "idle negative", `{"mcpServers": {"a": {"command": "x", "idleTimeoutSeconds": -1}}}`, "error", false, ""},
	{"settings", "stderr level", `{"mcpServers": {"a": {"command": "x", "stderrLevel": "verbose"}}}`, "error", false, ""},
	{"settings", "prefix chars", `{"mcpServers": {"a": {"command": "x", "toolPrefix": "a b"}}}`, "error", false, ""},
	{"settings", "prefix mcp__", `{"mcpServers": {"a": {"command": "x", "toolPrefix": "mcp__a"}}}`, "error", false, ""},
	{"settings", "no command", `{"mcpServers": {"a": {"args": []}}}`, "error", false, ""},
	{"settings", "empty command", `{"mcpServers": {"a": {"command": ""}}}`, "error", false, ""},
	{"settings", "args not strings", `{"mcpServers": {"a": {"command": "x", "args": [1]}}}`, "error", false, ""},
	{"settings", "unknown field", `{"mcpServers": {"a": {"command": "x", "comand": "y"}}}`, "warning", false,
		"the host ignores an unknown field and mcpc warns (unknown-field); the schema flags it, which an editor shows as a warning"},

	{"appsettings", "PascalCase, strings that convert", `{"Logging": {}, "Mcp": {"Servers": {"gh": {"Command": "x", "StartupTimeoutSeconds": " 90 ", "Enabled": "TRUE"}}}}`, "ok", true, ""},
	{"appsettings", "a $schema line", `{"$schema": "./schema/json/appsettings.schema.json", "Mcp": {"Servers": {"gh": {"Command": "x"}}}}`, "ok", true, ""},
	{"appsettings", "keys in any case", `{"mcp": {"SERVERS": {"gh": {"command": "x", "ARGS": ["a"], "parallel": true}}}}`, "ok", true, ""},
	{"appsettings", "comments (JSONC)", "{\n// the host\n\"Mcp\": {\"Servers\": {\"gh\": {\"Command\": \"x\",}}}}", "ok", true, ""},
	{"appsettings", "number that does not convert", `{"Mcp": {"Servers": {"gh": {"Command": "x", "CallTimeoutSeconds": "soon"}}}}`, "error", false, ""},
	{"appsettings", "bool that does not convert", `{"Mcp": {"Servers": {"gh": {"Command": "x", "Enabled": "yes"}}}}`, "error", false, ""},
	{"appsettings", "args not a list", `{"Mcp": {"Servers": {"gh": {"Command": "x", "Args": "-y"}}}}`, "error", false, ""},
	{"appsettings", "level in any case", `{"Mcp": {"Servers": {"gh": {"Command": "x", "StderrLevel": "ERROR"}}}}`, "ok", true, ""},
	{"appsettings", "playwright empty = unset", `{"Mcp": {"Playwright": {"Enabled": "", "Headless": null, "Browser": "firefox"}}}`, "ok", true, ""},
	{"appsettings", "unknown field", `{"Mcp": {"Servers": {"gh": {"Command": "x", "Comand": "y"}}}}`, "warning", false,
		"the host ignores an unknown field and mcpc warns (unknown-field); the schema flags it"},
	{"appsettings", "no command in this file", `{"Mcp": {"Servers": {"gh": {"Args": ["a"]}}}}`, "error", true,
		"an environment variable or a later appsettings file may set Command; the schema sees one file, mcpc the whole layering"},
	{"appsettings", "hexadecimal number", `{"Mcp": {"Servers": {"gh": {"Command": "x", "StartupTimeoutSeconds": "0x3C"}}}}`, "ok", false,
		".NET's Int32Converter reads 0x3C; the schema's pattern takes decimal digits only"},
	{"appsettings", "a key twice in different case", `{"Mcp": {"Servers": {"gh": {"Command": "x", "command": "y"}}}}`, "error", true,
		"JSON Schema compares keys exactly; .NET configuration sees one key set twice (duplicate-key)"},
	{"appsettings", "colon keys", `{"Mcp:Servers:gh:StartupTimeoutSeconds": "soon", "Mcp": {"Servers": {"gh": {"Command": "x"}}}}`, "error", true,
		"a key with ':' is a path in .NET configuration; to JSON Schema it is one more top-level key"},

	{"servers", "good", `{"version": 1, "servers": [{"name": "notes", "url": "https://mcp.example.com/mcp", "transport": "auto", "tools": ["a"], "auth": "headers", "sealed": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`, "ok", true, ""},
	{"servers", "name", `{"version": 1, "servers": [{"name": "Notes", "url": "https://mcp.example.com/mcp", "transport": "auto", "auth": "headers", "sealed": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`, "error", false, ""},
	{"servers", "transport", `{"version": 1, "servers": [{"name": "n", "url": "https://mcp.example.com/mcp", "transport": "ws", "auth": "headers", "sealed": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`, "error", false, ""},
	{"servers", "sealed too short", `{"version": 1, "servers": [{"name": "n", "url": "https://mcp.example.com/mcp", "transport": "http", "auth": "headers", "sealed": "AAAA"}]}`, "error", false, ""},
	{"servers", "sealed not base64", `{"version": 1, "servers": [{"name": "n", "url": "https://mcp.example.com/mcp", "transport": "http", "auth": "headers", "sealed": "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"}]}`, "error", false, ""},
	{"servers", "version", `{"version": 2, "servers": []}`, "error", false, ""},
	{"servers", "tools repeated", `{"version": 1, "servers": [{"name": "n", "url": "https://mcp.example.com/mcp", "transport": "http", "tools": ["a", "a"], "auth": "headers", "sealed": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`, "error", false, ""},
	{"servers", "no sealed", `{"version": 1, "servers": [{"name": "n", "url": "https://mcp.example.com/mcp", "transport": "http", "auth": "headers"}]}`, "error", false, ""},
	{"servers", "names repeated", `{"version": 1, "servers": [{"name": "n", "url": "https://a.example.com/", "transport": "http", "auth": "headers", "sealed": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"name": "n", "url": "https://b.example.com/", "transport": "http", "auth": "headers", "sealed": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`, "error", true,
		"JSON Schema cannot say that a property is unique across array elements"},

	{"mcp-config", "good", `{"auto_connect": true, "mcp_servers": [{"name": "fs", "transport": "stdio", "command": "npx", "args": ["-y", "x"]},
		{"name": "web", "transport": "sse", "url": "http://127.0.0.1:9/sse", "enabled": false, "action_set_name": null}]}`, "ok", true, ""},
	{"mcp-config", "transport", `{"mcp_servers": [{"name": "a", "transport": "grpc", "command": "x"}]}`, "error", false, ""},
	{"mcp-config", "transport disabled", `{"mcp_servers": [{"name": "a", "transport": "grpc", "command": "x", "enabled": false}]}`, "warning", false, ""},
	{"mcp-config", "no transport is stdio", `{"mcp_servers": [{"name": "a", "command": "x"}]}`, "ok", true, ""},
	{"mcp-config", "stdio without command", `{"mcp_servers": [{"name": "a", "transport": "stdio"}]}`, "error", false, ""},
	{"mcp-config", "no transport without command", `{"mcp_servers": [{"name": "a", "enabled": false}]}`, "warning", false, ""},
	{"mcp-config", "sse without url", `{"mcp_servers": [{"name": "a", "transport": "sse"}]}`, "error", false, ""},
	{"mcp-config", "no name", `{"mcp_servers": [{"transport": "stdio", "command": "x"}]}`, "error", false, ""},
	{"mcp-config", "names repeated", `{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "x"}, {"name": "a", "transport": "stdio", "command": "y"}]}`, "error", true,
		"JSON Schema cannot say that a property is unique across array elements"},

	{"deployment", "good", `profile: "volcanic"
sources: {appsettings: ["appsettings.json"], agentDir: "agent"}
rules: {"unknown-field": "error"}
target: {os: "linux", clients: ["cursor"]}
policies: {packs: ["baseline"]}
`, "ok", true, ""},
	{"deployment", "profile", `profile: "other"`, "error", false, ""},
	{"deployment", "severity", `rules: {"unknown-field": "fatal"}`, "error", false, ""},
	{"deployment", "ignore without reason", `ignores: [{path: "*", rule: "unknown-field"}]`, "error", false, ""},
	{"deployment", "unknown rule id", `rules: {"no-such-rule": "off"}`, "ok", true, "rule ids are checked by mcpc lint against the rules and packs it runs, not by lint.Parse or the schema"},
}

// TestJSONSchemaAgreesWithMcpc runs the table: mcpc and the schema answer
// as each row says, and a row where they differ says why.
func TestJSONSchemaAgreesWithMcpc(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{}
	for _, a := range agreements {
		t.Run(a.kind+"/"+a.name, func(t *testing.T) {
			if schemas[a.kind] == nil {
				schemas[a.kind] = compiledSchema(t, a.kind)
			}
			k, _ := schema.LookupFileKind(a.kind)
			dir := t.TempDir()
			file := filepath.Join(dir, k.File)
			if err := os.WriteFile(file, []byte(a.text), 0o644); err != nil {
				t.Fatal(err)
			}
			inst, ok := instance(a.kind, file, []byte(a.text))
			if !ok {
				t.Fatal("the input is not data")
			}
			schemaErr := schemas[a.kind].Validate(inst)
			if (schemaErr == nil) != a.schemaOK {
				t.Errorf("schema accepts: %v, want %v (%v)", schemaErr == nil, a.schemaOK, schemaErr)
			}
			got, ds := mcpcVerdict(t, a.kind, file, []byte(a.text))
			if got != a.mcpc {
				t.Errorf("mcpc says %s, want %s: %v", got, a.mcpc, ds)
			}
			agree := a.schemaOK == (a.mcpc == "ok")
			if !agree && a.differ == "" {
				t.Error("mcpc and the schema differ here, and the row does not say why")
			}
		})
	}
}
