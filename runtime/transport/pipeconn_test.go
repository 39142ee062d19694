package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestPipeConnRead(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // beyond the 64 KiB read buffer
	input := "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"text":"` + long + `"}}` + "\n" +
		`[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","method":"notifications/x"}]` + "\r\n" +
		`{"jsonrpc":"2.0","id":3,"result":{}}` // no newline at the end
	c := &PipeConn{r: bufio.NewReaderSize(strings.NewReader(input), 64<<10)}
	var got []string
	for {
		m, err := c.Read(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *jsonrpc.Response:
			got = append(got, fmt.Sprintf("response %v %s", m.ID.Raw(), m.Result[:min(10, len(m.Result))]))
			if m.ID.Raw() == int64(1) && len(m.Result) != len(long)+len(`{"text":""}`) {
				t.Errorf("long result: %d bytes", len(m.Result))
			}
		case *jsonrpc.Request:
			got = append(got, "request "+m.Method)
		}
	}
	want := []string{`response 1 {"text":"x`, "response 2 {}", "request notifications/x", "response 3 {}"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("read %q\nwant %q", got, want)
	}

	bad := &PipeConn{r: bufio.NewReader(strings.NewReader("not json" + strings.Repeat(" x", 100000) + "\n"))}
	if _, err := bad.Read(context.Background()); err == nil || err.Error() != "invalid character 'o' in literal null (expecting 'u')" {
		t.Errorf("garbage: %v", err)
	}
	empty := &PipeConn{r: bufio.NewReader(strings.NewReader("[]\n"))}
	if _, err := empty.Read(context.Background()); err == nil {
		t.Error("an empty batch decoded without error")
	}
}
