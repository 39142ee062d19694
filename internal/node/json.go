package node

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unique"

	"github.com/tailscale/hujson"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// MaxDepth bounds the nesting of objects and arrays of mcpc's own files
// (OwnNesting). The parser recurses per level, so without a bound a small
// file of brackets exhausts the stack or memory; no configuration needs
// more than a handful of levels.
const MaxDepth = 100

// Nesting is how deeply the program that reads a file lets its objects and
// arrays nest: a file nested deeper is a json-syntax error at the first
// bracket past Max, whose message says what that program does with it.
type Nesting struct {
	Max int
	// Reader, when set, says who stops past Max and what follows, for
	// the message.
	Reader string
	// Python: the reader is Python's json, which also reads NaN,
	// Infinity, -Infinity and numbers no float64 holds (pyconst.go).
	Python bool
}

var (
	// OwnNesting is for the files only mcpc reads: plans, locks, the
	// imported configurations of other tools.
	OwnNesting = Nesting{Max: MaxDepth}
	// DotNetNesting is for the files the volcanic host reads with
	// System.Text.Json (appsettings files, settings.json, servers.json):
	// its readers refuse more than 64 levels unless told otherwise
	// (JsonReaderOptions.MaxDepth 0 means 64), and the host's do not say
	// otherwise.
	DotNetNesting = Nesting{Max: 64, Reader: `which the host's JSON reader (System.Text.Json) refuses: "The maximum configured depth of 64 has been exceeded"`}
	// PythonNesting is for CraftBot's mcp_config.json, read by Python's
	// json.load: it recurses once per level and raises RecursionError
	// near 1000 levels (sys.getrecursionlimit(), which also counts the
	// calls already on CraftBot's stack, so the exact depth varies);
	// CraftBot catches it and loads no server. mcpc stops short of that,
	// at 900.
	PythonNesting = Nesting{Max: 900, Reader: "which CraftBot's Python json.load cannot read (it stops near 1000 levels, Python's recursion limit, with RecursionError)", Python: true}
)

// LineIndex turns byte offsets of one file into 1-based line and column
// (columns count Unicode characters, as editors do). It is immutable once
// built and safe for concurrent use.
//
// A lookup costs O(log lines) whatever the length of the line: a minified
// file is one line, and counting its characters from the start of the line
// for each of its values made positions quadratic in the file's size.
type LineIndex struct {
	file   string
	handle unique.Handle[string] // file, interned once for every Loc
	data   []byte
	starts []int
	// marks[i] is the first character boundary at or after byte
	// i*markEvery with the number of characters before it, so that a
	// column needs at most markEvery+3 bytes counted. Nil when data is
	// ASCII: a column is then a byte count.
	marks []runeMark

	textOnce sync.Once
	text     string // data as a string, made on the first call of Line
	// last is the short line Line copied last: a report's findings on one
	// line come one after the other.
	last atomic.Pointer[copiedLine]
}

type copiedLine struct {
	n    int
	text string
}

// runeMark is a character boundary: its byte offset and the number of
// characters (as utf8.RuneCount counts them) before it.
type runeMark struct{ off, runes int }

// markEvery is the byte distance between two marks: 16 bytes of index per
// 256 bytes of non-ASCII input.
const markEvery = 256

// NewLineIndex indexes data, the content of file.
//
// The line starts are counted first and stored in a slice of that size:
// grown by appending, it was a seventh of the bytes a large validation
// allocated.
func NewLineIndex(file string, data []byte) *LineIndex {
	starts := make([]int, 1, bytes.Count(data, newline)+1)
	for off := 0; ; {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		starts = append(starts, off)
	}
	ascii := isASCII(data)
	ix := &LineIndex{file: file, handle: fileHandle(file), data: data, starts: starts}
	if !ascii {
		ix.marks = runeMarks(data)
	}
	return ix
}

var newline = []byte{'\n'}

