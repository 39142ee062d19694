package supervisor

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpc-dev/mcpc/internal/testmain"
	"github.com/mcpc-dev/mcpc/runtime/transport"
)

func TestMain(m *testing.M) { testmain.Run(m) }

func TestStderrTail(t *testing.T) {
	t.Parallel()
	tail := NewTail(64)
	for i := range 1000 {
		fmt.Fprintf(tail, "line %04d\n", i)
	}
	text := tail.Text()
	if len(text) > 64 {
		t.Errorf("kept %d bytes", len(text))
	}
	if !strings.HasPrefix(text, "line ") || !strings.HasSuffix(text, "line 0999\n") {
		t.Errorf("tail %q", text)
	}
	// A line longer than the tail is not shown from its middle: that could
	// start in the middle of a secret, which redaction would then miss.
	long := NewTail(64)
	fmt.Fprintf(long, "first\nsecret=%s%s", strings.Repeat("s", 40), strings.Repeat("y", 100))
	if text := long.Text(); text != longLineNote {
		t.Errorf("long line: %q", text)
	}
	long.Write([]byte("\nlast\n"))
	if text := long.Text(); text != "last\n" {
		t.Errorf("after the long line: %q", text)
	}
	got := LastLines("a\n\n b \nc\n"+strings.Repeat("x", 10)+"\n", 3, 5)
	if want := []string{"b", "c", "xxxxx…"}; !slices.Equal(got, want) {
		t.Errorf("LastLines = %q, want %q", got, want)
	}
}

// lineWriter cuts a long line only where no secret is cut in two, also when
// the secret comes in many writes, and withholds the rest of a line made of
// overlapping secrets rather than risk showing a part of one.
func TestStderrLinePieces(t *testing.T) {
	t.Parallel()
	secret := "s3cr" + strings.Repeat("e", 60) + "t"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	var got []string
	w := &lineWriter{emit: func(s string) { got = append(got, s) }, redact: redact, span: func() int { return len(secret) }}
	line := strings.Repeat("x", StderrLineMax-10) + secret + strings.Repeat("y", 3*StderrLineMax) + "\n"
	for i := 0; i < len(line); i += 7 {
		w.Write([]byte(line[i:min(i+7, len(line))]))
	}
	joined := strings.Join(got, "")
	if joined != redact(strings.TrimSuffix(line, "\n")) || strings.Contains(joined, secret[:4]+"e") || len(got) < 4 {
		t.Errorf("%d pieces: %.80q", len(got), got)
	}
	for _, p := range got {
		if len(p) > StderrLineMax+len(secret) {
			t.Errorf("a piece of %d bytes", len(p))
		}
	}

	// A secret that overlaps itself, repeated across the whole window.
	got = nil
	rep := "abab"
	w = &lineWriter{emit: func(s string) { got = append(got, s) }, redact: func(s string) string { return strings.ReplaceAll(s, rep, "[R]") }, span: func() int { return len(rep) }}
	w.Write([]byte(strings.Repeat("ab", 3*StderrLineMax) + "\nnext\n"))
	if len(got) == 0 || got[len(got)-1] != "next" {
		t.Errorf("%.80q", got)
	}
	for _, p := range got {
		if strings.HasSuffix(p, "a") || strings.HasSuffix(p, "ab") || strings.HasSuffix(p, "aba") {
			t.Errorf("a piece ends with the start of the secret: %.80q", p)
		}
	}

	// No place to cut that redacts as the whole line does: the rest of the
	// line is withheld, the next line comes as usual.
	got = nil
	whole := func(s string) string { // hides any text holding a q, whole
		if strings.Contains(s, "q") {
			return "[R]"
		}
		return s
	}
	w = &lineWriter{emit: func(s string) { got = append(got, s) }, redact: whole, span: func() int { return 8 }}
	w.Write([]byte("q" + strings.Repeat("x", 2*StderrLineMax)))
	w.Write([]byte(strings.Repeat("x", 100) + "\nnext\n"))
	if len(got) != 2 || !strings.HasPrefix(got[0], "[the rest of this line was withheld") || got[1] != "next" {
		t.Errorf("%.80q", got)
	}
}

// The connection to a server process tells the call ledger of each
// notifications/cancelled written to it, and of nothing else: a shutdown
// waits for those notifications before it closes stdin (see Ledger).
func TestWatchedConnCancelHook(t *testing.T) {
	t.Parallel()
	inner, err := (&transport.LineTransport{Reader: strings.NewReader(""), Writer: io.Discard}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	paid := 0
	c := &watchedConn{Connection: inner, onCancelSent: func() { paid++ }}
	id, _ := jsonrpc.MakeID(float64(4))
	for _, m := range []struct {
		msg  jsonrpc.Message
		paid int
	}{
		{&jsonrpc.Request{ID: id, Method: "tools/call"}, 0},
		{&jsonrpc.Request{Method: "notifications/progress"}, 0},
		{&jsonrpc.Request{ID: id, Method: "notifications/cancelled"}, 0}, // a call, not a notification
		{&jsonrpc.Response{ID: id}, 0},
		{&jsonrpc.Request{Method: "notifications/cancelled", Params: []byte(`{"requestId":4}`)}, 1},
	} {
		if err := c.Write(context.Background(), m.msg); err != nil {
			t.Fatal(err)
		}
		if paid != m.paid {
			t.Errorf("after writing %#v: the hook ran %d times, want %d", m.msg, paid, m.paid)
		}
	}
}
