package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A line that is not a JSON-RPC message gets an error response with a null
// id, and the session goes on; valid messages pass both ways, one per line.
func TestLineTransport(t *testing.T) {
	noLeaks(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn, err := (&LineTransport{Reader: inR, Writer: outW}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		conn.Close()
		inW.Close() // ends the read loop, which the caller owns
		outR.Close()
	}()
	long := strings.Repeat("y", 200<<10) // beyond the 64 KiB read buffer
	go func() {
		for _, line := range []string{
			"",
			`not json at all`,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
			`{"jsonrpc":"1.0","id":2,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
			`{"jsonrpc":"2.0","result":{}}`,
			`{"jsonrpc":"` + strings.Repeat("v", 5000) + `","id":4,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + long + `"}}}`,
			"\t" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r",
		} {
			if _, err := io.WriteString(inW, line+"\n"); err != nil {
				return
			}
		}
	}()
	out := bufio.NewReader(outR)
	type wireError struct {
		ID    any            `json:"id"`
		Error *jsonrpc.Error `json:"error"`
	}
	for _, want := range []struct {
		code int64
		text string
	}{
		{jsonrpc.CodeParseError, "parse error: invalid character 'o' in literal null (expecting 'u')"},
		{jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported"},
		{jsonrpc.CodeInvalidRequest, `invalid request: invalid message version tag "1.0"; expected "2.0"`},
		{jsonrpc.CodeInvalidRequest, "invalid request: the id is neither a string nor a number"},
		{jsonrpc.CodeInvalidRequest, "invalid request: the message has neither a method nor an id"},
		{jsonrpc.CodeInvalidRequest, `invalid request: invalid message version tag (5000 bytes); expected "2.0"`},
	} {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var got wireError
		if err := json.Unmarshal([]byte(line), &got); err != nil || got.Error == nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		if got.ID != nil || got.Error.Code != want.code || !strings.HasPrefix(got.Error.Message, want.text) || len(got.Error.Message) > 400 {
			t.Errorf("answer %s\nwant code %d, message %q, id null", line, want.code, want.text)
		}
	}
	m, err := conn.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if req, ok := m.(*jsonrpc.Request); !ok || req.Method != "tools/call" || req.ID.Raw() != int64(3) || len(req.Params) < len(long) {
		t.Fatalf("first message: %#v", m)
	}
	if m, err = conn.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if req, ok := m.(*jsonrpc.Request); !ok || req.Method != "notifications/initialized" || req.ID.IsValid() {
		t.Fatalf("second message: %#v", m)
	}

	// Concurrent writes come out as whole lines.
	id, _ := jsonrpc.MakeID(float64(3))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := conn.Write(context.Background(), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"text":"` + long + `"}`)}); err != nil {
				t.Error(err)
			}
		}()
	}
	for range 4 {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeMessage([]byte(line)); err != nil || len(line) < len(long) {
			t.Errorf("a written line (%d bytes) is not one message: %v", len(line), err)
		}
	}
	wg.Wait()

	// Close ends a pending Read; a Write after it fails.
	done := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		done <- err
	}()
	conn.Close()
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Errorf("Read after Close: %v", err)
	}
	if err := conn.Write(context.Background(), &jsonrpc.Response{ID: id}); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// The end of the input and a message beyond the size limit end the
// session with an error from Read.
func TestLineTransportEnd(t *testing.T) {
	noLeaks(t)
	for _, input := range []string{
		"",
		`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("z", maxMessage) + `"}` + "\n",
	} {
		conn, err := (&LineTransport{Reader: strings.NewReader(input), Writer: io.Discard}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Read(context.Background())
		switch {
		case input == "" && !errors.Is(err, io.EOF):
			t.Errorf("empty input: %v", err)
		case input != "" && (err == nil || !strings.Contains(err.Error(), "a message longer than")):
			t.Errorf("a message beyond the limit: %v", err)
		}
		conn.Close()
	}
}
