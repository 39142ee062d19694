// Package term is mcpc's side of the operator's terminal: it reads a secret
// typed there without echoing it (the key of `mcpc remote add`, the value
// of `mcpc config env`), and escapes the control characters of text shown
// there (Escape), so that no input can drive the terminal.
package term

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// ErrInterrupted is returned when Ctrl-C stops the reading.
var ErrInterrupted = errors.New("interrupted")

// EchoError says that echo could not be turned off: nothing was read.
type EchoError struct{ Err error }

func (e *EchoError) Error() string { return fmt.Sprintf("cannot turn terminal echo off (%v)", e.Err) }

func (e *EchoError) Unwrap() error { return e.Err }

// ReadWithoutEcho prints prompt on w, turns echo off on the terminal f while
// read reads from it, and turns it back on afterwards, also when Ctrl-C
// interrupts the reading (ErrInterrupted; read's result is then dropped).
// A newline is printed on w after the reading, since the one typed was not
// shown. The value read is never printed.
func ReadWithoutEcho[T any](f *os.File, w io.Writer, prompt string, read func(io.Reader) T) (T, error) {
	var zero T
	fmt.Fprint(w, prompt)
	restore, err := echoOff(f)
	if err != nil {
		return zero, &EchoError{Err: err}
	}
	// Restore the terminal on Ctrl-C too.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	got := make(chan T, 1)
	go func() { got <- read(f) }()
	select {
	case v := <-got:
		restore()
		fmt.Fprintln(w)
		return v, nil
	case <-sig:
		restore()
		fmt.Fprintln(w)
		return zero, ErrInterrupted
	}
}
