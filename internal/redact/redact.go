// Package redact hides known secret values in mcpc's output (messages,
// tool results, logs, status), matching whole tokens, and applies that to
// the values of MCP (a tool result, a tool definition, any JSON) string by
// string. It is a leaf: it imports the standard library and the MCP SDK
// (its result and tool types) only. Redaction applies to output only; what
// a server receives is never redacted.
package redact

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces every known secret value in mcpc's output.
const Redacted = "[REDACTED]"

// The rules of output redaction (docs/decisions/0010-output-redaction.md):
//
//   - A known secret is redacted only as a whole token: the characters just
//     before and after it must not continue a word (letters, digits, _),
//     so "python" never turns "python3" into "[REDACTED]3" and a secret
//     "other" leaves "another" alone.
//   - A secret of LongMin bytes or more is redacted wherever it
//     stands, also inside a longer word: such a value is not ordinary text,
//     and there hiding it matters more than the word around it.
//   - A weak value (Weak: shorter than minSecretLen, or a single word
//     of letters shorter than 12 characters, such as "python" or "true") is
//     not redacted at all: it is ordinary text, and redacting it would
//     mangle messages without protecting anything. The compiler warns about
//     a deny-listed variable with such a value (secret-weak).
//   - A secret that spans several lines (a PEM key) is also known line by
//     line, so output that is handled a line at a time (stderr) hides each
//     of its lines.
//   - Each secret is known in its JSON-escaped forms too.
//
// Redaction applies to output only. What a server receives is never
// redacted: a plan holds references to secrets, never their values.
const (
	// minSecretLen: shorter values are too common to redact (SPEC §2.4).
	minSecretLen = 4
	// weakWordLen: a value of letters only, shorter than this, is a word.
	weakWordLen = 12
	// LongMin is the length from which a secret is redacted also
	// inside a longer word.
	LongMin = 16
)

// Weak reports whether a secret value is too weak to redact: shorter
// than 4 characters, or letters only and shorter than 12 (a dictionary-like
// word). Such values are left in output as they are.
func Weak(s string) bool {
	n := utf8.RuneCountInString(strings.TrimSpace(s))
	if n < minSecretLen {
		return true
	}
	if n >= weakWordLen {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// Redactor replaces known secret values with [REDACTED], also in their
// JSON-escaped form, following the rules above. The zero value redacts
// nothing. It is immutable once built and safe for concurrent use.
type Redactor struct {
	forms []secretForm // longest first

	piecesOnce sync.Once
	pieces     map[string]struct{} // for RedactFragments
}

// secretForm is one text to replace: a secret, one of its escaped forms,
// or one line of a multi-line secret.
type secretForm struct {
	text string
	// secret is the index of the secret (in New's argument) that
	// this form stands for.
	secret int
	// anywhere: long enough to redact inside a word too.
	anywhere bool
	// wordStart, wordEnd: the form begins (ends) with a word character, so
	// a match must not be preceded (followed) by one.
	wordStart, wordEnd bool
}

// New builds a redactor for the given secret values. Weak values
// (Weak) are left out.
func New(secrets []string) *Redactor {
	seen := map[string]bool{}
	var forms []secretForm
	add := func(s string, idx int) {
		if Weak(s) || seen[s] {
			return
		}
		seen[s] = true
		first, _ := utf8.DecodeRuneInString(s)
		last, _ := utf8.DecodeLastRuneInString(s)
		forms = append(forms, secretForm{text: s, secret: idx, anywhere: len(s) >= LongMin,
			wordStart: isWordRune(first), wordEnd: isWordRune(last)})
	}
	for i, s := range secrets {
		variants := []string{s}
		if strings.ContainsAny(s, "\r\n") {
			// A multi-line secret is known line by line too.
			for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
				variants = append(variants, strings.TrimSpace(line))
			}
		}
		for _, v := range variants {
			add(v, i)
			if b, err := json.Marshal(v); err == nil {
				add(string(b[1:len(b)-1]), i)
			}
		}
	}
	// Longest first, so that a secret containing another is replaced whole.
	sort.Slice(forms, func(i, j int) bool {
		if len(forms[i].text) != len(forms[j].text) {
			return len(forms[i].text) > len(forms[j].text)
		}
		return forms[i].text < forms[j].text
	})
	return &Redactor{forms: forms}
}

// isWordRune reports whether r continues a word: a letter, a digit or _.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// span is one match of a form in a text: s[start:end].
type span struct{ start, end, secret int }

// find returns the non-overlapping matches of the forms in s, in order;
// where matches overlap, the earlier one wins, then the longer one.
func (r *Redactor) find(s string) []span {
	if r.Empty() {
		return nil
	}
	var all []span
	for fi := range r.forms {
		f := &r.forms[fi]
		for from := 0; from+len(f.text) <= len(s); {
			i := strings.Index(s[from:], f.text)
			if i < 0 {
				break
			}
			start := from + i
			end := start + len(f.text)
			if f.matchesAt(s, start, end) {
				all = append(all, span{start, end, f.secret})
				from = end
			} else {
				from = start + 1
			}
		}
	}
	if len(all) < 2 {
		return all
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].start != all[j].start {
			return all[i].start < all[j].start
		}
		return all[i].end > all[j].end
	})
	out := all[:0]
	last := -1
	for _, sp := range all {
		if sp.start >= last {
			out = append(out, sp)
			last = sp.end
		}
	}
	return out
}

