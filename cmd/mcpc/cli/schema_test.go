package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaPrintsTheCommittedSchema: mcpc schema KIND prints, byte for
// byte, the file committed under schema/json (the drift test keeps that
// equal to the CUE).
func TestSchemaPrintsTheCommittedSchema(t *testing.T) {
	for kind, file := range map[string]string{"settings": "settings.schema.json", "mcp_config.json": "mcp_config.schema.json", "mcpc.cue": "mcpc.schema.json"} {
		code, stdout, stderr := run(t, "schema", kind)
		want, err := os.ReadFile(filepath.Join("..", "..", "..", "schema", "json", file))
		if err != nil {
			t.Fatal(err)
		}
		if code != ExitOK || stdout != string(want) || stderr != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout equal to %s: %v", kind, code, stderr, file, stdout == string(want))
		}
	}
}

func TestSchemaCUEFormat(t *testing.T) {
	code, stdout, _ := run(t, "schema", "appsettings", "--format", "cue")
	if code != ExitOK || !strings.Contains(stdout, "#Mcp: {") || !strings.Contains(stdout, "#Server: {") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

func TestSchemaUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"schema"}, {"schema", "nope"}, {"schema", "plan", "--format", "yaml"}, {"schema", "plan", "servers"}} {
		code, stdout, stderr := run(t, args...)
		if code != ExitUsage || stdout != "" || stderr == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	_, _, stderr := run(t, "schema", "nope")
	if !strings.Contains(stderr, "settings, appsettings, servers, mcp-config, deployment, plan") {
		t.Errorf("the error should list the kinds: %q", stderr)
	}
}
