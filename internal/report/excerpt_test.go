package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// excerptWhole is how excerpt was written before it had to cope with
// megabyte lines: it measures every character of the line. It is the
// reference the windowed excerpt must agree with, byte for byte, on every
// line where the excerptChars bound does not apply.
func excerptWhole(src string, col int) (line, pad string) {
	type cell struct {
		text, pad string
		width     int
	}
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
			if esc, ok := escapeRuneWhole(r, size, src[i]); ok {
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
	k := max(col-1, 0)
	start, end := 0, len(cells)
	if total > excerptWidth {
		start = min(k, len(cells))
		for left := 0; start > 0 && left+cells[start-1].width <= excerptLeft; start-- {
			left += cells[start-1].width
		}
		end = start
		width := 0
		for ; end < len(cells) && width+cells[end].width <= excerptWidth; end++ {
			width += cells[end].width
		}
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
	if k > len(cells) {
		p.WriteString(strings.Repeat(" ", min(k-len(cells), excerptWidth)))
	}
	return l.String(), p.String()
}

// escapeRuneWhole is escapeRune as it was written before escapeLen.
func escapeRuneWhole(r rune, size int, first byte) (string, bool) {
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

// zeroWidth counts the characters of s that take no room (combining marks).
func zeroWidth(s string) int {
	n := 0
	for _, r := range s {
		if unicode.In(r, unicode.Mn, unicode.Me) {
			n++
		}
	}
	return n
}

// FuzzExcerpt checks the windowed excerpt against excerptWhole, and that
// an excerpt is bounded whatever the line.
func FuzzExcerpt(f *testing.F) {
	long := strings.Repeat("a", 100) + "X" + strings.Repeat("b", 100)
	for _, c := range []struct {
		src string
		col int
	}{
		{"abc", 2}, {"ab\r\n", 3}, {"\t\tx", 3}, {"e\u0301x", 3}, {"日本x", 3}, {"🙂x", 2},
		{"\x00x", 2}, {"\xffx", 2}, {long, 101}, {long, 1}, {long, 201}, {long, 210},
		{strings.Repeat("日", 100), 100}, {strings.Repeat("\t\x01é\u200b日", 60), 150},
		{strings.Repeat("x\u0301", 300), 400}, {"ab", 1 << 40}, {"ab", -3},
	} {
		f.Add(c.src, c.col, c.col+excerptChars+7)
	}
	// Two excerpts of the same line share a cursor, as in a report.
	f.Fuzz(func(t *testing.T, src string, col, col2 int) {
		var cur lineCursor
		for _, col := range []int{col, col2} {
			line, pad := excerptAt(src, col, &cur)
			if zeroWidth(src) <= excerptWidth {
				if wantLine, wantPad := excerptWhole(src, col); line != wantLine || pad != wantPad {
					t.Fatalf("excerpt(%q, %d) = %q, %q; want %q, %q", src, col, line, pad, wantLine, wantPad)
				}
			}
			if limit := 2*len(ellipsis) + excerptWidth + utf8.UTFMax*excerptChars; len(line) > limit || len(pad) > limit {
				t.Fatalf("excerpt(%q, %d) = %d and %d bytes, more than %d", src, col, len(line), len(pad), limit)
			}
		}
	})
}

// allocatedBytes is how many bytes f allocates.
var allocatedBytes = testservers.AllocatedBytes

// An excerpt of a 10 MB line costs its window, not the line: a cell per
// character of the line made one warning cost far more than the input
// (docs/performance.md, "Figures behind code comments").
func TestExcerptOfLongLineAllocatesTheWindow(t *testing.T) {
	const n = 10 << 20
	src := strings.Repeat("{\"k\": \"é日\u0301\t\x01\"}, ", n/20)
	chars := utf8.RuneCountInString(src)
	for _, col := range []int{1, chars / 2, chars, chars + 5} {
		var line, pad string
		allocated := allocatedBytes(func() { line, pad = excerpt(src, col) })
		if allocated > 64<<10 || len(line) > 1<<10 || len(pad) > 1<<10 {
			t.Errorf("column %d: allocated %d bytes for an excerpt of %d and %d bytes", col, allocated, len(line), len(pad))
		}
	}
}

// The text report of many diagnostics on one long line allocates about
// the report's size, not a line per diagnostic.
func TestTextReportOnLongLineAllocatesTheReport(t *testing.T) {
	src := strings.Repeat(`{"command": "npx", "args": ["-y"]}, `, (10<<20)/36)
	sources := mapSources{"settings.json": {1: src}}
	var ds []diag.Diagnostic
	for col := 1; col < len(src); col += len(src) / 10 {
		ds = append(ds, diag.Diagnostic{File: "settings.json", Line: 1, Column: col, Severity: diag.Warning,
			Rule: "unknown-field", Message: "unknown field", Suggestion: "remove it"})
	}
	p, err := New("text", Options{Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	allocated := allocatedBytes(func() {
		if err := p.Print(&out, ds); err != nil {
			t.Fatal(err)
		}
	})
	if allocated > 1<<20 || out.Len() > 500*len(ds) {
		t.Errorf("%d diagnostics on a 10 MB line: allocated %d bytes for a report of %d bytes", len(ds), allocated, out.Len())
	}
	if want := "  1 | ..."; !strings.Contains(out.String(), want) {
		t.Errorf("no windowed excerpt in:\n%s", out.String())
	}
}

// BenchmarkTextReportLongLine prints a warning per value of a minified
// file, n values on one line of about 170 bytes each, with sources that
// redact nothing: the printer's own cost, which must stay flat per
// diagnostic as the line grows.
func BenchmarkTextReportLongLine(b *testing.B) {
	const value = `"user-00000": {"command": "node", "args": ["server-0.js"], "env": {"DEBUG": null, "HOME_DIR": "${workspace}"}, "comand": "node"},`
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("diagnostics=%d", n), func(b *testing.B) {
			src := "{" + strings.Repeat(value, n) + "}"
			ds := make([]diag.Diagnostic, n)
			for i := range ds {
				ds[i] = diag.Diagnostic{File: "settings.json", Line: 1, Column: 2 + i*len(value) + strings.Index(value, `"comand"`),
					Severity: diag.Warning, Rule: "unknown-field", Message: `unknown field "comand"`, Suggestion: `did you mean "command"?`}
			}
			p, err := New("text", Options{Sources: mapSources{"settings.json": {1: src}}})
			if err != nil {
				b.Fatal(err)
			}
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if err := p.Print(&out, ds); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/diagnostic")
		})
	}
}

// A text report is written as it grows, not held whole: a lint with a
// finding per server of a large deployment prints tens of megabytes.
func TestTextReportIsWrittenAsItGrows(t *testing.T) {
	var ds []diag.Diagnostic
	for i := range 5000 {
		ds = append(ds, diag.Diagnostic{File: "settings.json", Line: i + 1, Column: 3, Severity: diag.Warning,
			Rule: "unknown-field", Message: fmt.Sprintf("unknown field %d", i), Suggestion: "remove it"})
	}
	p, err := New("text", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	w := &largestWrite{w: &whole}
	if err := p.Print(w, ds); err != nil {
		t.Fatal(err)
	}
	if whole.Len() < 4*textChunk || w.largest > textChunk+1<<10 {
		t.Errorf("a report of %d bytes was written with a largest write of %d bytes", whole.Len(), w.largest)
	}
	if !strings.HasPrefix(whole.String(), "settings.json:1:3: warning: unknown field 0 [unknown-field]\n") ||
		!strings.HasSuffix(whole.String(), "settings.json:5000:3: warning: unknown field 4999 [unknown-field]\n  suggestion: remove it\n") {
		t.Errorf("report starts %q, ends %q", whole.String()[:80], whole.String()[whole.Len()-80:])
	}
}

// largestWrite records the longest single write to w.
type largestWrite struct {
	w       *bytes.Buffer
	largest int
}

func (l *largestWrite) Write(p []byte) (int, error) {
	l.largest = max(l.largest, len(p))
	return l.w.Write(p)
}