// isASCII reports whether every byte of data is below utf8.RuneSelf, eight
// bytes at a time.
func isASCII(data []byte) bool {
	const high = 0x8080808080808080
	for len(data) >= 8 {
		if binary.LittleEndian.Uint64(data)&high != 0 {
			return false
		}
		data = data[8:]
	}
	for _, b := range data {
		if b >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// runeMarks walks data character by character, as utf8.RuneCount does (an
// invalid byte is one character), and records a mark for each markEvery
// bytes. A mark is a boundary of that walk; a newline is never part of a
// longer character, so line starts are boundaries too, and the characters
// between two boundaries are the difference of their counts.
func runeMarks(data []byte) []runeMark {
	marks := make([]runeMark, 0, len(data)/markEvery+1)
	runes := 0
	for off := 0; ; runes++ {
		for len(marks)*markEvery <= off {
			marks = append(marks, runeMark{off, runes})
		}
		if off >= len(data) {
			return marks
		}
		if data[off] < utf8.RuneSelf {
			off++
			continue
		}
		_, size := utf8.DecodeRune(data[off:])
		off += size
	}
}

// runesBefore is the number of characters in data[:off].
func (ix *LineIndex) runesBefore(off int) int {
	if ix.marks == nil {
		return off
	}
	m := ix.marks[off/markEvery]
	if m.off > off { // off falls inside the character that straddles the mark
		m = ix.marks[off/markEvery-1]
	}
	return m.runes + utf8.RuneCount(ix.data[m.off:off])
}

// Pos returns the position of byte offset off.
func (ix *LineIndex) Pos(off int) diag.Pos {
	line, col := ix.lineCol(off)
	return diag.Pos{File: ix.file, Line: line, Column: col}
}

// Loc is Pos as a Loc, without interning the file name again.
func (ix *LineIndex) Loc(off int) Loc {
	line, col := ix.lineCol(off)
	return Loc{file: ix.handle, line: int32(line), col: int32(col)}
}

// locFrom is Loc for a walk through the file in increasing offsets: *line
// is the 0-based line of the walk's last offset (0 to start with), the
// line off is searched from and then set to. A value's line is then
// nearly always its predecessor's or the next: a search of every line for
// each value was about 5 % of a large validation.
func (ix *LineIndex) locFrom(off int, line *int) Loc {
	off = min(max(off, 0), len(ix.data))
	lo := *line
	switch last := len(ix.starts) - 1; {
	case lo < 0 || lo > last || ix.starts[lo] > off:
		lo = ix.lineSearch(off, 0)
	case lo == last || ix.starts[lo+1] > off:
	case lo+1 == last || ix.starts[lo+2] > off:
		lo++
	default:
		lo = ix.lineSearch(off, lo+2)
	}
	*line = lo
	col := ix.runesBefore(off) - ix.runesBefore(ix.starts[lo]) + 1
	return Loc{file: ix.handle, line: int32(lo + 1), col: int32(col)}
}

// lineCol is the 1-based line and column of byte offset off.
func (ix *LineIndex) lineCol(off int) (int, int) {
	if off < 0 {
		off = 0
	}
	if off > len(ix.data) {
		off = len(ix.data)
	}
	lo := ix.lineSearch(off, 0)
	col := ix.runesBefore(off) - ix.runesBefore(ix.starts[lo]) + 1
	return lo + 1, col
}

// lineSearch is the 0-based line of off (within the data), which is lo or
// later.
func (ix *LineIndex) lineSearch(off, lo int) int {
	hi := len(ix.starts) - 1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ix.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// LineOffset returns the byte offset, within line n, of 1-based column col
// (a column past the end of the line gives the line's length), the inverse
// of Pos. Like Pos it costs O(log lines), whatever the line's length.
func (ix *LineIndex) LineOffset(n, col int) (int, bool) {
	if n < 1 || n > len(ix.starts) {
		return 0, false
	}
	start := ix.starts[n-1]
	end := len(ix.data)
	if n < len(ix.starts) {
		end = ix.starts[n] - 1
	}
	want := col - 1 // characters before the column
	if want <= 0 {
		return 0, true
	}
	if ix.marks == nil {
		return min(want, end-start), true
	}
	target := ix.runesBefore(start) + want
	// The last mark at or before the target, then count on from it.
	lo, hi := start/markEvery, end/markEvery
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ix.marks[mid].runes <= target && ix.marks[mid].off <= end {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	off, runes := ix.marks[lo].off, ix.marks[lo].runes
	if off < start {
		off, runes = start, ix.runesBefore(start)
	}
	for off < end && runes < target {
		if ix.data[off] < utf8.RuneSelf {
			off++
		} else {
			_, size := utf8.DecodeRune(ix.data[off:end])
			off += size
		}
		runes++
	}
	return off - start, true
}

// LineStart returns the byte offset in the file where 1-based line n starts.
func (ix *LineIndex) LineStart(n int) (int, bool) {
	if n < 1 || n > len(ix.starts) {
		return 0, false
	}
	return ix.starts[n-1], true
}

// Line returns the text of 1-based line n, without its line ending. A
// short line is copied; a long one shares memory with the index: the file
// is copied to a string once, not a line per call, as a report with a
// diagnostic per value of a minified file asks for the same long line again
// and again (and a copy of the file made for a report of many short lines
// would double what the file holds).
func (ix *LineIndex) Line(n int) (string, bool) {
	if n < 1 || n > len(ix.starts) {
		return "", false
	}
	start := ix.starts[n-1]
	end := len(ix.data)
	if n < len(ix.starts) {
		end = ix.starts[n] - 1
	}
	if end-start <= shortLine {
		if l := ix.last.Load(); l != nil && l.n == n {
			return l.text, true
		}
		l := &copiedLine{n, strings.TrimSuffix(string(ix.data[start:end]), "\r")}
		ix.last.Store(l)
		return l.text, true
	}
	ix.textOnce.Do(func() { ix.text = string(ix.data) })
	return strings.TrimSuffix(ix.text[start:end], "\r"), true
}

// shortLine is the longest line Line copies.
const shortLine = 1 << 10

// ParseJSON reads data, the content of file. With comments true it accepts
// JSON with comments and trailing commas (JSONC, as .NET configuration files
// allow); otherwise only strict JSON. A syntax error is returned as a
// json-syntax diagnostic at the offending character.
func ParseJSON(file string, data []byte, comments bool) (*Node, *diag.Diagnostic) {
	return ParseJSONNesting(file, data, comments, OwnNesting)
}

// ParseJSONNesting is ParseJSON for a file that its reader lets nest as
// deep as nesting says.
func ParseJSONNesting(file string, data []byte, comments bool, nesting Nesting) (*Node, *diag.Diagnostic) {
	root, _, d := parseJSON(file, data, comments, shallowPath{}, nesting)
	return root, d
}

// Source is a parsed file kept so that any of its values can be built
// again (Build) instead of held: the compiler drops the trees of the host
// configuration's servers when it has read the file and builds each again
// when the server is bound.
type Source struct {
	ix *LineIndex
	// data is the text the tree was built from: the file, or JSONC with
	// its comments and trailing commas blanked.
	data []byte
	keys map[string]string
}

// Build builds again the value that starts at byte start (its Node's
// Start): a tree equal to the one ParseJSONSource gave, Node for Node.
func (s *Source) Build(start int32) *Node {
	// The stacks sized for an entry of a configuration, not grown from
	// nothing for each entry.
	b := &builder{ix: s.ix, data: s.data, off: int(start), keys: s.keys, at: -1,
		members: make([]Member, 0, 16), elems: make([]*Node, 0, 8)}
	return b.value()
}

// build builds the whole text, shallow under stub when it has keys.
func (s *Source) build(stub shallowPath) (*Node, bool) {
	if stub.keys == nil {
		return s.Build(0), false
	}
	return buildShallow(s, stub.keys, stub.fold)
}

// ParseJSONSource is ParseJSON, and gives the Source the tree was built
// from, or nil when it was not built from one (a JSONC file only hujson
// reads).
func ParseJSONSource(file string, data []byte, comments bool) (*Node, *Source, *diag.Diagnostic) {
	return parseJSON(file, data, comments, shallowPath{}, OwnNesting)
}

// ParseJSONShallow is ParseJSONSource, but the members of the object at
// path (keys from the root) whose values are objects are not built: each
// is a Node of Kind Object with its position and byte span only (no
// members), which Source.Build builds whole. settings.json's servers are
// built one batch at a time so, never all at once. When the Source is nil
// (a JSONC file only hujson reads) the tree is whole.
//
// With fold, the keys of path compare case-insensitively (a .NET
// configuration file: Mcp:Servers is also "MCP": {"servers": …}). Files
// nested deeper than nesting allows are refused.
func ParseJSONShallow(file string, data []byte, comments bool, path []string, fold bool, nesting Nesting) (*Node, *Source, *diag.Diagnostic) {
	return parseJSON(file, data, comments, shallowPath{path, fold}, nesting)
}

// shallowPath is where ParseJSONShallow does not build objects.
type shallowPath struct {
	keys []string
	fold bool
}

func parseJSON(file string, data []byte, comments bool, stub shallowPath, nesting Nesting) (*Node, *Source, *diag.Diagnostic) {
	ix := NewLineIndex(file, data)
	syntax := func(off int, msg, suggestion string) *diag.Diagnostic {
		d := rules.JSONSyntax.At(ix.Pos(off), msg, suggestion)
		return &d
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return nil, nil, syntax(off, "the file is not valid UTF-8", "save the file as UTF-8")
	}
	if off, ok := DeeperThan(data, comments, nesting.Max); ok {
		msg := fmt.Sprintf("invalid JSON: nested deeper than %d levels", nesting.Max)
		if nesting.Reader != "" {
			msg += ", " + nesting.Reader
		}
		return nil, nil, syntax(off, msg, "a configuration file never needs this many levels: look for a missing closing bracket")
	}
	// Strict JSON is what encoding/json accepts, and its message is the
	// one an operator sees. json.Valid scans without building anything;
	// only a file it refuses is decoded again for the message. Valid JSON
	// (a JSONC file without comments or trailing commas too) is built into
	// Nodes directly (build.go), and so is JSONC once its comments and
	// trailing commas are blanked (jsonc.go); hujson parses the rest (a
	// file with a syntax error), for its message.
	var pyLits map[int32]string
	if nesting.Python && !comments {
		if std, lits := standInPyConstants(data); lits != nil && json.Valid(std) {
			data, pyLits = std, lits
		}
	}
	if json.Valid(data) {
		src := &Source{ix: ix, data: data, keys: map[string]string{}}
		root, overflow := src.build(stub)
		if pyLits != nil {
			restorePyConstants(root, pyLits)
		}
		if !comments && !nesting.Python && (overflow || overflowsFloat64(root)) {
			// Valid JSON, but encoding/json refuses a number no float64 holds.
			return nil, nil, strictJSONError(ix, data)
		}
		return root, src, nil
	}
	if !comments {
		return nil, nil, strictJSONError(ix, data)
	}
	// JSONC with comments or trailing commas: built from the same text with
	// those blanked, when that is valid JSON (jsonc.go).
	if std, ok := standardize(data); ok && json.Valid(std) {
		src := &Source{ix: ix, data: std, keys: map[string]string{}}
		root, _ := src.build(stub)
		return root, src, nil
	}
	v, err := hujson.Parse(data)
	if err != nil {
		off, msg := hujsonErrorOffset(ix, err)
		return nil, nil, syntax(off, "invalid JSON: "+msg, unclosedHint(ix, data, off, comments))
	}
	return convert(ix, &v), nil, nil
}

// strictJSONError is the json-syntax diagnostic for data, which
// encoding/json refuses (nil if it does not).
func strictJSONError(ix *LineIndex, data []byte) *diag.Diagnostic {
	syntax := func(off int, msg, suggestion string) *diag.Diagnostic {
		d := rules.JSONSyntax.At(ix.Pos(off), msg, suggestion)
		return &d
	}
	var scratch any
	err := json.Unmarshal(data, &scratch)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset)
		msg := se.Error()
		// encoding/json reports the offset after the bad byte.
		if off > 0 && off <= len(data) && !strings.Contains(msg, "unexpected end") {
			off--
		}
		sugg := ""
		switch {
		case bytes.HasPrefix(data[min(off, len(data)):], []byte("\ufeff")):
			// The reader dropped the file's one byte order mark; this is another.
			sugg = "this is a byte order mark (U+FEFF) after the one a file may start with: remove it"
		case off < len(data) && (data[off] == '/' || data[off] == '}' || data[off] == ']'):
			sugg = "this file is strict JSON: remove comments and trailing commas"
		}
		if sugg == "" {
			sugg = unclosedHint(ix, data, off, false)
		}
		return syntax(off, "invalid JSON: "+msg, sugg)
	}
	return syntax(len(data), "invalid JSON: "+err.Error(), "")
}

// overflowsFloat64 reports whether a number in n is beyond float64, which
// encoding/json refuses when it decodes (it needs an exponent or 300 digits).
func overflowsFloat64(n *Node) bool {
	switch n.Kind {
	case Number:
		return overflows(n.Text)
	case Array:
		for _, e := range n.Elems {
			if overflowsFloat64(e) {
				return true
			}
		}
	case Object:
		for i := range n.Members {
			if overflowsFloat64(n.Members[i].Value) {
				return true
			}
		}
	}
	return false
}

// overflows reports whether the number literal holds no float64.
func overflows(lit string) bool {
	if len(lit) > 300 || strings.ContainsAny(lit, "eE") {
		_, err := strconv.ParseFloat(lit, 64)
		return err != nil
	}
	return false
}

// unquote decodes a JSON string literal that hujson has validated. Without
// a backslash the text is the bytes between the quotes (the file is valid
// UTF-8), so only an escaped string goes through encoding/json again.
func unquote(lit hujson.Literal) string {
	if len(lit) >= 2 && bytes.IndexByte(lit[1:len(lit)-1], '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	return lit.String()
}

// unclosedHint names the innermost bracket still open when a file ends
// early: the missing closer usually belongs to it.
func unclosedHint(ix *LineIndex, data []byte, errOff int, comments bool) string {
	if errOff < len(data) && strings.TrimSpace(string(data[errOff:])) != "" {
		return ""
	}
	var stack []int
	comment, inString := brackets(data, comments, func(i int, c byte) bool {
		if c == '{' || c == '[' {
			stack = append(stack, i)
		} else if len(stack) > 0 {
			stack = stack[:len(stack)-1]
		}
		return true
	})
	if comment >= 0 {
		return "close the comment that starts at " + ix.Pos(comment).String()
	}
	if inString {
		return "a string is not closed: add the missing \""
	}
	if len(stack) == 0 {
		return ""
	}
	open := stack[len(stack)-1]
	closer := "}"
	if data[open] == '[' {
		closer = "]"
	}
	return fmt.Sprintf("add the %s that closes the %c opened at %s", closer, data[open], ix.Pos(open))
}

// hujsonErrorOffset recovers the byte offset from hujson's
// "hujson: line L, column C: msg" errors (C counts bytes).
func hujsonErrorOffset(ix *LineIndex, err error) (int, string) {
	var line, col int
	msg := err.Error()
	if _, e := fmt.Sscanf(msg, "hujson: line %d, column %d:", &line, &col); e != nil || line < 1 || line > len(ix.starts) {
		return len(ix.data), strings.TrimPrefix(msg, "hujson: ")
	}
	if i := strings.Index(msg, ": "); i >= 0 {
		if j := strings.Index(msg[i+2:], ": "); j >= 0 {
			msg = msg[i+2+j+2:]
		}
	}
	msg = strings.ReplaceAll(msg, "unexpected EOF", "unexpected end of file")
	off := ix.starts[line-1] + col - 1
	if off > len(ix.data) {
		off = len(ix.data)
	}
	return off, msg
}

// convert turns hujson's tree into Nodes. It consumes the tree: each part
// is dropped once converted, so that the two trees of a large file are not
// both whole at once.
func convert(ix *LineIndex, v *hujson.Value) *Node {
	n := convertValue(ix, v)
	n.Start, n.End = int32(v.StartOffset), int32(v.EndOffset)
	return n
}

func convertValue(ix *LineIndex, v *hujson.Value) *Node {
	pos := ix.Loc(v.StartOffset)
	switch t := v.Value.(type) {
	case *hujson.Object:
		n := &Node{Kind: Object, Loc: pos, Members: make([]Member, 0, len(t.Members))}
		for i := range t.Members {
			m := &t.Members[i]
			key, _ := m.Name.Value.(hujson.Literal)
			n.Members = append(n.Members, Member{
				Key:    unquote(key),
				KeyLoc: ix.Loc(m.Name.StartOffset),
				Value:  convert(ix, &m.Value),
			})
			*m = hujson.ObjectMember{}
		}
		return n
	case *hujson.Array:
		n := &Node{Kind: Array, Loc: pos, Elems: make([]*Node, 0, len(t.Elements))}
		for i := range t.Elements {
			n.Elems = append(n.Elems, convert(ix, &t.Elements[i]))
			t.Elements[i] = hujson.Value{}
		}
		return n
	case hujson.Literal:
		switch t.Kind() {
		case 'n':
			return &Node{Kind: Null, Loc: pos}
		case 't', 'f':
			return &Node{Kind: Bool, Loc: pos, Bool: t.Bool()}
		case '"':
			return &Node{Kind: String, Loc: pos, Text: unquote(t), TextOffset: 1}
		default:
			return &Node{Kind: Number, Loc: pos, Text: string(t)}
		}
	}
	return &Node{Kind: Null, Loc: pos}
}

// DeeperThan finds the first opening bracket of the JSON text data nested
// deeper than max levels, skipping strings (and comments when allowed).
// Recursive parsers need this check first: a few MB of brackets overflow
// their stack.
func DeeperThan(data []byte, comments bool, max int) (int, bool) {
	depth, at := 0, -1
	brackets(data, comments, func(i int, c byte) bool {
		if c == '}' || c == ']' {
			depth--
			return true
		}
		if depth++; depth > max {
			at = i
			return false
		}
		return true
	})
	return at, at >= 0
}

// brackets calls visit with the offset of each bracket ({ [ } ]) of data
// outside strings, and outside comments when they are allowed, until visit
// returns false. It returns the offset of a block comment that is never
// closed (-1 if none) and whether a string is open at the end.
func brackets(data []byte, comments bool, visit func(i int, c byte) bool) (openComment int, inString bool) {
	return outsideStrings(data, comments, "", visit)
}

// outsideStrings is brackets, visiting the bytes of also too.
func outsideStrings(data []byte, comments bool, also string, visit func(i int, c byte) bool) (openComment int, inString bool) {
	escaped := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case comments && c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case comments && c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return i, false
			}
			i += end + 3
		case c == '{' || c == '[' || c == '}' || c == ']' || also != "" && strings.IndexByte(also, c) >= 0:
			if !visit(i, c) {
				return -1, false
			}
		}
	}
	return -1, inString
}
