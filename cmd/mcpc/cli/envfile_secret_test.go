package cli

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// envFileCanaries are the body lines of keys written into env files:
// none of them may appear in any output, in any form.
var envFileCanaries = []string{"MIIEcnryPEMbody0123456789", "CANARYsecondLINEabcdef98765", "sk-canary-quotedname-55aa11"}

func assertNoEnvFileCanary(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range envFileCanaries {
		for form, s := range map[string]string{"raw": c, "hex": hex.EncodeToString([]byte(c)), "base64": base64.StdEncoding.EncodeToString([]byte(c)), "url": url.QueryEscape(c)} {
			if strings.Contains(out, s) {
				t.Errorf("%s shows the %s form of %q:\n%s", what, form, c, out)
			}
		}
	}
}

// A multi-line value in an env file is read as python-dotenv, docker
// compose and node's dotenv read it; a broken one (continued without
// quotes, a quote never closed, a name in quotes) is an error that names
// its lines and never quotes them, in every format and on every command
// that reads an env file.
func TestEnvFileMultiLineSecretNeverShown(t *testing.T) {
	dir := t.TempDir()
	agent := dir // an agent dir without settings.json
	good := write(t, dir, "good.env", "SSH_PRIVATE_KEY=\"-----BEGIN KEY-----\nMIIEcnryPEMbody0123456789\n-----END KEY-----\"\nDEPLOY_NOTE='CANARYsecondLINEabcdef98765\nline two'\n")
	if code, stdout, stderr := run(t, "validate", "--clean-env", "--agent-dir", agent, "--env-file", good); code != ExitOK {
		t.Errorf("a quoted multi-line value: exit %d\n%s%s", code, stdout, stderr)
	}

	bad := map[string]string{
		"unquoted.env": "SSH_PRIVATE_KEY=-----BEGIN KEY-----\nMIIEcnryPEMbody0123456789\n-----END KEY-----\n",
		"unclosed.env": "A=1\nNOTE=\"begin\nMIIEcnryPEMbody0123456789\nCANARYsecondLINEabcdef98765\n",
		"trailing.env": "NOTE=\"x\"MIIEcnryPEMbody0123456789\n",
		"badname.env":  "MIIEcnryPEMbody0123456789 x=1\n\"OPENAI_API_KEY\"=sk-canary-quotedname-55aa11\nCANARYsecondLINEabcdef98765+/x==\n",
	}
	for name, content := range bad {
		f := write(t, dir, name, content)
		for _, format := range []string{"text", "json", "sarif", "github"} {
			code, stdout, stderr := run(t, "validate", "--clean-env", "--agent-dir", agent, "--env-file", f, "--format", format)
			if code != ExitProblems || !strings.Contains(stdout, "env-file-syntax") {
				t.Errorf("%s, %s: exit %d, want %d with env-file-syntax\n%s%s", name, format, code, ExitProblems, stdout, stderr)
			}
			assertNoEnvFileCanary(t, name+" validate --format "+format, stdout+stderr)
		}
		code, stdout, stderr := run(t, "plan", "--clean-env", "--agent-dir", agent, "--env-file", f)
		if code != ExitProblems {
			t.Errorf("%s, plan: exit %d", name, code)
		}
		assertNoEnvFileCanary(t, name+" plan", stdout+stderr)
	}

	plan := compilePlan(t, map[string]map[string]any{"srv": {"Command": testServer}})
	f := write(t, dir, "run.env", bad["unquoted.env"]+bad["badname.env"])
	code, stdout, stderr := run(t, "run", "--plan", plan, "--env-file", f, "--stdio", "--workspace", filepath.Join(dir, "ws"))
	if code == ExitOK || !strings.Contains(stderr, "env-file-syntax") {
		t.Errorf("run --env-file: exit %d\n%s%s", code, stdout, stderr)
	}
	assertNoEnvFileCanary(t, "run --env-file", stdout+stderr)
}
