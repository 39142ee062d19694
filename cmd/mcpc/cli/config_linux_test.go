package cli

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// mcpc config env NAME KEY on a terminal asks for the value and reads it
// with echo off: the terminal never shows it, and echo is on again after.
func TestConfigEnvFromATerminalDoesNotEcho(t *testing.T) {
	const canary = "CANARY-typed-3b9f"
	p := exampleConfig(t)
	master, slave := testservers.OpenPTY(t)
	var mu sync.Mutex
	var echoed bytes.Buffer
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			echoed.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		done <- Run([]string{"mcpc", "config", "env", "github", "GITHUB_PERSONAL_ACCESS_TOKEN", "--config", p}, slave, &stdout, &stderr)
	}()
	testservers.WaitUntil(t, "echo is turned off", func() bool { return !testservers.Echoes(slave) })
	master.Write([]byte(canary + "\n"))
	if code := testservers.Recv(t, "mcpc config env to return", done); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	master.Write([]byte("typed-after\n"))
	testservers.WaitUntil(t, "the line typed after the value is echoed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(echoed.String(), "typed-after")
	})
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(echoed.String()+stdout.String()+stderr.String(), canary) {
		t.Errorf("the value was shown: %q %q %q", echoed.String(), stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "Value of GITHUB_PERSONAL_ACCESS_TOKEN for server github") {
		t.Errorf("prompt %q", stderr.String())
	}
	if data, _ := os.ReadFile(p); !strings.Contains(string(data), `"GITHUB_PERSONAL_ACCESS_TOKEN": "`+canary+`"`) {
		t.Error("the value was not written")
	}
}
