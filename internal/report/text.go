package report

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/term"
)

// textPrinter prints one header line per diagnostic,
//
//	path:line:col: severity: message [rule-id]
//
// followed, unless OneLine is set, by an excerpt of the source line with a
// caret under the column and by the suggestion:
//
//	app.json:12:5: warning: unknown field "comand" [unknown-field]
//	  12 |     "comand": "npx",
//	     |     ^
//	  suggestion: did you mean "command"?
//
// A diagnostic on line 0 prints "path: severity: message [rule-id]", one with
// column 0 prints "path:line: ...". The header always stays on one line:
// newlines and other control characters in paths and messages are shown as
// escapes such as \n, so that the output cannot be forged or scrambled by
// the input (term.Escape). Nothing else is printed; a summary is the caller's job.
type textPrinter struct{ opts Options }

// Long source lines (minified JSON) are cut to a window around the caret.
const (
	excerptWidth = 120 // display cells shown at most
	excerptLeft  = 60  // display cells kept before the caret
	// excerptChars bounds the characters shown: combining marks take no
	// room on the screen, so a line of them would otherwise be shown
	// whole, however long. Ordinary text reaches excerptWidth first.
	excerptChars = 4 * excerptWidth
	ellipsis     = "..."
)

// printRun prints r's diagnostics; a failure's message is the caller's to
// print (on standard error, as every error of mcpc).
func (p textPrinter) printRun(w io.Writer, r Run) error {
	var buf bytes.Buffer
	var cur lineCursor
	for _, d := range sorted(r.Diagnostics) {
		p.printOne(&buf, d, &cur)
		// Written as it grows: a report of many findings (with their
		// excerpts, tens of megabytes) is not held whole.
		if buf.Len() >= textChunk {
			if err := flush(w, &buf); err != nil {
				return err
			}
			buf.Reset()
		}
	}
	return flush(w, &buf)
}

// textChunk is how much of a text report is buffered before it is written.
const textChunk = 64 << 10

// ANSI SGR sequences of the colored text format (Options.Color).
const (
	sgrReset   = "\x1b[0m"
	sgrBold    = "\x1b[1m"
	sgrError   = "\x1b[1;31m" // bold red
	sgrWarning = "\x1b[1;33m" // bold yellow
	sgrInfo    = "\x1b[1;36m" // bold cyan
	sgrCaret   = "\x1b[1;32m" // bold green
	sgrLabel   = "\x1b[36m"   // cyan
)

// severityColor is the color of a severity's name.
func severityColor(s diag.Severity) string {
	switch s {
	case diag.Error:
		return sgrError
	case diag.Warning:
		return sgrWarning
	}
	return sgrInfo
}

// paint writes text, wrapped in sgr and a reset when the printer colors.
func (p textPrinter) paint(buf *bytes.Buffer, sgr, text string) {
	if !p.opts.Color {
		buf.WriteString(text)
		return
	}
	buf.WriteString(sgr)
	buf.WriteString(text)
	buf.WriteString(sgrReset)
}

func (p textPrinter) printOne(buf *bytes.Buffer, d diag.Diagnostic, cur *lineCursor) {
	if p.opts.Color {
		buf.WriteString(sgrBold)
	}
	buf.WriteString(term.Escape(d.File))
	if d.Line > 0 {
		buf.WriteByte(':')
		buf.WriteString(strconv.Itoa(d.Line))
		if d.Column > 0 {
			buf.WriteByte(':')
			buf.WriteString(strconv.Itoa(d.Column))
		}
	}
	if p.opts.Color {
		buf.WriteString(sgrReset)
	}
	sev := string(d.Severity)
	if sev == "" {
		sev = string(diag.Info)
	}
	buf.WriteString(": ")
	p.paint(buf, severityColor(d.Severity), term.Escape(sev))
	buf.WriteString(": ")
	buf.WriteString(term.Escape(d.Message))
	if d.Rule != "" {
		buf.WriteString(" [")
		buf.WriteString(term.Escape(d.Rule))
		buf.WriteByte(']')
	}
	buf.WriteByte('\n')
	if p.opts.OneLine {
		return
	}
	if d.Line > 0 && p.opts.Sources != nil {
		if src, col, ok := p.opts.Sources.Line(d.File, d.Line, d.Column); ok {
			num := strconv.Itoa(d.Line)
			gutter := spaces(len(num))
			line, caret := excerptAt(src, col, cur)
			writeStrings(buf, "  ", num, " | ", line, "\n")
			if col > 0 {
				writeStrings(buf, "  ", gutter, " | ", caret)
				p.paint(buf, sgrCaret, "^")
				buf.WriteByte('\n')
			}
		}
	}
	if d.Suggestion != "" {
		buf.WriteString("  ")
		p.paint(buf, sgrLabel, "suggestion:")
		buf.WriteByte(' ')
		buf.WriteString(term.Escape(d.Suggestion))
		buf.WriteByte('\n')
	}
}

