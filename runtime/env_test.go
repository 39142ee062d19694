package runtime

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/redact"
)

// Canary secrets: one plain, one that changes when JSON-escaped.
const (
	canaryToken = "CANARY-gh-5e1f0a77"
	canaryKey   = `CANARY-"key"\with<escapes>`
	canaryRef   = "CANARY-ref-0b9d2c41" // only reachable through ${env:…}
)

// Deny-listed host variables reach a server only through ${env:NAME};
// null removes a variable; every known secret comes back [REDACTED], in
// text and structured results, errors, stderr tails, status and logs.
func TestEnvironmentAndRedaction(t *testing.T) {
	t.Parallel()
	marker := noLeaks(t)
	dir := t.TempDir()
	withRef := testServer("withref", "-tools", "env,env-json,echo,fail,crash",
		"-stderr", "starting with token "+canaryToken)
	withRef.Env = map[string]*string{
		"GH":        ptr("${env:GITHUB_TOKEN}"),
		"REF":       ptr("${env:SOME_SERVICE_PASSWORD}"),
		"REMOVE_ME": nil,
		"WS":        ptr("${workspace}/data"),
	}
	plain := testServer("plain", "-tools", "env")
	plain.ToolPrefix = "plain_"
	var log logRecorder
	h := newTestHost(t, testPlan(withRef, plain), HostOptions{
		Env: testEnv(marker,
			"GITHUB_TOKEN="+canaryToken,
			"MY_API_KEY="+canaryKey,
			"SOME_SERVICE_PASSWORD="+canaryRef,
			"PLAIN=visible",
			"REMOVE_ME=gone"),
		Log: log.log,
	})
	c, _ := h.Chat("c", filepath.Join(dir, "ws"))
	ctx := context.Background()
	var seen strings.Builder // everything mcpc hands out, checked for canaries at the end
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res, err := c.Call(ctx, tool, args)
		if err != nil {
			seen.WriteString(err.Error() + "\n")
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(res)
		seen.Write(b)
		return text(t, res)
	}

	all := call("env", nil)
	vars := map[string]string{}
	for _, l := range strings.Split(all, "\n") {
		k, v, _ := strings.Cut(l, "=")
		vars[k] = v
	}
	for _, denied := range []string{"GITHUB_TOKEN", "MY_API_KEY", "SOME_SERVICE_PASSWORD", "REMOVE_ME"} {
		if v, ok := vars[denied]; ok {
			t.Errorf("%s reached the server (%q)", denied, v)
		}
	}
	if vars["PLAIN"] != "visible" || vars["WS"] != filepath.Join(c.Workspace(), "data") {
		t.Errorf("PLAIN=%q WS=%q", vars["PLAIN"], vars["WS"])
	}
	// The value did reach the server, and comes back redacted.
	if vars["GH"] != redact.Redacted || vars["REF"] != redact.Redacted {
		t.Errorf("GH=%q REF=%q, want the secret, redacted", vars["GH"], vars["REF"])
	}
	if got := call("env", map[string]any{"name": "GH"}); got != redact.Redacted {
		t.Errorf("env GH = %q", got)
	}
	// Only the server that references it gets it.
	if got := call("plain_env", map[string]any{"name": "GITHUB_TOKEN"}); got != "" {
		t.Errorf("plain server got GITHUB_TOKEN=%q", got)
	}
	if got := call("plain_env", map[string]any{"name": "GH"}); got != "" {
		t.Errorf("plain server got GH=%q", got)
	}

	// Structured content and its JSON text: the escaped canary is redacted.
	res, err := c.Call(ctx, "env-json", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	seen.Write(b)
	sc, _ := res.StructuredContent.(map[string]any)
	env, _ := sc["env"].(map[string]any)
	if env["GH"] != redact.Redacted || env["PLAIN"] != "visible" {
		t.Errorf("structured content GH=%v PLAIN=%v", env["GH"], env["PLAIN"])
	}
	if !strings.Contains(text(t, res), `"GH":"[REDACTED]"`) {
		t.Errorf("text content %s", text(t, res))
	}

	// A secret the server echoes, a secret in its error, a secret in the
	// JSON-escaped form.
	if got := call("echo", map[string]any{"text": "key is " + canaryKey}); got != "key is [REDACTED]" {
		t.Errorf("echo: %q", got)
	}
	got := call("fail", map[string]any{"text": "bad token " + canaryToken})
	if !strings.Contains(got, "bad token [REDACTED]") {
		t.Errorf("server error: %q", got)
	}
	escaped, _ := json.Marshal(canaryKey) // Go escapes < and >
	if got := call("echo", map[string]any{"text": string(escaped)}); got != `"[REDACTED]"` {
		t.Errorf("escaped echo: %q", got)
	}
	jsEscaped := `"CANARY-\"key\"\\with<escapes>"` // as JSON.stringify writes it
	if got := call("echo", map[string]any{"text": jsEscaped}); got != `"[REDACTED]"` {
		t.Errorf("JavaScript-escaped echo: %q", got)
	}

	// Stderr tail, death message, status, details and logs.
	got = call("crash", map[string]any{"code": 2})
	if !strings.HasPrefix(got, "error: MCP server withref exited (2)") {
		t.Errorf("crash: %q", got)
	}
	d, _ := c.Server("withref")
	db, _ := json.Marshal(d)
	sb, _ := json.Marshal(h.Status())
	seen.Write(db)
	seen.Write(sb)
	seen.WriteString(log.text())
	if !strings.Contains(string(db), "starting with token [REDACTED]") {
		t.Errorf("stderr tail not shown redacted: %s", db)
	}
	if !slicesContain(d.EnvNames, "GH") || !slicesContain(d.EnvNames, "PLAIN") || slicesContain(d.EnvNames, "GITHUB_TOKEN") || slicesContain(d.EnvNames, "REMOVE_ME") {
		t.Errorf("env names %v", d.EnvNames)
	}
	if !strings.Contains(log.text(), "[REDACTED]") {
		t.Errorf("the stderr line is not logged:\n%s", log.text())
	}
	for _, canary := range []string{canaryToken, canaryKey, canaryRef, string(escaped[1 : len(escaped)-1]), jsEscaped[1 : len(jsEscaped)-1]} {
		if strings.Contains(seen.String(), canary) {
			t.Errorf("canary %q leaked in:\n%s", canary, seen.String())
		}
	}
}

func slicesContain(s []string, x string) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
}
