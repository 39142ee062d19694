package schema

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpc-dev/mcpc/internal/golden"
)

// TestJSONSchemaDrift fails when a committed schema under schema/json is not
// what the CUE schemas generate now. Regenerate: go test ./schema -update.
func TestJSONSchemaDrift(t *testing.T) {
	for _, k := range FileKinds() {
		got, err := JSONSchema(k.Name)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		golden.Compare(t, filepath.Join("json", k.SchemaFile), string(got))
	}
}

// TestJSONSchemaDeterministic: two generations are byte-identical.
func TestJSONSchemaDeterministic(t *testing.T) {
	for _, k := range FileKinds() {
		a, errA := JSONSchema(k.Name)
		b, errB := JSONSchema(k.File)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: two generations differ (%v, %v)", k.Name, errA, errB)
		}
	}
}

// TestJSONSchemaCompiles: each schema is a valid draft 2020-12 schema, and
// every regular expression in it is one an editor (ECMA-262) reads: no
// Go-only syntax such as (?i).
func TestJSONSchemaCompiles(t *testing.T) {
	for _, k := range FileKinds() {
		data, err := JSONSchema(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		if err := c.AddResource(k.SchemaFile, doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile(k.SchemaFile); err != nil {
			t.Errorf("%s: %v", k.Name, err)
		}
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for key, x := range v {
					if p, ok := x.(string); ok && key == "pattern" && strings.Contains(p, "(?") {
						t.Errorf("%s: pattern %q has Go-only syntax", k.Name, p)
					}
					if key == "patternProperties" {
						for p := range x.(map[string]any) {
							if strings.Contains(p, "(?") {
								t.Errorf("%s: pattern %q has Go-only syntax", k.Name, p)
							}
						}
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		var m any
		_ = json.Unmarshal(data, &m)
		walk(m)
	}
}

func TestCaseInsensitivePattern(t *testing.T) {
	got, err := caseInsensitivePattern("^(?i)(trace|none)$")
	if err != nil || got != "^([tT][rR][aA][cC][eE]|[nN][oO][nN][eE])$" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := caseInsensitivePattern("^(?i)[a-z]+$"); err == nil {
		t.Error("a class after (?i) must be refused, not exported wrong")
	}
}

func TestLookupFileKindAndCUESource(t *testing.T) {
	for _, name := range []string{"settings", "settings.json", "mcpc.cue", "deployment", "mcp_config.json", "plan"} {
		k, ok := LookupFileKind(name)
		if !ok {
			t.Errorf("%s: not found", name)
			continue
		}
		src, err := CUESource(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range k.CUEFiles {
			if !strings.Contains(src, "// ---- "+f+" ----") {
				t.Errorf("%s: the CUE source lacks %s", name, f)
			}
		}
		if strings.Count(src, "package schema") != 1 {
			t.Errorf("%s: want one package clause", name)
		}
	}
	if _, ok := LookupFileKind("nope"); ok {
		t.Error("unknown kind found")
	}
}
