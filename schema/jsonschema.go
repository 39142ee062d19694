package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/encoding/jsonschema"
)

// A FileKind is an input file that `mcpc schema` describes: a JSON Schema
// (draft 2020-12) for editors, generated from the CUE definitions that
// validate it, and the CUE source itself.
type FileKind struct {
	Name string // what `mcpc schema NAME` takes
	File string // the file it describes, also accepted as NAME
	// SchemaFile is the generated schema's name under schema/json/.
	SchemaFile  string
	Title       string
	Description string
	// CUEFiles are the embedded schema files that validate the kind.
	CUEFiles []string
	build    func(*exporter) (map[string]any, error)
}

// hostDifferences is what the appsettings schema cannot check like mcpc,
// said in its description so that a user reads it on hover.
const hostDifferences = "Keys are case-insensitive, as in .NET configuration; the schema lists the canonical spelling and " +
	"accepts any other. A string converts to a number or to true/false when the host binds it, as the host does. " +
	"What the schema cannot see: keys with ':' (\"Mcp:Servers:x:Command\"), environment variables (Mcp__Servers__x__Command) " +
	"and later appsettings files that complete an entry, a key set twice in different case, and hexadecimal numbers " +
	"(\"0x3C\"); mcpc validate checks all of it."

var fileKinds = []FileKind{
	{
		Name: "settings", File: "settings.json", SchemaFile: "settings.schema.json",
		Title: "volcanic agent settings.json (mcpServers)",
		Description: "The agent's settings file, <agentDir>/settings.json. The extension reads only mcpServers (in file order, after " +
			"the host's Mcp:Servers and the Playwright preset, which win a name they also define); other top-level keys belong to someone else. " +
			"Strict JSON: no comments. Unknown fields of an entry are ignored by the host (mcpc warns: unknown-field).",
		CUEFiles: []string{"settings.cue", "server.cue"}, build: buildSettings,
	},
	{
		Name: "appsettings", File: "appsettings.json", SchemaFile: "appsettings.schema.json",
		Title: "volcanic host configuration (the Mcp section of appsettings.json)",
		Description: "The host's appsettings files (JSON with comments), layered in order; mcpc reads the Mcp section. " +
			hostDifferences,
		CUEFiles: []string{"host.cue", "server.cue"}, build: buildAppsettings,
	},
	{
		Name: "servers", File: "servers.json", SchemaFile: "servers.schema.json",
		Title: "volcanic remote servers (<workspace>/.volcanic/mcp/servers.json)",
		Description: "A chat's remote MCP servers, written by `mcpc remote add`. The schema cannot check that names are unique, " +
			"that url parses, or that sealed opens with the host's secret for this chat: `mcpc remote list` does.",
		CUEFiles: []string{"remote.cue"}, build: buildServers,
	},
	{
		Name: "mcp-config", File: "mcp_config.json", SchemaFile: "mcp_config.schema.json",
		Title: "CraftBot app/config/mcp_config.json",
		Description: "CraftBot's MCP servers. The host skips an entry that breaks this schema and loads the rest (mcpc warns). " +
			"The schema cannot check that names are unique or that a command exists on the target OS: mcpc validate does.",
		CUEFiles: []string{"craftbot.cue"}, build: buildMcpConfig,
	},
	{
		Name: "deployment", File: "mcpc.cue", SchemaFile: "mcpc.schema.json",
		Title: "mcpc.cue (a deployment for mcpc lint)",
		Description: "One deployment's sources and how mcpc lint checks it, written in CUE (or JSON of the same shape); " +
			"paths are relative to the file's directory. Rule ids and policy packs are checked by mcpc lint.",
		CUEFiles: []string{"deployment.cue"}, build: buildDeployment,
	},
	{
		Name: "plan", File: "plan.json", SchemaFile: "plan.schema.json",
		Title: "mcpc launch plan (planVersion 1)",
		Description: "The plan mcpc plan writes and mcpc run reads: a volcanic or a craftbot plan. Written by mcpc, never by hand; " +
			"the schema cannot check the digest.",
		CUEFiles: []string{"plan.cue"}, build: buildPlan,
	},
}

// FileKinds returns every kind `mcpc schema` exports, in a fixed order.
func FileKinds() []FileKind { return append([]FileKind(nil), fileKinds...) }

