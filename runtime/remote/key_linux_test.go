package remote

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/term"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// On a terminal the key is read with echo off, and echo is back on after.
func TestReadKeyFromATerminalDoesNotEcho(t *testing.T) {
	master, slave := testservers.OpenPTY(t)
	if !term.IsTerminal(slave) {
		t.Fatal("the pty is not a terminal")
	}
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
	var prompt bytes.Buffer
	done := make(chan struct{})
	var h Headers
	var err error
	go func() {
		h, err = ReadKey(slave, &prompt, "notes")
		close(done)
	}()
	// Wait until echo is off before typing.
	testservers.WaitUntil(t, "echo is turned off", func() bool {
		return !testservers.Echoes(slave)
	})
	master.Write([]byte(canaryToken + "\n"))
	testservers.Recv(t, "ReadKey to return", done)
	if err != nil || h["Authorization"] != "Bearer "+canaryToken {
		t.Fatalf("%v %v", h, err)
	}
	// Echo is on again: a line typed now comes back, after anything the
	// terminal echoed before it.
	master.Write([]byte("typed-after\n"))
	testservers.WaitUntil(t, "the line typed after the key is echoed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(echoed.String(), "typed-after")
	})
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(echoed.String(), "CANARY") {
		t.Errorf("the key was echoed: %q", echoed.String())
	}
	if !strings.Contains(prompt.String(), "Key for notes") {
		t.Errorf("prompt %q", prompt.String())
	}
	if !testservers.Echoes(slave) {
		t.Error("echo was not turned back on")
	}
}
