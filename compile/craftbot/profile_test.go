package craftbot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
)

// The redactor of a craftbot compile knows an env value only when the file
// also shows it outside env (excerpts hide env values by span, messages
// quote only what stands elsewhere): a catalog of many credentials must not
// make every message pay for each of them.
func TestCraftbotRedactorKnowsOnlyShownEnvValues(t *testing.T) {
	const token = "tok-0123456789abcdef-CANARY"
	compileConfig := func(cfg string) *compile.Result {
		t.Helper()
		res, err := compile.Compile(compile.Options{Profile: Profile.Name(), CleanEnv: true, Config: "mcp_config.json",
			ReadFile: func(string) ([]byte, error) { return []byte(cfg), nil }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	inEnvOnly := compileConfig(`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "npx", "env": {"A_TOKEN": "` + token + `"}}]}`)
	if !inEnvOnly.Redactor.Empty() || inEnvOnly.Plan == nil {
		t.Errorf("an env value seen nowhere else is a message secret (or no plan): %v", inEnvOnly.Diagnostics)
	}
	copied := compileConfig(`{"mcp_servers": [{"name": "a", "transport": "stdio", "command": "npx", "args": ["--token=` + token + `"], "env": {"A_TOKEN": "` + token + `"}}]}`)
	if copied.Redactor.Redact("x "+token) != "x [REDACTED]" || copied.Plan != nil {
		t.Errorf("an env value copied into args is not a known secret, or it got a plan: %v", copied.Diagnostics)
	}
	if len(copied.Diagnostics) != 1 || copied.Diagnostics[0].Rule != "secret-literal" || strings.Contains(copied.Diagnostics[0].Message, token) {
		t.Errorf("diagnostics %+v", copied.Diagnostics)
	}
	// Past the values searched directly, the index answers the same.
	var entries []string
	for i := range 100 {
		entries = append(entries, fmt.Sprintf(`{"name": "s%d", "transport": "stdio", "command": "npx", "env": {"A_TOKEN": "tok-%04d-0123456789abcdef"}}`, i, i))
	}
	entries = append(entries, `{"name": "last", "transport": "stdio", "command": "npx", "args": ["--token=`+token+`"], "env": {"A_TOKEN": "`+token+`"}}`)
	many := compileConfig(`{"mcp_servers": [` + strings.Join(entries, ",\n") + `]}`)
	if many.Redactor.Redact("x "+token) != "x [REDACTED]" || many.Plan != nil {
		t.Errorf("the 101st entry's env value copied into args is not a known secret, or it got a plan")
	}
	if v := "tok-0007-0123456789abcdef"; many.Redactor.Redact(v) != v {
		t.Errorf("an env value seen nowhere else is a message secret in a catalog of 101")
	}
}