// matchesAt reports whether the form found at s[start:end] is a whole
// token there (or may stand anywhere).
func (f *secretForm) matchesAt(s string, start, end int) bool {
	if f.anywhere {
		return true
	}
	if f.wordStart && start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:start]); isWordRune(r) {
			return false
		}
	}
	if f.wordEnd && end < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[end:]); isWordRune(r) {
			return false
		}
	}
	return true
}

// Redact returns s with every known secret replaced.
func (r *Redactor) Redact(s string) string {
	spans := r.find(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Redacted)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// Contains reports whether s holds a known secret (as Redact would find
// it), and which: the index into the values New was given.
func (r *Redactor) Contains(s string) (int, bool) {
	spans := r.find(s)
	if len(spans) == 0 {
		return 0, false
	}
	return spans[0].secret, true
}

// Longest is the length in bytes of the longest text the redactor
// replaces (0 when it replaces nothing): a cut that keeps this much more
// than it shows cannot split a secret inside what it shows.
func (r *Redactor) Longest() int {
	if r.Empty() {
		return 0
	}
	return len(r.forms[0].text)
}

// Empty reports whether there is nothing to redact.
func (r *Redactor) Empty() bool { return r == nil || len(r.forms) == 0 }

// FragmentMin is the shortest piece of a secret that RedactFragments hides.
const FragmentMin = 8

// RedactFragments is Redact, and then also hides every run of FragmentMin
// or more bytes that is a piece of a known secret. It is for text that
// another library may have cut in the middle of a secret before mcpc saw
// it, such as a JSON decoder's error quoting the first 32 bytes of a value:
// Redact matches whole secrets only. Use it on such messages alone; it
// also hides ordinary words that happen to be pieces of a secret.
//
// A run is hidden if each of its FragmentMin-byte windows occurs in some
// secret, so its cost is linear in len(s), however long the message.
func (r *Redactor) RedactFragments(s string) string {
	s = r.Redact(s)
	if r.Empty() || len(s) < FragmentMin {
		return s
	}
	r.piecesOnce.Do(r.buildPieces)
	end := -1 // the end of the run being hidden
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i+FragmentMin <= len(s) {
			if _, ok := r.pieces[s[i:i+FragmentMin]]; ok {
				if i > end { // a run that touches the last one continues it
					b.WriteString(Redacted)
				}
				end = i + FragmentMin
				continue
			}
		}
		if i >= end {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// buildPieces indexes every FragmentMin-byte window of every secret form.
func (r *Redactor) buildPieces() {
	r.pieces = map[string]struct{}{}
	for _, f := range r.forms {
		for j := 0; j+FragmentMin <= len(f.text); j++ {
			r.pieces[f.text[j:j+FragmentMin]] = struct{}{}
		}
	}
}

// RedactAt redacts s and maps the 1-based rune column col of s to the same
// place in the result (a column inside a secret maps to its [REDACTED]).
func (r *Redactor) RedactAt(s string, col int) (string, int, bool) {
	if r.Empty() {
		return s, col, true
	}
	prefixRunes := col - 1
	if prefixRunes < 0 {
		prefixRunes = 0
	}
	// Byte offset of the column.
	off := len(s)
	for i := range s {
		if prefixRunes == 0 {
			off = i
			break
		}
		prefixRunes--
	}
	out := r.Redact(s)
	before := r.Redact(s[:off])
	// A secret that straddles the column: point at its start.
	if !strings.HasPrefix(out, before) {
		for len(before) > 0 && !strings.HasPrefix(out, before) {
			before = before[:len(before)-1]
		}
	}
	return out, utf8.RuneCountInString(before) + 1, true
}
