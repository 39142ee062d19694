package mcpc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSARIFValidatesAgainstItsSchema: the SARIF that validate and lint print
// for every golden case is valid against the SARIF 2.1.0 schema
// (internal/report/testdata/sarif-2.1.0-rtm.5.json, from the npm package
// @microsoft/jest-sarif 1.0.0-beta.0, MIT), with a JSON Schema validator
// library rather than our own reading of the standard.
func TestSARIFValidatesAgainstItsSchema(t *testing.T) {
	f, err := os.Open(filepath.Join("internal", "report", "testdata", "sarif-2.1.0-rtm.5.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	// The schema does reject: a run whose tool has no driver.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"version": "2.1.0", "runs": [{"tool": {}}]}`))
	if schema.Validate(bad) == nil {
		t.Fatal("the SARIF schema accepts a run without tool.driver")
	}
	checked := 0
	for _, gc := range loadCases(t) {
		var args []string
		switch {
		case gc.command == nil:
			args = append([]string{"validate", "--format", "sarif"}, gc.args...)
		case gc.command[0] == "lint":
			args = append([]string{"lint", "--format", "sarif"}, gc.command[1:]...)
		default:
			continue
		}
		code, stdout, stderr := run(args...)
		if code > 1 || strings.TrimSpace(stdout) == "" {
			continue // usage errors print no report
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(stdout)))
		if err != nil {
			t.Errorf("%s: not JSON: %v\n%s%s", gc.name, err, stdout, stderr)
			continue
		}
		if err := schema.Validate(v); err != nil {
			var pretty bytes.Buffer
			json.Indent(&pretty, []byte(stdout), "", "  ")
			t.Errorf("%s: SARIF not valid: %v\n%s", gc.name, err, pretty.String())
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d SARIF reports checked", checked)
	}
}
