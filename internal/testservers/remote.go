package testservers

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// BuildWSServer builds the websocket and SSE test server of
// fixtures/servers/wsserver (once per process) and returns the path of the
// binary. Cleanup removes it.
func BuildWSServer(t testing.TB) string {
	t.Helper()
	bin, err := buildOnce("fixtures/servers/wsserver", "mcpc-wsserver")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// StartWSServer starts the websocket test server with args, waits until
// it listens, and returns its address "127.0.0.1:PORT". The test's cleanup
// kills it and reaps it.
func StartWSServer(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(BuildWSServer(t), args...)
	var stderr SyncBuffer
	cmd.Stderr = &stderr
	line := startReadingFirstLine(t, cmd, cmd.StdoutPipe)
	addr := Recv(t, "the websocket test server's address", line)
	if addr == "" {
		t.Fatalf("the websocket test server ended before it listened: %s", stderr.String())
	}
	return addr
}

// startReadingFirstLine starts cmd, whose pipe (stdout or stderr) pipe
// makes, and sends on the channel the first line of it that the match
// function picks ("" when the pipe ends first). The rest of the pipe is
// read and dropped, so that the process never blocks writing. The test's
// cleanup kills the process and waits for it.
func startReadingFirstLine(t testing.TB, cmd *exec.Cmd, pipe func() (io.ReadCloser, error)) <-chan string {
	return startReadingMatch(t, cmd, pipe, func(line string) (string, bool) { return line, true })
}

func startReadingMatch(t testing.TB, cmd *exec.Cmd, pipe func() (io.ReadCloser, error), match func(string) (string, bool)) <-chan string {
	t.Helper()
	r, err := pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sent := false
		for sc.Scan() {
			if v, ok := match(sc.Text()); ok && !sent {
				found <- v
				sent = true
			}
		}
		if !sent {
			found <- ""
		}
	}()
	return found
}

// listeningPort is the line listen-loopback.cjs prints when the server
// listens.
var listeningPort = regexp.MustCompile(`^mcpc-test-listening (\d+)$`)

// StartEverythingSSE starts @modelcontextprotocol/server-everything over
// SSE on 127.0.0.1 at a free port, waits until it listens, and returns the
// URL of its event stream ("http://127.0.0.1:PORT/sse"). The server itself
// listens on every interface at $PORT; a preloaded script
// (testdata/listen-loopback.cjs) makes it listen on 127.0.0.1 at a port
// the system picks and print that port. Skipped (or failed, as
// NeedEverything says) when the server is not installed. The test's
// cleanup kills it.
func StartEverythingSSE(t testing.TB) string {
	t.Helper()
	command, _ := NeedEverything(t)
	cmd := exec.Command(command, "sse")
	preload := filepath.Join(Root(), "internal", "testservers", "testdata", "listen-loopback.cjs")
	cmd.Env = append(cmd.Environ(), "NODE_OPTIONS=--require "+preload)
	var stdout SyncBuffer
	cmd.Stdout = &stdout
	port := Recv(t, "server-everything sse to listen", startReadingMatch(t, cmd, cmd.StderrPipe, func(line string) (string, bool) {
		m := listeningPort.FindStringSubmatch(line)
		if m == nil {
			return "", false
		}
		return m[1], true
	}))
	if port == "" {
		t.Fatalf("server-everything sse ended before it listened: %s", stdout.String())
	}
	return "http://127.0.0.1:" + port + "/sse"
}
