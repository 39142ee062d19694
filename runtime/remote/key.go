package remote

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpc-dev/mcpc/internal/term"
)

// maxKeyInput bounds the key read from standard input.
const maxKeyInput = 64 << 10

// ReadKey reads the key of `mcpc remote add NAME` from in (see ParseKey).
// On a terminal it prompts on prompt, turns echo off while the key is typed
// and reads lines up to an empty line; otherwise it reads everything. The
// key is never echoed, printed or put in an error.
func ReadKey(in io.Reader, prompt io.Writer, name string) (Headers, error) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(f) {
		return readKeyTerminal(f, prompt, name)
	}
	data, err := io.ReadAll(io.LimitReader(in, maxKeyInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the key from standard input: %v", err)
	}
	if len(data) > maxKeyInput {
		return nil, fmt.Errorf("the key on standard input is longer than %d bytes", maxKeyInput)
	}
	return ParseKey(string(data))
}

func readKeyTerminal(f *os.File, prompt io.Writer, name string) (Headers, error) {
	msg := fmt.Sprintf("Key for %s: a token, or \"Name: value\" header lines, or - for none; end with an empty line (input is not shown):\n", name)
	got, err := term.ReadWithoutEcho(f, prompt, msg, readKeyLines)
	var echo *term.EchoError
	switch {
	case errors.As(err, &echo):
		return nil, fmt.Errorf("%v: give the key with --bearer, --header or --no-key, or pipe it", err)
	case err != nil:
		return nil, errors.New("interrupted; nothing was saved")
	}
	return ParseKey(strings.Join(got, "\n"))
}

// readKeyLines reads the lines of a key up to an empty line; a bare token
// or "-" is one line.
func readKeyLines(r io.Reader) []string {
	var got []string
	sc := bufio.NewScanner(io.LimitReader(r, maxKeyInput))
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(l) == "" {
			if len(got) > 0 {
				break
			}
			continue
		}
		got = append(got, l)
		if len(got) == 1 && !looksLikeHeader(l) {
			break
		}
	}
	return got
}