// writeStrings writes each of ss (not joined first: a report of many
// findings would allocate each line twice).
func writeStrings(buf *bytes.Buffer, ss ...string) {
	for _, s := range ss {
		buf.WriteString(s)
	}
}

// excerpt returns the source line as displayed and the padding that puts a
// caret under column col (1-based, in Unicode characters). The padding
// repeats the line's tabs and uses spaces for everything else, so that the
// caret lines up whatever the tab width; wide (East Asian) characters take
// two spaces, combining marks none, and escaped control characters as many
// as their escape.
//
// A line wider than excerptWidth is cut to a window around the caret,
// marked with an ellipsis on each cut side. The excerpt allocates only for
// what it shows, and reads the line only up to the window (characters
// before it are skipped, not measured): a minified file is one line of
// megabytes, and a report may show one excerpt of it per value.
func excerpt(src string, col int) (line, pad string) { return excerptAt(src, col, nil) }

// excerptAt is excerpt, skipping to the window from where cur stood in the
// same line, if it stood before it (cur may be nil). Diagnostics come
// sorted by column, so the excerpts of one line read it once in all.
func excerptAt(src string, col int, cur *lineCursor) (line, pad string) {
	src = strings.TrimSuffix(src, "\n")
	src = strings.TrimSuffix(src, "\r")
	k := max(col-1, 0) // index of the character under the caret
	if lineFits(src) {
		caret, n := skipChars(src, 0, k)
		return renderExcerpt(src, 0, len(src), caret, k-n)
	}

	// Measure the characters before the caret that the window may show:
	// at most excerptChars of them.
	before := cur.scratch()
	var off, idx, m int
	for first := max(k-excerptChars, 0); ; {
		off, idx = cur.seek(src, first)
		for m = 0; idx < k && off < len(src); idx++ {
			width, size := 1, 1
			if c := src[off]; c < 0x20 || c >= 0x7f {
				width, size = cellAt(src, off)
			}
			before[m].off, before[m].width = off, width
			off += size
			m++
		}
		if idx == k || first == 0 || m == excerptChars {
			break
		}
		// The caret is beyond the end of the line, which has idx
		// characters: measure the last of them instead.
		first = max(idx-excerptChars, 0)
	}
	caret, past := off, k-idx // past > 0: the caret is beyond the end of the line

	// Walk back from the caret for the left context, then fill the window
	// to the right.
	s, width := m, 0 // s: the window's first character, an index into before
	for s > 0 && width+before[s-1].width <= excerptLeft && m-s < excerptChars/2 {
		width += before[s-1].width
		s--
	}
	count, end := m-s, caret
	for end < len(src) && count < excerptChars {
		w, size := 1, 1
		if c := src[end]; c < 0x20 || c >= 0x7f {
			w, size = cellAt(src, end)
		}
		if width+w > excerptWidth {
			break
		}
		width += w
		count++
		end += size
	}
	// Near the end of the line, use the spare room for more context on the
	// left.
	for end == len(src) && s > 0 && width+before[s-1].width <= excerptWidth && count < excerptChars {
		width += before[s-1].width
		count++
		s--
	}
	start := caret
	if s < m {
		start = before[s].off
	}
	return renderExcerpt(src, start, end, caret, past)
}

// lineFits reports whether src is shown whole: at most excerptWidth cells
// and excerptChars characters. It reads no further than that.
// printableASCII: s is bytes from ' ' to '~' only.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// spaces is n spaces, without allocating for an excerpt's padding.
func spaces(n int) string {
	const blank = "                                                                                                                                                                                                                                                                " // 256
	if n <= len(blank) {
		return blank[:n]
	}
	return strings.Repeat(" ", n)
}

func lineFits(src string) bool {
	if len(src) <= min(excerptWidth, excerptChars) && printableASCII(src) {
		return true // a character a byte, a cell each
	}
	width, count := 0, 0
	for i := 0; i < len(src); count++ {
		w, size := 1, 1
		if c := src[i]; c < 0x20 || c >= 0x7f {
			w, size = cellAt(src, i)
		}
		width += w
		if width > excerptWidth || count >= excerptChars {
			return false
		}
		i += size
	}
	return true
}

// skipChars returns the byte offset of src n characters after byte off and
// the number of characters skipped (fewer at the end of src). A character
// is what utf8.DecodeRuneInString reads: an invalid byte is one.
func skipChars(src string, off, n int) (int, int) {
	done := 0
	for ; done < n && off < len(src); done++ {
		if src[off] < utf8.RuneSelf {
			off++
			continue
		}
		_, size := utf8.DecodeRuneInString(src[off:])
		off += size
	}
	return off, done
}

// lineCursor remembers a place in the last line an excerpt was cut from:
// the byte offset off, after chars characters.
type lineCursor struct {
	text       string
	off, chars int
	// before is excerptAt's record of the characters before a caret,
	// kept from one excerpt to the next (not cleared for each).
	before *[excerptChars]cellMark
}

// cellMark is a character of a line: its byte offset and display width.
type cellMark struct{ off, width int }

