package cli

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A canary secret given through every channel — bound the .NET way into a
// server's env, copied literally into a command line, a PEM key, a short
// word — still launches exactly as the host would launch it and appears in
// no output of validate, plan, explain or mcpc run (its log, the server's
// stderr, tool results). The literal copy is refused before anything runs.
func TestSecretThroughEveryChannel(t *testing.T) {
	const bound = "CANARY-bound-7c1e93a0f5"
	const pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4ypbL4Ssn1Ue2J0mZ/P8rT4Q3a9a\n-----END PRIVATE KEY-----"
	pemLines := strings.Split(pem, "\n")[1:3]
	dir := t.TempDir()
	envFile := write(t, dir, "host.env", strings.Join([]string{
		"PATH=" + os.Getenv("PATH"),
		"Mcp__Servers__srv__Env__API_TOKEN=" + bound,
		`SIGNING_PRIVATE_KEY="` + strings.ReplaceAll(pem, "\n", `\n`) + `"`,
		// The same key over several lines, as docker compose writes it.
		`DEPLOY_PRIVATE_KEY="` + pem + `"`,
		// A password that is an ordinary word, and a word of the command line.
		"DB_PASSWORD=tools",
	}, "\n")+"\n")
	app := write(t, dir, "appsettings.json", fmt.Sprintf(`{"Mcp": {"Servers": {"srv": {
  "Command": %q, "Args": ["-tools", "env-sha256,env,echo", "-stderr-env", "KEY", "-stderr", "ready"],
  "Env": {"KEY": "${env:SIGNING_PRIVATE_KEY}", "KEY2": "${env:DEPLOY_PRIVATE_KEY}"}, "StderrLevel": "Information"}}}}`, testServer))
	src := []string{"--clean-env", "--env-file", envFile, "--agent-dir", dir, "--appsettings", app}
	var outputs []string
	collect := func(code int, stdout, stderr string) int {
		outputs = append(outputs, stdout, stderr)
		return code
	}
	if code := collect(run(t, append([]string{"validate"}, src...)...)); code != ExitOK {
		t.Fatalf("validate: exit %d\n%s", code, strings.Join(outputs, "\n"))
	}
	if !strings.Contains(strings.Join(outputs, ""), "[secret-weak]") {
		t.Errorf("no secret-weak warning for DB_PASSWORD=tools:\n%s", strings.Join(outputs, "\n"))
	}
	collect(run(t, append([]string{"explain", "srv"}, src...)...))
	plan := filepath.Join(dir, "plan.json")
	if code := collect(run(t, append([]string{"plan", "-o", plan}, src...)...)); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, strings.Join(outputs, "\n"))
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(data))

	// The literal copy is refused, and not shown either.
	literal := write(t, dir, "literal.json", fmt.Sprintf(`{"Mcp": {"Servers": {"srv": {"Command": %q, "Args": ["--token", %q]}}}}`, testServer, bound))
	litSrc := []string{"--clean-env", "--env", "GITHUB_TOKEN=" + bound, "--agent-dir", dir, "--appsettings", literal}
	if code := collect(run(t, append([]string{"plan"}, litSrc...)...)); code != ExitProblems || !strings.Contains(outputs[len(outputs)-1], "[secret-literal]") {
		t.Errorf("a literal copy: exit %d\n%s", code, outputs[len(outputs)-1])
	}

	cs, wait := runStdio(t, "--plan", plan, "--workspace", filepath.Join(dir, "ws"), "--clean-env", "--env-file", envFile)
	sum := func(s string) string { return fmt.Sprintf("sha256:%x len:%d", sha256.Sum256([]byte(s)), len(s)) }
	if got := callText(t, cs, "env-sha256", map[string]any{"name": "API_TOKEN"}); got != sum(bound) {
		t.Errorf("API_TOKEN arrived as %s, want %s", got, sum(bound))
	}
	if got := callText(t, cs, "env-sha256", map[string]any{"name": "KEY"}); got != sum(pem) {
		t.Errorf("KEY arrived as %s, want %s", got, sum(pem))
	}
	if got := callText(t, cs, "env-sha256", map[string]any{"name": "KEY2"}); got != sum(pem) {
		t.Errorf("KEY2 (a multi-line env-file value) arrived as %s, want %s", got, sum(pem))
	}
	for _, name := range []string{"API_TOKEN", "KEY", "KEY2"} {
		outputs = append(outputs, callText(t, cs, "env", map[string]any{"name": name}))
	}
	outputs = append(outputs, callText(t, cs, "echo", map[string]any{"text": "key line " + pemLines[0] + " and " + bound}))
	code, stderr := wait()
	outputs = append(outputs, stderr)
	if code != ExitOK || !strings.Contains(stderr, "ready") {
		t.Errorf("mcpc run: exit %d, the server's stderr not logged:\n%s", code, stderr)
	}

	all := strings.Join(outputs, "\n")
	for _, secret := range append([]string{bound}, pemLines...) {
		if strings.Contains(all, secret) || strings.Contains(all, secret[:16]) {
			t.Errorf("%.16s… appears in the output:\n%s", secret, all)
		}
		for form, s := range map[string]string{"hex": hex.EncodeToString([]byte(secret)), "base64": base64.StdEncoding.EncodeToString([]byte(secret)), "url": url.QueryEscape(secret), "json": strings.Trim(fmt.Sprintf("%q", secret), `"`)} {
			if strings.Contains(all, s) {
				t.Errorf("the %s form of %.16s… appears in the output:\n%s", form, secret, all)
			}
		}
	}
	if !strings.Contains(string(data), `"-tools"`) || !strings.Contains(string(data), "${env:Mcp__Servers__srv__Env__API_TOKEN}") {
		t.Errorf("the plan:\n%s", data)
	}
}
