package volcanic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/compile/plan/denylist"
	"github.com/mcpc-dev/mcpc/internal/diag"
)

func compileEnv(t *testing.T, deny *denylist.List, env ...string) *compile.Result {
	t.Helper()
	res, err := compile.Compile(compile.Options{CleanEnv: true, Env: env, AgentDir: t.TempDir(), DenyList: deny})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func rulesOf(ds []diag.Diagnostic) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Rule+"@"+d.Pos().String())
	}
	return strings.Join(out, " ")
}

// A secret bound from a deny-listed host variable can reach a server only
// as an env value, which the plan records as a reference. Anywhere else the
// plan would have to carry the value: secret-literal. So would an env value
// whose secret holds ${…}, which the host expands and a reference cannot.
func TestSecretBindingOutsideEnv(t *testing.T) {
	f := filepath.Join(t.TempDir(), "deny.json")
	if err := os.WriteFile(f, []byte(`{"names": ["GITHUB_TOKEN"], "patterns": ["*__ARGS__1"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	deny, err := denylist.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	res := compileEnv(t, deny,
		"Mcp__Servers__x__Command=node",
		"Mcp__Servers__x__Args__0=--token",
		"Mcp__Servers__x__Args__1=tok-abcdef-123456")
	if got := rulesOf(res.Diagnostics); got != "secret-literal@<--env>:3:26" {
		t.Errorf("diagnostics: %s", got)
	}
	res = compileEnv(t, nil,
		"Mcp__Servers__x__Command=node",
		"Mcp__Servers__x__Env__A_TOKEN=abc${workspace}def-1234")
	if got := rulesOf(res.Diagnostics); got != "secret-literal@<--env>:2:31" {
		t.Errorf("diagnostics: %s", got)
	}
	for _, d := range res.Diagnostics {
		if strings.Contains(d.Message+d.Suggestion, "def-1234") {
			t.Errorf("the secret in a message: %s", d.Message)
		}
	}
	// The same value without ${…} is a reference.
	res = compileEnv(t, nil,
		"Mcp__Servers__x__Command=node",
		"Mcp__Servers__x__Env__A_TOKEN=abc-def-1234")
	if res.Plan == nil {
		t.Fatalf("no plan: %s", rulesOf(res.Diagnostics))
	}
	if v := res.Plan.Servers[0].Env["A_TOKEN"]; v == nil || *v != "${env:Mcp__Servers__x__Env__A_TOKEN}" {
		t.Errorf("A_TOKEN = %v", v)
	}
}

// A weak deny-listed value warns and changes nothing: "python" stays in a
// command line, in the plan and in messages; a strong one is found only as
// a whole token.
func TestWeakSecretChangesNothing(t *testing.T) {
	res := compileEnv(t, nil, "DB_PASSWORD=python", "Mcp__Servers__db__Command=python3", "Mcp__Servers__db__Args__0=python")
	if got := rulesOf(res.Diagnostics); got != "secret-weak@<--env>:1:13" {
		t.Errorf("diagnostics: %s", got)
	}
	if res.Plan == nil || res.Plan.Servers[0].Command != "python3" || res.Plan.Servers[0].Args[0] != "python" {
		t.Fatalf("plan: %+v", res.Plan)
	}
	res = compileEnv(t, nil, "DB_PASSWORD=py7hon-Kx93", "Mcp__Servers__db__Command=py7hon-Kx93x")
	if got := rulesOf(res.Diagnostics); got != "" {
		t.Errorf("the inside of a longer word is not the secret: %s", got)
	}
}