// scratch is the record excerptAt fills; a nil cursor's is new.
func (c *lineCursor) scratch() *[excerptChars]cellMark {
	if c == nil {
		return new([excerptChars]cellMark)
	}
	if c.before == nil {
		c.before = new([excerptChars]cellMark)
	}
	return c.before
}

// seek returns the byte offset of src n characters in and the number of
// characters before it (fewer than n at the end of src), starting from
// the cursor when it stands in src before that place. A nil cursor
// starts from the beginning.
func (c *lineCursor) seek(src string, n int) (int, int) {
	if c == nil {
		return skipChars(src, 0, n)
	}
	if c.text != src || c.chars > n {
		*c = lineCursor{text: src, before: c.before}
	}
	off, done := skipChars(src, c.off, n-c.chars)
	c.off, c.chars = off, c.chars+done
	return c.off, c.chars
}

// cellAt returns the display width of the character at byte i of src and
// its size in bytes.
func cellAt(src string, i int) (width, size int) {
	if c := src[i]; c >= 0x20 && c < 0x7f || c == '\t' {
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(src[i:])
	if n := term.EscapeLen(r, size); n > 0 {
		return n, size
	}
	return runeWidth(r), size
}

// renderExcerpt shows src[start:end] as the excerpt and pads the caret line up to
// byte caret, then past characters beyond the end of the line.
func renderExcerpt(src string, start, end, caret, past int) (line, pad string) {
	if printableASCII(src[start:end]) {
		// Most lines: each character is itself, one cell wide.
		line, n := src[start:end], max(min(caret, end)-start, 0)
		switch {
		case start > 0 && end < len(src):
			line = ellipsis + line + ellipsis
		case start > 0:
			line = ellipsis + line
		case end < len(src):
			line += ellipsis
		}
		if start > 0 {
			n += len(ellipsis)
		}
		if past > 0 {
			n += min(past, excerptWidth)
		}
		return line, spaces(n)
	}
	var l, p strings.Builder
	if start > 0 {
		l.WriteString(ellipsis)
		p.WriteString(strings.Repeat(" ", len(ellipsis)))
	}
	for i := start; i < end; {
		r, size := utf8.DecodeRuneInString(src[i:])
		text, space := src[i:i+size], ""
		switch esc, escaped := term.EscapeRune(r, size, src[i]); {
		case r == '\t':
			space = "\t"
		case escaped:
			text, space = esc, strings.Repeat(" ", len(esc))
		default:
			space = strings.Repeat(" ", runeWidth(r))
		}
		l.WriteString(text)
		if i < caret {
			p.WriteString(space)
		}
		i += size
	}
	if end < len(src) {
		l.WriteString(ellipsis)
	}
	if past > 0 { // bounded: the column may be bogus
		p.WriteString(strings.Repeat(" ", min(past, excerptWidth)))
	}
	return l.String(), p.String()
}

// runeWidth is the number of terminal cells r takes: 0 for combining marks,
// 2 for wide East Asian characters and emoji, 1 otherwise.
func runeWidth(r rune) int {
	if r < 0x300 { // below the first combining mark and the first wide block
		return 1
	}
	if unicode.In(r, unicode.Mn, unicode.Me) {
		return 0
	}
	for _, rg := range wideRanges {
		if r < rg[0] {
			break
		}
		if r <= rg[1] {
			return 2
		}
	}
	return 1
}

// wideRanges are the main East Asian Wide and Fullwidth blocks, sorted.
var wideRanges = [][2]rune{
	{0x1100, 0x115F},   // Hangul Jamo initial consonants
	{0x231A, 0x231B},   // watch, hourglass
	{0x2E80, 0x303E},   // CJK radicals, Kangxi, CJK symbols and punctuation
	{0x3041, 0x33FF},   // Hiragana, Katakana, Bopomofo, CJK compatibility
	{0x3400, 0x4DBF},   // CJK Extension A
	{0x4E00, 0x9FFF},   // CJK Unified Ideographs
	{0xA000, 0xA4CF},   // Yi
	{0xA960, 0xA97F},   // Hangul Jamo Extended-A
	{0xAC00, 0xD7A3},   // Hangul syllables
	{0xF900, 0xFAFF},   // CJK compatibility ideographs
	{0xFE10, 0xFE19},   // vertical forms
	{0xFE30, 0xFE6F},   // CJK compatibility forms, small form variants
	{0xFF00, 0xFF60},   // fullwidth forms
	{0xFFE0, 0xFFE6},   // fullwidth signs
	{0x1F300, 0x1F64F}, // pictographs, emoticons
	{0x1F680, 0x1F6FF}, // transport and map symbols
	{0x1F900, 0x1F9FF}, // supplemental symbols and pictographs
	{0x1FA70, 0x1FAFF}, // symbols and pictographs extended-A
	{0x20000, 0x2FFFD}, // CJK Extensions B-F
	{0x30000, 0x3FFFD}, // CJK Extension G and later
}
