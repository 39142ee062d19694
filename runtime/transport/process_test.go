package transport

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

var testServer string

func TestMain(m *testing.M) {
	testservers.Main(m, func(bin string) { testServer = bin })
}

// startPipeConn starts the test server with args as the runtime does (its
// stdout on a pipe of our own) and returns the connection, with the
// process's Wait and Kill counted and Wait's result recorded.
func startPipeConn(t *testing.T, grace time.Duration, args ...string) (c *PipeConn, kills *atomic.Int32, waitErr func() error) {
	t.Helper()
	cmd := exec.Command(testServer, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	kills = &atomic.Int32{}
	var waited atomic.Pointer[error]
	c = NewPipeConn(stdin, pr, Process{
		Wait: func() error {
			err := cmd.Wait()
			waited.Store(&err)
			return err
		},
		Kill: func() {
			kills.Add(1)
			_ = cmd.Process.Kill()
		},
		Grace: grace,
	})
	return c, kills, func() error { return *waited.Load() }
}

// The seam between a PipeConn and the process its starter owns: messages
// go both ways over the pipes; Close closes stdin, waits for the process
// (Process.Wait, called at once), calls Process.Kill only if the process
// outlives the grace period, and returns how the process ended.
func TestPipeConnProcess(t *testing.T) {
	noLeaks(t)
	initialize := &jsonrpc.Request{Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)}
	initialize.ID, _ = jsonrpc.MakeID(float64(1))

	t.Run("exits when stdin closes", func(t *testing.T) {
		c, kills, waitErr := startPipeConn(t, time.Hour)
		if err := c.Write(context.Background(), initialize); err != nil {
			t.Fatal(err)
		}
		m, err := c.Read(context.Background())
		if resp, ok := m.(*jsonrpc.Response); err != nil || !ok || resp.ID.Raw() != int64(1) || resp.Error != nil {
			t.Fatalf("initialize: %#v, %v", m, err)
		}
		err = c.Close() // the hour of grace never passes: the process exits
		if kills.Load() != 0 {
			t.Error("Kill was called for a process that exited by itself")
		}
		if err != waitErr() {
			t.Errorf("Close returned %v, Wait %v", err, waitErr())
		}
		if err := c.Close(); err != waitErr() {
			t.Errorf("a second Close returned %v", err)
		}
	})

	t.Run("outlives the grace period", func(t *testing.T) {
		c, kills, waitErr := startPipeConn(t, time.Millisecond, "-linger", "1h")
		read := make(chan error, 1)
		go func() {
			_, err := c.Read(context.Background())
			read <- err
		}()
		err := c.Close()
		if kills.Load() != 1 {
			t.Errorf("Kill was called %d times, want once", kills.Load())
		}
		if err == nil || err != waitErr() {
			t.Errorf("Close returned %v, Wait %v; want the killed process's status", err, waitErr())
		}
		if err := testservers.Recv(t, "Close to end a pending Read", read); err == nil {
			t.Error("a Read pending at Close returned a message")
		}
	})
}
