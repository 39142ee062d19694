package cli

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/golden"
	"github.com/mcpc-dev/mcpc/runtime/remote/remotetest"
)

// TestRuleRemoteToolMissing is the golden trigger and near-miss of
// remote-tool-missing, which needs a live remote server and so cannot be a
// fixtures/ case: rules_test.go's meta-test names this test as the rule's
// case (goTestCases) and reads the goldens it writes. The trigger's
// allowlist names a tool the server does not offer; the near-miss's names
// only tools it offers. The temporary paths, the server's url and the
// cut of the excerpt (which moves with the port's digits, and past it lies
// the sealed part, random on every seal) are replaced by stable words.
func TestRuleRemoteToolMissing(t *testing.T) {
	for _, c := range []struct {
		golden, tools string
	}{
		{"rule-remote-tool-missing.txt", "echo,nope"},
		{"rule-remote-tool-missing-ok.txt", "echo,whoami"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			ws := t.TempDir()
			srv := remotetest.Start(t, remotetest.Options{Transport: "http", Token: keyCanary})
			if code, _, stderr := run(t, append([]string{"remote", "add", "notes", srv.URL, "--bearer", keyCanary, "--tools", c.tools}, remoteArgs(ws, "chat-1")...)...); code != ExitOK {
				t.Fatalf("remote add: exit %d\n%s", code, stderr)
			}
			dir, app := deployment(t, map[string][]string{"srv": {"-tools", "echo"}}, nil)
			args := []string{"tools", "--appsettings", app, "--agent-dir", dir, "--clean-env", "--env", "MCP_ENCRYPTION_SECRET=" + remoteSecret,
				"--workspace", ws, "--scope", "chat-1", "--quiet"}
			code, stdout, stderr := run(t, args...)
			got := "# go test ./cmd/mcpc/cli -run TestRuleRemoteToolMissing (-update rewrites this file)\n" +
				"$ mcpc " + strings.Join(args, " ") + "\nexit " + strconv.Itoa(code) + "\n" + stdout + "--- stderr\n" + stderr
			got = strings.NewReplacer(ws, "$WS", dir, "$DIR", srv.URL, "$URL", remoteSecret, "$SECRET").Replace(got)
			got = excerptTail.ReplaceAllString(got, "${1}…")
			golden.Compare(t, filepath.Join("..", "..", "..", "golden", c.golden), got)
		})
	}
}

// excerptTail is the end of an excerpt of the entry after its allowlist:
// where the excerpt is cut depends on how many digits the port has.
var excerptTail = regexp.MustCompile(`(?m)(\], "auth": ).*$`)
