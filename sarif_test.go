package mcpc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
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

// sarifMultitool is the npm package @microsoft/sarif-multitool-linux
// (package.json, installed by npm ci): the official SARIF 2.1.0 schema
// (sarif-2.1.0.json) and Microsoft's SARIF validator.
func sarifMultitool(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("node_modules", "@microsoft", "sarif-multitool-linux")
	if _, err := os.Stat(filepath.Join(dir, "sarif-2.1.0.json")); err != nil {
		if os.Getenv("MCPC_REQUIRE_NPM") != "" {
			t.Fatalf("no %s (npm ci installs it): %v", dir, err)
		}
		t.Skipf("no %s: run npm ci", dir)
	}
	return dir
}

// TestSarifOfARepositoryRun: the SARIF of one lint run over two deployments
// of a repository, one with an ignore, and of a run that fails, is one log
// valid against the official SARIF 2.1.0 schema (with its formats checked:
// helpUri and the base URI are absolute URIs) and passes Microsoft's SARIF
// validator without an error.
func TestSarifOfARepositoryRun(t *testing.T) {
	tool := sarifMultitool(t)
	abs, err := filepath.Abs(tool)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(tool, "sarif-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	write := func(name, text string, mode os.FileMode) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(".git/HEAD", "ref: refs/heads/main\n", 0o644)
	for _, dep := range []string{"a", "b"} {
		write(dep+"/bin/npx", "#!/bin/sh\nexit 0\n", 0o755)
		write(dep+"/mcpc.cue", `sources: {appsettings: ["appsettings.json"], cleanEnv: true}
target: path: "bin"
ignores: [{path: "appsettings.json", rule: "runtime-missing", reason: "the image installs uv"}]`, 0o644)
	}
	write("a/appsettings.json", `{"Mcp": {"Servers": {
  "everything": {"Command": "npx", "Args": ["-y", "@modelcontextprotocol/server-everything"]},
  "fetch": {"Command": "uvx", "Args": ["mcp-server-fetch==2025.4.7"]}}}}`, 0o644)
	write("b/appsettings.json", `{"Mcp": {"Servers": {"x": {"Command": "npx", "Args": ["-y", "server-x"]}, "y": {"Comand": "npx"}}}}`, 0o644)

	write("c/mcpc.cue", "sourcez: {}\n", 0o644)
	runs := map[string][]string{
		"two deployments": {"lint", "--format", "sarif", filepath.Join(root, "a"), filepath.Join(root, "b")},
		// A deployment that cannot be linted (its mcpc.cue is broken): the
		// run fails, and the one linted before is in the document.
		"failed": {"lint", "--format", "sarif", filepath.Join(root, "a"), filepath.Join(root, "c")},
	}
	for name, args := range runs {
		code, stdout, stderr := run(args...)
		if code == 0 || code > 2 || !strings.Contains(stdout, `"suppressions"`) {
			t.Errorf("%s: exit %d\n%s%s", name, code, stdout, stderr)
			continue
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(stdout))
		if err != nil {
			t.Errorf("%s: not one JSON document: %v\n%s", name, err, stdout)
			continue
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("%s: not valid SARIF 2.1.0: %v\n%s", name, err, stdout)
		}
		file := filepath.Join(t.TempDir(), "mcpc.sarif")
		if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(abs, "Sarif.Multitool"), "validate", file)
		cmd.Env = append(os.Environ(), "DOTNET_CLI_TELEMETRY_OPTOUT=1", "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), ": error ") {
			t.Errorf("%s: the SARIF multitool: %v\n%s\n%s", name, err, out, stdout)
		}
	}
}
