package volcanic

import (
	"testing"

	"github.com/mcpc-dev/mcpc/internal/diag"
)

// Unknown fields that mean a known one too far for the did-you-mean get it;
// fields of other clients become foreign-field with what to write instead.
func TestExplainForeign(t *testing.T) {
	ds := []diag.Diagnostic{
		{Rule: "unknown-field", Message: `server "a": unknown field "Enviroment" is ignored by the host`},
		{Rule: "unknown-field", Message: `server "a": unknown field "workingDirectory" is ignored by the host`},
		{Rule: "unknown-field", Message: `server "a": unknown field "comand" is ignored by the host`, Suggestion: `did you mean "command"?`},
		{Rule: "unknown-field", Message: `server "a": unknown field "alwaysAllow" is ignored by the host`},
		{Rule: "type-mismatch", Message: `server "a": unknown field "disabled"`},
	}
	explainForeign(ds)
	want := []struct{ rule, msg, sugg string }{
		{"unknown-field", `server "a": unknown field "Enviroment" is ignored by the host`, `did you mean "Env"?`},
		{"unknown-field", `server "a": unknown field "workingDirectory" is ignored by the host`, `did you mean "cwd"?`},
		{"unknown-field", `server "a": unknown field "comand" is ignored by the host`, `did you mean "command"?`},
		{"foreign-field", `server "a": "alwaysAllow" is a field of another MCP client; the host ignores it`, "volcanic has no approval list: every registered tool can be called; remove it"},
		{"type-mismatch", `server "a": unknown field "disabled"`, ""},
	}
	for i, w := range want {
		if ds[i].Rule != w.rule || ds[i].Message != w.msg || ds[i].Suggestion != w.sugg {
			t.Errorf("%d: got %+v, want %+v", i, ds[i], w)
		}
	}
}

func TestSuggestEnvName(t *testing.T) {
	for in, want := range map[string]string{"0": "VAR_0", "${workspace}": "workspace", "my-token": "my_token", "a..b": "a_b", "-": "NAME", "_x_": "x", "1abc": "VAR_1abc", "GITHUB TOKEN": "GITHUB_TOKEN"} {
		if got := suggestEnvName(in); got != want || !validEnvName(got) {
			t.Errorf("suggestEnvName(%q) = %q, want %q", in, got, want)
		}
	}
}
