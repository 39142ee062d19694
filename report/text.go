package report

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/compile/diag"
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
// the input. Nothing else is printed; a summary is the caller's job.
type textPrinter struct{ opts Options }

// Long source lines (minified JSON) are cut to a window around the caret.
const (
	excerptWidth = 120 // display cells shown at most
	excerptLeft  = 60  // display cells kept before the caret
	ellipsis     = "..."
)

func (p textPrinter) Print(w io.Writer, ds []diag.Diagnostic) error {
	var buf bytes.Buffer
	for _, d := range sorted(ds) {
		p.printOne(&buf, d)
	}
	return flush(w, &buf)
}

func (p textPrinter) printOne(buf *bytes.Buffer, d diag.Diagnostic) {
	buf.WriteString(escapeText(d.File))
	if d.Line > 0 {
		buf.WriteByte(':')
		buf.WriteString(strconv.Itoa(d.Line))
		if d.Column > 0 {
			buf.WriteByte(':')
			buf.WriteString(strconv.Itoa(d.Column))
		}
	}
	sev := string(d.Severity)
	if sev == "" {
		sev = string(diag.Info)
	}
	buf.WriteString(": ")
	buf.WriteString(escapeText(sev))
	buf.WriteString(": ")
	buf.WriteString(escapeText(d.Message))
	if d.Rule != "" {
		buf.WriteString(" [")
		buf.WriteString(escapeText(d.Rule))
		buf.WriteByte(']')
	}
	buf.WriteByte('\n')
	if p.opts.OneLine {
		return
	}
	if d.Line > 0 && p.opts.Sources != nil {
		if src, col, ok := p.opts.Sources.Line(d.File, d.Line, d.Column); ok {
			num := strconv.Itoa(d.Line)
			gutter := strings.Repeat(" ", len(num))
			line, caret := excerpt(src, col)
			buf.WriteString("  " + num + " | " + line + "\n")
			if col > 0 {
				buf.WriteString("  " + gutter + " | " + caret + "^\n")
			}
		}
	}
	if d.Suggestion != "" {
		buf.WriteString("  suggestion: ")
		buf.WriteString(escapeText(d.Suggestion))
		buf.WriteByte('\n')
	}
}

// cell is one character of a source line as displayed: its text, the
// whitespace that takes the same room in the caret line, and its width.
type cell struct {
	text, pad string
	width     int
}

// excerpt returns the source line as displayed and the padding that puts a
// caret under column col (1-based, in Unicode characters). The padding
// repeats the line's tabs and uses spaces for everything else, so that the
// caret lines up whatever the tab width; wide (East Asian) characters take
// two spaces, combining marks none, and escaped control characters as many
// as their escape.
func excerpt(src string, col int) (line, pad string) {
	src = strings.TrimSuffix(src, "\n")
	src = strings.TrimSuffix(src, "\r")
	var cells []cell
	total := 0
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		var c cell
		switch {
		case r == '\t':
			c = cell{"\t", "\t", 1}
		default:
			if esc, ok := escapeRune(r, size, src[i]); ok {
				c = cell{esc, strings.Repeat(" ", len(esc)), len(esc)}
			} else {
				wd := runeWidth(r)
				c = cell{src[i : i+size], strings.Repeat(" ", wd), wd}
			}
		}
		cells = append(cells, c)
		total += c.width
		i += size
	}

	k := col - 1 // index of the character under the caret
	if k < 0 {
		k = 0
	}
	start, end := 0, len(cells)
	if total > excerptWidth {
		// Walk back from the caret for the left context, then fill the
		// window to the right.
		start = min(k, len(cells))
		for left := 0; start > 0 && left+cells[start-1].width <= excerptLeft; start-- {
			left += cells[start-1].width
		}
		end = start
		width := 0
		for ; end < len(cells) && width+cells[end].width <= excerptWidth; end++ {
			width += cells[end].width
		}
		// Near the end of the line, use the spare room for more context on
		// the left.
		for ; end == len(cells) && start > 0 && width+cells[start-1].width <= excerptWidth; start-- {
			width += cells[start-1].width
		}
	}

	var l, p strings.Builder
	if start > 0 {
		l.WriteString(ellipsis)
		p.WriteString(strings.Repeat(" ", len(ellipsis)))
	}
	for i := start; i < end; i++ {
		l.WriteString(cells[i].text)
		if i < k {
			p.WriteString(cells[i].pad)
		}
	}
	if end < len(cells) {
		l.WriteString(ellipsis)
	}
	if k > len(cells) { // caret past the end of the line (bounded: the column may be bogus)
		p.WriteString(strings.Repeat(" ", min(k-len(cells), excerptWidth)))
	}
	return l.String(), p.String()
}

// escapeText makes s safe to print on one line of a terminal: newlines,
// control, format (such as bidi overrides) and separator characters and
// invalid UTF-8 are replaced by Go-style escapes. Tabs are kept.
func escapeText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if esc, ok := escapeRune(r, size, s[i]); ok {
			b.WriteString(esc)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeRune returns the escape for a character that must not reach the
// terminal as is. first is the first byte of the encoding, used for invalid
// UTF-8.
func escapeRune(r rune, size int, first byte) (string, bool) {
	switch {
	case r == utf8.RuneError && size == 1:
		return fmt.Sprintf(`\x%02x`, first), true
	case r == '\t':
		return "", false
	case r == '\n':
		return `\n`, true
	case r == '\r':
		return `\r`, true
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r), true
	case 0x80 <= r && r <= 0x9f,
		unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
		if r > 0xffff {
			return fmt.Sprintf(`\U%08x`, r), true
		}
		return fmt.Sprintf(`\u%04x`, r), true
	}
	return "", false
}

// runeWidth is the number of terminal cells r takes: 0 for combining marks,
// 2 for wide East Asian characters and emoji, 1 otherwise.
func runeWidth(r rune) int {
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
