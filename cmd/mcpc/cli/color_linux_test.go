package cli

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// runOnTerminal runs mcpc with its stdout on a pseudo-terminal and returns
// what the terminal shows (its \r\n turned back into \n).
func runOnTerminal(t *testing.T, args ...string) string {
	t.Helper()
	master, slave := testservers.OpenPTY(t)
	shown := make(chan string)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, master) // ends with EIO once the slave is closed and drained
		shown <- b.String()
	}()
	var stderr bytes.Buffer
	Run(append([]string{"mcpc"}, args...), strings.NewReader(""), slave, &stderr)
	slave.Close()
	return strings.ReplaceAll(<-shown, "\r\n", "\n")
}

// Under auto a terminal gets color, unless NO_COLOR is set; --color=never
// gives it the plain bytes.
func TestColorOnATerminal(t *testing.T) {
	args := colorDeployment(t)
	_, plain, _ := run(t, args...)
	if got := runOnTerminal(t, args...); !strings.Contains(got, "\x1b[1;31merror\x1b[0m") {
		t.Errorf("auto on a terminal is not colored:\n%q", got)
	}
	if got := runOnTerminal(t, append(args, "--color=never")...); got != plain {
		t.Errorf("--color=never on a terminal:\n%q\nwant\n%q", got, plain)
	}
	environ = func() []string { return []string{"NO_COLOR=1"} }
	defer func() { environ = os.Environ }()
	if got := runOnTerminal(t, args...); got != plain {
		t.Errorf("NO_COLOR=1 on a terminal:\n%q\nwant\n%q", got, plain)
	}
	environ = func() []string { return []string{"NO_COLOR="} }
	if got := runOnTerminal(t, args...); !strings.Contains(got, "\x1b[") {
		t.Errorf("an empty NO_COLOR turned color off (no-color.org: only a non-empty value does)")
	}
}
