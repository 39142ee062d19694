package runtime

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/compile"
	"github.com/mcpc-dev/mcpc/internal/redact"
)

// What runs is exactly what the host would run (SPEC §2.4): a secret that
// reaches a server through a host-environment binding arrives byte for
// byte, the plan holds a reference to the variable and never the value,
// and a weak deny-listed value ("tools", a word) changes nothing that runs.
func TestSecretBindingLaunchesExactly(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	const pat = "CANARY-pat-9f1c7e22d4"
	settings := filepath.Join(dir, "appsettings.json")
	body := fmt.Sprintf(`{"Mcp": {"Servers": {"gh": {"Command": %q, "Args": ["-tools", "env,env-sha256"]}}}}`, testBin)
	if err := os.WriteFile(settings, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := []string{
		"PATH=" + os.Getenv("PATH"),
		leakMarkerVar + "=" + marker,
		// The standard .NET way to give a server its token; the name
		// matches *_TOKEN, so the value is a host secret.
		"Mcp__Servers__gh__Env__GITHUB_PERSONAL_ACCESS_TOKEN=" + pat,
		// A weak password that is also a word of the command line.
		"DB_PASSWORD=tools",
	}
	res, err := compile.Compile(compile.Options{CleanEnv: true, Env: vars, AppSettings: []string{settings}, AgentDir: filepath.Join(dir, "agent")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil {
		t.Fatalf("no plan: %v", res.Diagnostics)
	}
	canon, err := res.Plan.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(canon), pat) || strings.Contains(string(canon), redact.Redacted) {
		t.Fatalf("the plan holds the secret or a redaction:\n%s", canon)
	}
	s := res.Plan.Servers[0]
	if got := strings.Join(s.Args, " "); got != "-tools env,env-sha256" {
		t.Errorf("args in the plan: %q", got)
	}
	if ref := s.Env["GITHUB_PERSONAL_ACCESS_TOKEN"]; ref == nil || *ref != "${env:Mcp__Servers__gh__Env__GITHUB_PERSONAL_ACCESS_TOKEN}" {
		t.Errorf("env value in the plan: %v", ref)
	}

	// The runtime reads the variable from its own environment at launch.
	h := newTestHost(t, res.Plan, HostOptions{Env: EnvFromList(vars, nil)})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx := context.Background()
	call := func(tool, name string) string {
		t.Helper()
		r, err := c.Call(ctx, tool, map[string]any{"name": name})
		if err != nil {
			t.Fatalf("%s %s: %v", tool, name, err)
		}
		return text(t, r)
	}
	sum := sha256.Sum256([]byte(pat))
	if got, want := call("env-sha256", "GITHUB_PERSONAL_ACCESS_TOKEN"), fmt.Sprintf("sha256:%x len:%d", sum, len(pat)); got != want {
		t.Errorf("the server received another value: %s, want %s", got, want)
	}
	// Output is redacted; the binding variable itself is withheld.
	if got := call("env", "GITHUB_PERSONAL_ACCESS_TOKEN"); got != redact.Redacted {
		t.Errorf("the secret in a result: %q", got)
	}
	if got := call("env-sha256", "Mcp__Servers__gh__Env__GITHUB_PERSONAL_ACCESS_TOKEN"); got != "unset" {
		t.Errorf("the deny-listed binding variable was inherited: %s", got)
	}
}

// A multi-line secret (a PEM key under *_PRIVATE_KEY) that a server prints
// on stderr is redacted line by line in the live log and in the stderr
// tail: stderr is handled a line at a time, and each line of the key is a
// known secret of its own.
func TestMultiLineSecretInStderr(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	pem := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4ypbL4Ssn1Ue2J0mZ/P8rT4Q3a9a\n-----END PRIVATE KEY-----"
	srv := testServer("pem", "-tools", "echo", "-stderr", "loaded key:\n"+pem, "-stderr", "key ready")
	srv.StderrLevel = "Information"
	var log logRecorder
	h := newTestHost(t, testPlan(srv), HostOptions{
		Env: testEnv(marker, "SIGNING_PRIVATE_KEY="+pem),
		Log: log.log,
	})
	c, _ := h.Chat("c", filepath.Join(t.TempDir(), "ws"))
	if _, err := c.Call(context.Background(), "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	// The server wrote its stderr before answering; wait until the log
	// shows the last line of it.
	eventually(t, "the last stderr line in the log", func() bool {
		return strings.Contains(log.text(), "key ready")
	})
	d, _ := c.Server("pem")
	out := log.text() + "\n" + strings.Join(d.StderrTail, "\n")
	for _, line := range strings.Split(pem, "\n")[1:3] {
		if strings.Contains(out, line) || strings.Contains(out, line[:20]) {
			t.Errorf("a line of the key reached the output:\n%s", out)
		}
	}
	if !strings.Contains(out, "loaded key:") {
		t.Errorf("the other stderr lines are missing:\n%s", out)
	}
}
