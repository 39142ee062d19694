package supervisor

import (
	"strings"
	"sync"
)

// Tail keeps the last bytes a process wrote to stderr, bounded, so a
// server that floods stderr cannot exhaust memory. It is safe for concurrent
// use.
type Tail struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	trunc bool // bytes were dropped from the front
}

func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max { // amortize: trim only when twice over
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.max:]...)
		t.trunc = true
	}
	return len(p), nil
}

// Text returns the kept output, at most max bytes, starting at a line
// boundary when bytes were dropped. The text is redacted afterwards, so it
// never starts in the middle of a line: that could be the middle of a
// secret, which would then not be recognized. A single line longer than
// what is kept is not shown, only noted.
func (t *Tail) Text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	trunc := t.trunc
	if len(b) > t.max {
		b, trunc = b[len(b)-t.max:], true
	}
	s := string(b)
	if trunc {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return longLineNote
		}
		s = s[i+1:]
	}
	return s
}

// longLineNote stands for a stderr line longer than the tail keeps.
const longLineNote = "(a stderr line too long to show)\n"

// LastLines returns the last n non-empty lines of text, each cut to width
// characters, oldest first.
func LastLines(text string, n, width int) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if r := []rune(l); len(r) > width {
			l = string(r[:width]) + "…"
		}
		out = append(out, l)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
