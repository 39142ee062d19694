package supervisor

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// lineWriter splits a byte stream into lines, redacts each line whole and
// hands it to a callback. A line longer than StderrLineMax is emitted in
// pieces, so that a server that never writes a newline cannot make it grow
// without bound; a piece ends only where no known secret is cut in two (see
// cutLong), since a secret cut in two is no longer recognized, and so never
// redacted.
type lineWriter struct {
	emit   func(string)
	redact func(string) string
	// span returns the length of the longest text redact replaces (0: none).
	span func() int

	buf      []byte
	skipping bool // the rest of the current line is withheld
}

func (w *lineWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !w.skipping {
				w.buf = append(w.buf, b...)
				w.cutLong()
			}
			break
		}
		if !w.skipping {
			line := append(w.buf, b[:i]...)
			w.emit(w.redact(string(bytes.TrimRight(line, "\r"))))
		}
		w.buf, w.skipping = w.buf[:0], false
		b = b[i+1:]
	}
	return n, nil
}

// Close emits what is left of an unterminated last line.
func (w *lineWriter) Close() error {
	if len(w.buf) > 0 && !w.skipping {
		w.emit(w.redact(string(bytes.TrimRight(w.buf, "\r"))))
	}
	w.buf, w.skipping = nil, false
	return nil
}

// cutLong emits the front of a line that has grown past StderrLineMax, in
// pieces of about StderrLineMax bytes, redacted.
//
// A piece [0, c) is emitted only when it is redacted exactly as the whole
// line would be: redact(buf[:c]) + redact(buf[c:]) == redact(buf), so that
// no secret straddles c, and c is at least span bytes before the end of
// what has arrived, so that bytes still to come cannot complete a secret
// that starts before c. The first such c from StderrLineMax on is taken
// (on a character boundary if there is one); redaction leaves at most span
// bytes in a row unreplaceable, so one is found within span bytes unless
// the line is made of overlapping secrets. Then the rest of the line is
// withheld rather than risked.
func (w *lineWriter) cutLong() {
	for {
		span := 0
		if w.span != nil {
			span = w.span()
		}
		if len(w.buf) < StderrLineMax+2*span {
			return
		}
		c, piece, ok := StderrLineMax, "", true
		if span == 0 {
			piece = w.redact(string(w.buf[:c]))
		} else {
			c, piece, ok = w.safeCut(span)
		}
		if !ok {
			w.emit("[the rest of this line was withheld: it may hold a secret that mcpc could not redact]")
			w.buf, w.skipping = w.buf[:0], true
			return
		}
		w.emit(piece)
		w.buf = append(w.buf[:0], w.buf[c:]...)
	}
}

// safeCut finds where cutLong may cut (see there) and the redacted piece
// before it.
func (w *lineWriter) safeCut(span int) (int, string, bool) {
	whole := w.redact(string(w.buf))
	fallback, fpiece := -1, ""
	for c := StderrLineMax; c <= len(w.buf)-span; c++ {
		a := w.redact(string(w.buf[:c]))
		if !strings.HasPrefix(whole, a) || a+w.redact(string(w.buf[c:])) != whole {
			continue
		}
		if utf8.RuneStart(w.buf[c]) {
			return c, a, true
		}
		if fallback < 0 {
			fallback, fpiece = c, a
		}
	}
	return fallback, fpiece, fallback >= 0
}
