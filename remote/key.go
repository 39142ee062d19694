package remote

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

// maxKeyInput bounds the key read from standard input.
const maxKeyInput = 64 << 10

// ReadKey reads the key of `mcpc remote add NAME` from in (see ParseKey).
// On a terminal it prompts on prompt, turns echo off while the key is typed
// and reads lines up to an empty line; otherwise it reads everything. The
// key is never echoed, printed or put in an error.
func ReadKey(in io.Reader, prompt io.Writer, name string) (Headers, error) {
	if f, ok := in.(*os.File); ok && isTerminal(f) {
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
	fmt.Fprintf(prompt, "Key for %s: a token, or \"Name: value\" header lines, or - for none; end with an empty line (input is not shown):\n", name)
	restore, err := echoOff(f)
	if err != nil {
		return nil, fmt.Errorf("cannot turn terminal echo off (%v): give the key with --bearer, --header or --no-key, or pipe it", err)
	}
	// Restore the terminal on Ctrl-C too.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	lines := make(chan []string, 1)
	go func() {
		var got []string
		sc := bufio.NewScanner(io.LimitReader(f, maxKeyInput))
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
				break // a bare token or "-" is one line
			}
		}
		lines <- got
	}()
	var got []string
	select {
	case got = <-lines:
	case <-sig:
		signal.Stop(sig)
		restore()
		fmt.Fprintln(prompt)
		return nil, errors.New("interrupted; nothing was saved")
	}
	signal.Stop(sig)
	restore()
	fmt.Fprintln(prompt)
	return ParseKey(strings.Join(got, "\n"))
}
