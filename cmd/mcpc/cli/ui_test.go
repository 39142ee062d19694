package cli

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// mcpc ui refuses what it cannot serve safely or at all, before it
// listens: exit 2 with the reason.
func TestUIUsage(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join("..", "..", "..", "ui", "testdata", "mcp_config.json")
	t.Setenv("UI_SHORT", "short")
	t.Setenv("UI_TOKEN", "ui-token-0123456789abcdef")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ui", "--profile", "craftbot", "--config", cfg}, "needs --listen"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "0.0.0.0:0"}, "loopback only"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", ":0"}, "loopback only"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1"}, "expected HOST:PORT"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "0.0.0.0:0", "--token-env", "UI_SHORT"}, "shorter than 16"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--token-env", "UI_NONE"}, "not set or blank"},
		{[]string{"ui", "--profile", "craftbot", "--config", filepath.Join(dir, "none.json"), "--listen", "127.0.0.1:0"}, "does not exist"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--admin-token-env", "UI_TOKEN"}, "goes with --gateway"},
		{[]string{"ui", "--profile", "craftbot", "--config", cfg, "--listen", "127.0.0.1:0", "--gateway", "ftp://x"}, "--gateway \"ftp://x\""},
		{[]string{"ui", "--appsettings", filepath.Join(dir, "none.json"), "--listen", "127.0.0.1:0"}, "cannot read"},
		{[]string{"ui", "--config", cfg, "--listen", "127.0.0.1:0"}, "belongs to --profile craftbot"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, stderr)
		}
		if strings.Contains(stderr, "ui-token-0123456789abcdef") {
			t.Errorf("%v: the token is in the message", c.args)
		}
	}
}

// mcpc ui as a process: it says where it serves, serves the page, and exits
// 0 on SIGTERM.
func TestUIServes(t *testing.T) {
	_, bin := processTest(t)
	cfg, err := filepath.Abs(filepath.Join("..", "..", "..", "ui", "testdata", "mcp_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "ui", "--profile", "craftbot", "--config", cfg, "--target-os", "linux", "--listen", "127.0.0.1:0")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	defer pr.Close()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("mcpc ui said nothing: %v", cmd.Wait())
	}
	m := regexp.MustCompile(`^mcpc ui: serving (http://127\.0\.0\.1:\d+/)$`).FindStringSubmatch(sc.Text())
	if m == nil {
		cmd.Process.Kill()
		t.Fatalf("first line: %q", sc.Text())
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `data-server="github"`) || strings.Contains(string(body), "FILECANARY") {
		t.Errorf("the page: %d\n%s", resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("mcpc ui after SIGTERM: %v", err)
	}
}