// LookupFileKind finds a kind by its name or by the file it describes.
func LookupFileKind(name string) (FileKind, bool) {
	for _, k := range fileKinds {
		if name == k.Name || name == k.File || name == k.SchemaFile {
			return k, true
		}
	}
	return FileKind{}, false
}

// JSONSchema generates the JSON Schema of a kind: indented JSON with sorted
// keys and a trailing newline, byte-identical for the same CUE.
func JSONSchema(kind string) ([]byte, error) {
	k, ok := LookupFileKind(kind)
	if !ok {
		return nil, fmt.Errorf("unknown schema kind %q", kind)
	}
	x, err := newExporter()
	if err != nil {
		return nil, err
	}
	doc, err := k.build(x)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", k.Name, err)
	}
	doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	doc["title"] = k.Title
	doc["description"] = k.Description
	if len(x.defs) > 0 {
		doc["$defs"] = x.defs
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// CUESource returns the CUE schema files of a kind as one CUE file.
func CUESource(kind string) (string, error) {
	k, ok := LookupFileKind(kind)
	if !ok {
		return "", fmt.Errorf("unknown schema kind %q", kind)
	}
	src := Sources()
	var b strings.Builder
	b.WriteString("package schema\n")
	for _, f := range k.CUEFiles {
		text, ok := src[f]
		if !ok {
			return "", fmt.Errorf("schema %s: no embedded file %s", k.Name, f)
		}
		fmt.Fprintf(&b, "\n// ---- %s ----\n", f)
		b.WriteString(strings.TrimLeft(strings.Replace(text, "package schema\n", "", 1), "\n"))
	}
	return b.String(), nil
}

// exporter turns CUE definitions into one JSON Schema document: each
// definition through CUE's own encoder (encoding/jsonschema.Generate), then
// corrected and completed where the encoder cannot say what mcpc checks.
type exporter struct {
	v    *Validator
	defs map[string]any // the document's $defs
}

func newExporter() (*exporter, error) {
	v, err := New()
	if err != nil {
		return nil, err
	}
	return &exporter{v: v, defs: map[string]any{}}, nil
}

// generate encodes one definition (e.g. "#Server") and returns its schema;
// the definitions it refers to go to the document's $defs.
func (x *exporter) generate(def string) (map[string]any, error) {
	val := x.v.cueSchema().root.LookupPath(cue.ParsePath(def))
	if err := val.Err(); err != nil {
		return nil, err
	}
	expr, err := jsonschema.Generate(val, &jsonschema.GenerateConfig{NamesFunc: defNames})
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", def, err)
	}
	data, err := x.v.cueSchema().ctx.BuildExpr(expr).MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", def, err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", def, err)
	}
	if defs, ok := m["$defs"].(map[string]any); ok {
		for name, d := range defs {
			body := d.(map[string]any)
			if err := x.annotate(body, x.v.cueSchema().root.LookupPath(cue.ParsePath("#"+name))); err != nil {
				return nil, err
			}
			if err := x.addDef(name, body); err != nil {
				return nil, err
			}
		}
	}
	delete(m, "$defs")
	delete(m, "$schema")
	if err := x.annotate(m, val); err != nil {
		return nil, err
	}
	return m, nil
}

// defNames names a $defs entry after its CUE definition without the "#":
// the definitions are all top-level, so the names are unique.
func defNames(refs []*jsonschema.CUERef) {
	for _, r := range refs {
		sels := r.Path.Selectors()
		r.Name = strings.TrimPrefix(sels[len(sels)-1].String(), "#")
	}
}

// addDef puts a definition into $defs; two encodings of one definition
// (it is referred to from two places) must agree.
func (x *exporter) addDef(name string, body map[string]any) error {
	if old, ok := x.defs[name]; ok {
		a, _ := json.Marshal(old)
		b, _ := json.Marshal(body)
		if !bytes.Equal(a, b) {
			return fmt.Errorf("two different encodings of #%s", name)
		}
		return nil
	}
	x.defs[name] = body
	return nil
}

