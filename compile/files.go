package compile

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/inputfile"
	"github.com/mcpc-dev/mcpc/internal/node"
	"github.com/mcpc-dev/mcpc/internal/redact"
)

// withoutBOM reads files through read and drops a leading UTF-8 byte order
// mark: the .NET host and Visual Studio accept and write it in JSON and env
// files. The mark is not text: every position, excerpt and value comes from
// what follows it, so column 1 of line 1 is the first character after it.
func withoutBOM(read func(string) ([]byte, error)) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		data, err := read(path)
		return inputfile.TrimBOM(data), err
	}
}

// FileSet keeps the text of every input read, so that printers can show the
// line under a diagnostic. It implements diag.Sources; every line it returns
// has known secret values redacted.
type FileSet struct {
	files map[string]*node.LineIndex
	texts map[string][]byte // what files index, for Text
	// hidden are byte spans of a file, sorted, that excerpts show as
	// [REDACTED] whatever they hold (the env values of mcp_config.json).
	hidden   map[string][]span
	pseudo   map[string]pseudoFile
	masked   map[string]map[int]string // lines replaced whole (env files)
	redactor *redact.Redactor
}

// NewFileSet is an empty set, for the excerpts of texts no compilation
// read (a piece of a file an editor is given).
func NewFileSet() *FileSet { return newFileSet() }

func newFileSet() *FileSet {
	return &FileSet{files: map[string]*node.LineIndex{}, texts: map[string][]byte{}, hidden: map[string][]span{}, pseudo: map[string]pseudoFile{}, masked: map[string]map[int]string{}}
}

func (fs *FileSet) add(path string, data []byte) {
	fs.files[path] = node.NewLineIndex(path, data)
	fs.texts[path] = data
}

// Text is the text of path as the compilation read it (without a byte order
// mark), secrets and all: for reading a source again without reading the
// file again (lint's inline ignores), never for output, which goes through
// Line.
func (fs *FileSet) Text(path string) ([]byte, bool) {
	if fs == nil {
		return nil, false
	}
	data, ok := fs.texts[path]
	return data, ok
}

// Add keeps data as the text of path, for excerpts.
func (fs *FileSet) Add(path string, data []byte) { fs.add(path, data) }

// Span is a byte range of a file (end exclusive).
type Span struct{ Start, End int }

// Hide makes excerpts of path show each span as [REDACTED], whatever it
// holds.
func (fs *FileSet) Hide(path string, spans []Span) {
	own := make([]span, len(spans))
	for i, s := range spans {
		own[i] = span{s.Start, s.End}
	}
	fs.hide(path, own)
}

func (fs *FileSet) addPseudo(path string, f pseudoFile) { fs.pseudo[path] = f }

// mask replaces a whole line of a file in excerpts (a line of an env file
// that may hold a secret mcpc could not parse).
func (fs *FileSet) mask(path string, line int, text string) {
	if fs.masked[path] == nil {
		fs.masked[path] = map[int]string{}
	}
	fs.masked[path][line] = text
}

// Line returns line n of file with secrets redacted, and col mapped into
// the redacted text.
func (fs *FileSet) Line(file string, n, col int) (string, int, bool) {
	if fs == nil {
		return "", 0, false
	}
	var raw string
	switch {
	case fs.masked[file] != nil && fs.masked[file][n] != "":
		// The caret stays within what the mask shows.
		m := fs.masked[file][n]
		return m, min(col, utf8.RuneCountInString(m)+1), true
	case fs.files[file] != nil:
		s, ok := fs.files[file].Line(n)
		if !ok {
			return "", 0, false
		}
		raw = s
		from := 0
		if len(raw) > 2*excerptReach {
			// A long line (minified JSON): redact only the part an excerpt
			// can show, so that a diagnostic per value costs its window,
			// not the line.
			raw, col, from = fs.window(file, n, raw, col)
		}
		if spans := fs.hidden[file]; len(spans) > 0 {
			start, _ := fs.files[file].LineStart(n)
			raw, col = hideSpans(raw, start+from, col, spans)
		}
	case fs.pseudo[file].has(n):
		raw = fs.pseudo[file].line(n)
	default:
		return "", 0, false
	}
	return fs.redactor.RedactAt(raw, col)
}

// excerptReach is how many bytes on each side of a column an excerpt may
// need: the text printer shows at most 480 characters (4 bytes each at
// most) around the caret; a little more is kept so that it still sees a
// longer line and marks the cut with "...".
const excerptReach = 2 << 10

// window cuts line n of file (raw) to excerptReach bytes on each side of
// column col, plus the longest secret (so that no secret within the window
// is cut), at character boundaries; it returns the cut text, col in it, and
// the byte offset in the line where the cut text starts.
func (fs *FileSet) window(file string, n int, raw string, col int) (string, int, int) {
	at, ok := fs.files[file].LineOffset(n, col)
	if !ok {
		return raw, col, 0
	}
	reach := excerptReach + fs.redactor.Longest()
	from, to := max(0, at-reach), min(len(raw), at+reach)
	for from > 0 && !utf8.RuneStart(raw[from]) {
		from--
	}
	for to < len(raw) && !utf8.RuneStart(raw[to]) {
		to++
	}
	return raw[from:to], utf8.RuneCountInString(raw[from:at]) + 1, from
}

// span is a byte range of a file (end exclusive).
type span struct{ start, end int }

// hide makes excerpts of path show each span as [REDACTED].
func (fs *FileSet) hide(path string, spans []span) {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	fs.hidden[path] = spans
}

// hideSpans replaces the parts of text (which starts at byte base of its
// file) that spans cover with [REDACTED], and maps col (1-based, in
// characters) into the new text; a col inside a hidden part moves to its
// start.
func hideSpans(text string, base, col int, spans []span) (string, int) {
	end := base + len(text)
	i := sort.Search(len(spans), func(i int) bool { return spans[i].end > base })
	if i == len(spans) || spans[i].start >= end {
		return text, col
	}
	// The caret's byte offset in text.
	caret := len(text)
	for off, c := 0, 1; off <= len(text); c++ {
		if c == col {
			caret = off
			break
		}
		if off == len(text) {
			break
		}
		_, size := utf8.DecodeRuneInString(text[off:])
		off += size
	}
	var b strings.Builder
	newCaret, last := -1, 0
	for ; i < len(spans) && spans[i].start < end; i++ {
		from, to := max(spans[i].start-base, last), min(spans[i].end-base, len(text))
		if from >= to {
			continue
		}
		if newCaret < 0 && caret < to {
			if caret < from {
				newCaret = b.Len() + caret - last
			} else {
				newCaret = b.Len() + (from - last)
			}
		}
		b.WriteString(text[last:from])
		b.WriteString(redact.Redacted)
		last = to
	}
	if newCaret < 0 {
		newCaret = b.Len() + caret - last
	}
	b.WriteString(text[last:])
	out := b.String()
	return out, utf8.RuneCountInString(out[:newCaret]) + 1
}