// annotate walks an encoded schema together with its CUE value and fixes
// what the encoder says differently from mcpc:
//   - required: the encoder leaves out a regular field whose value is
//     concrete or has a default (an open list, a constant such as auth:
//     "headers"), since CUE could fill it in; mcpc's validator requires
//     every field declared without "?". required is rebuilt from CUE.
//   - a case-insensitive pattern "(?i)…" is Go (RE2) syntax that editors'
//     ECMA-262 regular expressions reject: it is spelt out as [aA]-classes,
//     and the choices of its @check want text become "examples", so that an
//     editor completes them.
//   - allOf [number, integer…], how the encoder says "int & >0", becomes
//     the integer schema alone.
func (x *exporter) annotate(m map[string]any, v cue.Value) error {
	simplifyInteger(m)
	if p, ok := m["pattern"].(string); ok {
		ci, err := caseInsensitivePattern(p)
		if err != nil {
			return err
		}
		m["pattern"] = ci
		if ci != p {
			attr := v.Attribute("check")
			want, _, _ := attr.Lookup(0, "want")
			if alts := enumAlternatives(want); len(alts) > 0 {
				m["examples"] = toAny(alts)
			}
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		it, err := v.Fields(cue.Optional(true))
		if err != nil {
			return err
		}
		var required []string
		for it.Next() {
			name := it.Selector().Unquoted()
			if !it.IsOptional() {
				required = append(required, name)
			}
			if p, ok := props[name].(map[string]any); ok {
				if err := x.annotate(p, it.Value()); err != nil {
					return err
				}
			}
		}
		sort.Strings(required)
		delete(m, "required")
		if len(required) > 0 {
			m["required"] = toAny(required)
		}
	}
	if items, ok := m["items"].(map[string]any); ok {
		if err := x.annotate(items, v.LookupPath(cue.MakePath(cue.AnyIndex))); err != nil {
			return err
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		if err := x.annotate(ap, v.LookupPath(cue.MakePath(cue.AnyString))); err != nil {
			return err
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		// The branches of "T | null": scalars, each annotated with the
		// whole value (its attribute and kinds are the field's).
		if alts, ok := m[key].([]any); ok {
			for _, a := range alts {
				if am, ok := a.(map[string]any); ok && am["properties"] == nil {
					if err := x.annotate(am, v); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// simplifyInteger turns {"allOf": [{"type": "number"}, {"type": "integer", …}]}
// into {"type": "integer", …}.
func simplifyInteger(m map[string]any) {
	all, ok := m["allOf"].([]any)
	if !ok || len(all) != 2 {
		return
	}
	num, _ := all[0].(map[string]any)
	integer, _ := all[1].(map[string]any)
	if len(num) != 1 || num["type"] != "number" || integer == nil || integer["type"] != "integer" {
		return
	}
	delete(m, "allOf")
	for k, v := range integer {
		m[k] = v
	}
}

// caseInsensitivePattern rewrites "^(?i)(a|b)$" as "^([aA]|[bB])$". It
// handles what mcpc's schemas use, letters and | ( ) ^ $ after the flag;
// anything else is an error, so that a new pattern is not exported wrong.
func caseInsensitivePattern(p string) (string, error) {
	i := strings.Index(p, "(?i)")
	if i < 0 {
		return p, nil
	}
	var b strings.Builder
	b.WriteString(p[:i])
	for _, r := range p[i+len("(?i)"):] {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteString("[" + strings.ToLower(string(r)) + strings.ToUpper(string(r)) + "]")
		case r >= '0' && r <= '9' || strings.ContainsRune("|()^$_-", r):
			b.WriteRune(r)
		default:
			return "", fmt.Errorf("pattern %q: %q after (?i) is not handled by the JSON Schema export", p, r)
		}
	}
	return b.String(), nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// at returns the object at a path of keys inside a schema; a missing one
// means the CUE schema changed shape and the export must follow.
func at(m map[string]any, keys ...string) (map[string]any, error) {
	cur := m
	for i, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the encoded schema has no object at %s", strings.Join(keys[:i+1], "/"))
		}
		cur = next
	}
	return cur, nil
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }

// setDefaults writes "default" into the properties of an object schema.
func setDefaults(obj map[string]any, defaults map[string]any) error {
	for field, value := range defaults {
		p, err := at(obj, "properties", field)
		if err != nil {
			return err
		}
		p["default"] = value
	}
	return nil
}
